package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// checkOutdatedRequest refuses what --outdated cannot mean: it rebuilds in
// bulldozer mode only (discover never re-runs an applied unit, torch
// rebuilds everything), and the windows built on outdated ones downstream
// are not computed yet, so --downstream would rebuild nothing more.
func checkOutdatedRequest(req RunRequest, mode spec.StateMode) error {
	if req.Mode != "" && mode != spec.Bulldozer {
		return fmt.Errorf("--outdated rebuilds in bulldozer mode; it cannot be combined with --mode %s", mode)
	}
	if req.Downstream {
		return errors.New("--outdated cannot be combined with --downstream yet: windows built on outdated ones are not traced; run the downstream models with their own --outdated, or a bulldozer over the window")
	}
	if req.IntervalOverride != nil {
		return errors.New("--outdated cannot be combined with --interval-override: it rebuilds the windows as they are")
	}
	return nil
}

// planOutdated plans one model of an --outdated request: its applied units
// whose recorded fingerprint is known and not the spec's (inside the run
// window, when one is given) are reset to pending and run. A model with
// none is left out of the plan (nil) unless it was named.
func (e *Engine) planOutdated(ctx context.Context, m *spec.Model, req RunRequest) (*ModelPlan, error) {
	mp := &ModelPlan{Model: m.Name, Temporality: m.Temporality, Mode: spec.Bulldozer, Outdated: true,
		resetFrom: []state.UnitStatus{state.Applied}}
	if m.Chunking != nil {
		mp.Flexibility, mp.Chunk = m.Chunking.Flexibility, m.Chunking.Interval
	}
	current := spec.Fingerprint(m)
	var w state.Window
	if req.Window != nil && m.Temporality == spec.Temporal {
		w = *req.Window
	}
	all, err := e.units(ctx, m.Name, w)
	if err != nil {
		return nil, err
	}
	var hull state.Window
	for _, u := range all {
		if UnitDefinition(u, current) != DefinitionOutdated || (!w.IsZero() && !inside(w)(u)) {
			continue
		}
		mp.Reset = append(mp.Reset, u.Window)
		if !u.Window.IsZero() {
			hull = hullOf(hull, u.Window)
		}
	}
	if len(mp.Reset) == 0 && !named(req, m.Name) {
		return nil, nil
	}
	mp.Run = mp.Reset
	if !hull.IsZero() {
		mp.Window = &hull
	}
	return mp, nil
}

func named(req RunRequest, model string) bool {
	for _, n := range req.Models {
		if n == model {
			return true
		}
	}
	return false
}

func hullOf(a, b state.Window) state.Window {
	if a.IsZero() {
		return b
	}
	if b.Since.Before(a.Since) {
		a.Since = b.Since
	}
	if b.Until.After(a.Until) {
		a.Until = b.Until
	}
	return a
}

// resetOutdated sets mp's outdated units back to pending, a span of
// adjacent windows at a time (a grid's adjacent windows hold no other unit
// between them), and refuses, like every reset, when the store no longer
// holds what the plan saw.
func (e *Engine) resetOutdated(ctx context.Context, mp ModelPlan, runID int64, now time.Time) (int, error) {
	total := 0
	for _, span := range adjacentSpans(mp.Reset) {
		n, err := e.Store.SetStatus(ctx, state.StatusChange{Env: e.Env.Suffix, Model: mp.Model, Window: span.w,
			From: mp.resetFrom, To: state.Pending, RunID: runID, Now: now})
		if err != nil {
			return total, fmt.Errorf("model %s: resetting its outdated units to pending: %w", mp.Model, err)
		}
		if n != span.n {
			return total, fmt.Errorf("model %s: reset changed %d units of %s where the plan said %d: the store changed while the plan was applied; plan again", mp.Model, n, span.w, span.n)
		}
		total += n
	}
	return total, nil
}

type outdatedSpan struct {
	w state.Window
	n int
}

// adjacentSpans merges windows (in window order) that touch end to start.
func adjacentSpans(ws []state.Window) []outdatedSpan {
	var out []outdatedSpan
	for _, w := range ws {
		if k := len(out) - 1; k >= 0 && !w.IsZero() && out[k].w.Until.Equal(w.Since) {
			out[k].w.Until = w.Until
			out[k].n++
			continue
		}
		out = append(out, outdatedSpan{w: w, n: 1})
	}
	return out
}

// outdatedScopes narrows each task of an --outdated run to the hull of its
// model's outdated windows, so it claims what the plan reset.
func outdatedScopes(scopes []runScope, p *Plan) {
	hulls := map[string]*state.Window{}
	for _, mp := range p.Models {
		hulls[mp.Model] = mp.Window
	}
	for i := range scopes {
		if h := hulls[scopes[i].model.Name]; h != nil {
			scopes[i].window = *h
		}
	}
}
