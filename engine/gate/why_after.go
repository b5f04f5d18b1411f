package gate

import (
	"context"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// afterBlocker is the unit of an after: edge's upstream that holds back a
// unit with window w, given the edge's unsatisfied verdict v: in the run
// that decided the edge, the upstream's failed unit (the one at w first,
// else the first in that run's window) when it ended FAILED, its held unit
// when it was SKIPPED; with no run over w, the upstream's own unit at w
// (or its missing window), which is what has to run first. nil when no
// unit can be named: an upstream that succeeded where the edge wants a
// failure holds nothing that a fix would release.
func (an *analysis) afterBlocker(ctx context.Context, v AfterVerdict, w state.Window) (*chainStep, error) {
	um, _, err := an.model(ctx, v.Upstream)
	if err != nil {
		return nil, err
	}
	at := w
	if um.Temporality == spec.Timeless {
		at = state.Window{}
	}
	if v.Run == 0 {
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name, Window: at})
		if err != nil {
			return nil, err
		}
		return &chainStep{m: um, link: linkOf(um, at, u)}, nil
	}
	var want state.UnitStatus
	switch v.Outcome {
	case graph.StatusFailed.String():
		want = state.Failed
	case graph.StatusSkipped.String():
		want = state.Blocked
	default:
		return nil, nil
	}
	run, err := an.g.Store.GetRun(ctx, v.Run)
	if err != nil {
		return nil, err
	}
	scopes := []state.Window{at}
	if !at.IsZero() {
		scopes = append(scopes, run.Window) // zero: every unit
	}
	for _, in := range scopes {
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name, Window: in, Statuses: []state.UnitStatus{want}})
		if err != nil {
			return nil, err
		}
		if u != nil {
			return &chainStep{m: um, link: linkOf(um, u.Window, u)}, nil
		}
	}
	return nil, nil
}
