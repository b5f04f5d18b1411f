package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// checkOutdatedRequest refuses what --outdated cannot mean: it rebuilds in
// bulldozer mode only (discover never re-runs an applied unit, torch
// rebuilds everything), and the windows as they are.
func checkOutdatedRequest(req RunRequest, mode spec.StateMode) error {
	if req.Mode != "" && mode != spec.Bulldozer {
		return fmt.Errorf("--outdated rebuilds in bulldozer mode; it cannot be combined with --mode %s", mode)
	}
	if req.IntervalOverride != nil {
		return errors.New("--outdated cannot be combined with --interval-override: it rebuilds the windows as they are")
	}
	return nil
}

// outdatedModels resolves an --outdated request: the seed models (named,
// the pipeline's, or every model when none is named), the trace of their
// outdated windows downstream, and the models to plan in spec order — the
// seeds, and with --downstream every spec model the trace finds built on
// them.
func (e *Engine) outdatedModels(ctx context.Context, req RunRequest) ([]string, *OutdatedTrace, map[string]bool, error) {
	down := req
	down.Downstream = false
	names, err := e.resolveModels(down)
	if err != nil {
		return nil, nil, nil, err
	}
	seeds := map[string]bool{}
	for _, n := range names {
		seeds[n] = true
	}
	var only []string
	if len(req.Models) > 0 || req.Pipeline != "" {
		only = names
	}
	trace, err := e.TraceOutdated(ctx, only, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if !req.Downstream {
		return names, trace, seeds, nil
	}
	var out []string
	for _, m := range e.spec.Models {
		if seeds[m.Name] || len(trace.Of(m.Name).builtOn()) > 0 {
			out = append(out, m.Name)
		}
	}
	return out, trace, seeds, nil
}

// planOutdated plans one model of an --outdated request from the trace: a
// seed's outdated units and, with --downstream, the units built on outdated
// ones (inside the run window, when one is given) are reset to pending and
// run. A model with none is left out of the plan (nil) unless it was named.
func (e *Engine) planOutdated(m *spec.Model, req RunRequest, mt *ModelTrace, seed bool) (*ModelPlan, error) {
	mp := &ModelPlan{Model: m.Name, Temporality: m.Temporality, Mode: spec.Bulldozer, Outdated: true,
		resetFrom: []state.UnitStatus{state.Applied}}
	if m.Chunking != nil {
		mp.Flexibility, mp.Chunk = m.Chunking.Flexibility, m.Chunking.Interval
	}
	var w state.Window
	if req.Window != nil && m.Temporality == spec.Temporal {
		w = *req.Window
	}
	keep := func(u state.Window) bool { return w.IsZero() || w.Covers(u) }
	own := map[[2]int64]bool{} // by window, in µs: time.Time is no map key
	key := func(u state.Window) [2]int64 { return [2]int64{u.Since.UnixMicro(), u.Until.UnixMicro()} }
	if seed && mt != nil {
		for _, u := range mt.Outdated {
			own[key(u)] = true
		}
	}
	var g *state.Grid
	if m.Chunking != nil && !m.Flexible() {
		if grid, err := state.NewGrid(m.Chunking.Start, m.Chunking.Interval, m.Chunking.Location); err == nil {
			g = &grid
		}
	}
	var hull state.Window
	for _, u := range mt.Reset() {
		if !keep(u) || !own[key(u)] && !req.Downstream {
			continue
		}
		if own[key(u)] {
			mp.OutdatedUnits++
		} else {
			mp.BuiltOnOutdated++
		}
		mp.Reset.Add(g, u)
		if !u.IsZero() {
			hull = state.Hull(hull, u)
		}
	}
	if mp.Reset.Len() == 0 && !named(req, m.Name) {
		return nil, nil
	}
	mp.Run = mp.Reset.clone()
	if !hull.IsZero() {
		mp.Window = &hull
	}
	// Every unit it resets is applied: a rebuild appends its rows again
	// as a bulldozer does.
	mp.RerunApplied = mp.OutdatedUnits + mp.BuiltOnOutdated
	mp.appendWarning(m)
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

// resetOutdated sets mp's outdated units back to pending, a span of
// adjacent windows at a time (a grid's adjacent windows hold no other unit
// between them), and refuses, like every reset, when the store no longer
// holds what the plan saw.
func (e *Engine) resetOutdated(ctx context.Context, mp ModelPlan, runID int64, now time.Time) (int, error) {
	total := 0
	for _, span := range adjacentSpans(mp.Reset.All()) {
		n, err := e.store.SetStatus(ctx, state.StatusChange{Env: e.opts.Env.Suffix, Model: mp.Model, Window: span.w,
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
func adjacentSpans(ws iter.Seq[state.Window]) []outdatedSpan {
	var out []outdatedSpan
	for w := range ws {
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
