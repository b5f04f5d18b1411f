package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/bollhav/bollhav/state"
)

// ReleasedModel is a model with units a command released: stored blocked,
// their upstreams caught up, now pending for the next run.
type ReleasedModel struct {
	Model string
	// Units counts them; Span runs from the first one's since to the last
	// one's until (zero for a timeless model).
	Units int
	Span  state.Window
}

// releaseCaughtUp re-judges, after a run applied units of models, the
// blocked units downstream of them, and sends those whose gate is
// satisfied now back to pending, their stale reason cleared: no stored
// reason outlives its cause. It returns them by model, for the summary to
// name with the run that picks them up.
func (e *Engine) releaseCaughtUp(ctx context.Context, runID int64, models []string) ([]ReleasedModel, error) {
	units, err := e.gates().CaughtUp(ctx, models)
	if err != nil || len(units) == 0 {
		return nil, err
	}
	byModel := map[string]*ReleasedModel{}
	for _, u := range units {
		n, err := e.store.SetStatus(ctx, state.StatusChange{Env: e.opts.Env.Suffix, Model: u.Model, Window: u.Window,
			From: []state.UnitStatus{state.Blocked}, To: state.Pending, RunID: runID, Now: e.now()})
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
	var out []ReleasedModel
	for _, r := range byModel {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ReleasedModel) int { return cmp.Compare(a.Model, b.Model) })
	return out, nil
}
