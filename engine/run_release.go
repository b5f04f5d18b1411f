package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// ReleasedModel is a model with units a command released: stored blocked
// for a reason that no longer holds (their upstreams caught up), now
// blocked with the reason that says so (gate.ReleasedReason), for the next
// run to apply.
type ReleasedModel struct {
	Model string
	// Units counts them; Span runs from the first one's since to the last
	// one's until (zero for a timeless model).
	Units int
	Span  state.Window
}

// releaseCaughtUp re-judges, after a run applied units of models, the
// blocked units downstream of them and rewrites the reason of those whose
// gate is satisfied now: no stored reason outlives its cause. They stay
// blocked — a worker does not take them, and the UI's Blocked view lists
// them as ready for R — until a run applies them (the summary names it; a
// run with Downstream applies them at once). It returns them by model.
func (e *Engine) releaseCaughtUp(ctx context.Context, runID int64, models []string) ([]ReleasedModel, error) {
	units, err := e.gates().CaughtUp(ctx, models)
	if err != nil || len(units) == 0 {
		return nil, err
	}
	byModel := map[string]*ReleasedModel{}
	for _, u := range units {
		n, err := e.store.SetStatus(ctx, state.StatusChange{Env: e.opts.Env.Suffix, Model: u.Model, Window: u.Window,
			From: []state.UnitStatus{state.Blocked}, To: state.Blocked, Reason: gate.ReleasedReason(runID), RunID: runID, Now: e.now()})
		if err != nil {
			return nil, fmt.Errorf("releasing %s %s: %w", u.Model, u.Window, err)
		}
		if n == 0 {
			continue // changed since it was read: someone else moved it
		}
		r := byModel[u.Model]
		if r == nil {
			r = &ReleasedModel{Model: u.Model, Span: u.Window}
			byModel[u.Model] = r
		}
		r.Units += n
		r.Span = state.Hull(r.Span, u.Window)
	}
	out := make([]ReleasedModel, 0, len(byModel))
	for _, r := range byModel {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ReleasedModel) int { return cmp.Compare(a.Model, b.Model) })
	return out, nil
}

// releasedModels names the models of released, with the hull of their spans.
func releasedModels(released []ReleasedModel) ([]string, state.Window) {
	var names []string
	var span state.Window
	for _, r := range released {
		names = append(names, r.Model)
		span = state.Hull(span, r.Span)
	}
	return names, span
}

// ReleasedRun is what the run released in one run's terms: the models, the
// hull of their windows (zero when every one is timeless) and the units,
// for a summary to name the discover run that applies them.
func (r *RunResult) ReleasedRun() (models []string, span state.Window, units int) {
	models, span = releasedModels(r.Released)
	for _, m := range r.Released {
		units += m.Units
	}
	return models, span, units
}

// FailedThen reports whether the run, or the run it started over what it
// released (Then), failed: the CLI's exit code 1.
func (r *RunResult) FailedThen() bool {
	if r.Failed() {
		return true
	}
	for _, t := range r.Then {
		if t.FailedThen() {
			return true
		}
	}
	return false
}
