package tui

import (
	"context"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
)

// worstUnitAt is where `:why MODEL` without a time looks: inside model's
// failed or blocked unit that holds the most — the failed units of an incident
// of the model (a root: what the incident holds) or its blocked unit with
// the most units waiting downstream; a failed root wins a tie, being the
// cause. Zero for a timeless model, whose one unit needs no time; an
// error naming what to type when the model has nothing failed or blocked.
func worstUnitAt(ctx context.Context, e *engine.Engine, model string) (time.Time, error) {
	if e.Spec() != nil {
		if m := e.Spec().Model(model); m != nil && m.Temporality == spec.Timeless {
			return time.Time{}, nil
		}
	}
	blocked, err := e.Blocked(ctx, gate.BlockedFilter{})
	if err != nil {
		return time.Time{}, err
	}
	var at time.Time
	best := -1
	rep, err := e.IncidentsOf(ctx, blocked)
	if err != nil {
		return time.Time{}, err
	}
	for _, inc := range rep.Incidents {
		if inc.Model == model && (inc.Kind == gate.IncidentFailed || inc.Kind == gate.IncidentGateError) && inc.Blocked > best {
			at, best = inc.Span.Since, inc.Blocked
		}
	}
	for _, b := range blocked {
		if b.Model == model && b.Holds > best {
			at, best = b.Window.Since, b.Holds
		}
	}
	if best < 0 {
		return time.Time{}, fmt.Errorf("%s has no failed or blocked unit: give a time, :why %s 2026-01-01T05:00:00Z", model, model)
	}
	return at, nil
}
