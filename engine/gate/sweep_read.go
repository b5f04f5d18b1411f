package gate

import (
	"context"
	"fmt"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// sweepQuery is what a sweep of names reads: their units that are not
// applied (every model's when f selects all of them) and, of each gated
// upstream of theirs, the applied rows its most demanding edge needs
// (sourceNeed).
func sweepQuery(g *Reader, narrowed bool, names []string, defs map[string]*spec.Model, problems map[string]error) state.SweepQuery {
	q := state.SweepQuery{Applied: map[string]state.SweepNeed{}}
	if narrowed {
		q.Outstanding = append([]string{}, names...)
	}
	for _, name := range names {
		m := defs[name]
		if m == nil || problems[name] != nil {
			continue
		}
		for _, src := range g.gatedSources(m) {
			q.Applied[src.Name] = max(q.Applied[src.Name], sourceNeed(src))
		}
	}
	return q
}

// sourceNeed is how much of its upstream's applied rows the gated source
// src reads (see newSweepEdge and sweepEdge.evalAt): EXISTS only the
// registration; EXACT the row at exactly a window; a freshness limit the
// applied_at of the rows a window overlaps; ENCAPSULATE, THROUGH and WHOLE
// otherwise only the coverage. A timeless upstream's existence row is kept
// by every need but NeedNone.
func sourceNeed(src spec.Source) state.SweepNeed {
	switch {
	case src.Contract == spec.Exists:
		return state.NeedNone
	case src.Contract == spec.Exact:
		return state.NeedRows
	case src.Freshness != nil:
		return state.NeedFreshness
	}
	return state.NeedCoverage
}

// gateUnits reads what q selects, by model: in one pass when the store is
// a state.GateSweepReader, else every unit (sweepUnits) reduced in memory
// the same way.
func (g *Reader) gateUnits(ctx context.Context, recs []state.ModelRecord, q state.SweepQuery) (map[string][]state.SweepUnit, error) {
	gr, ok := g.Store.(state.GateSweepReader)
	if !ok {
		units, err := g.sweepUnits(ctx, recs)
		if err != nil {
			return nil, err
		}
		judged := map[string]bool{}
		for _, name := range q.Outstanding {
			judged[name] = true
		}
		for name, us := range units {
			units[name] = state.ReduceSweep(us, q.Outstanding == nil || judged[name], q.Applied[name])
		}
		return units, nil
	}
	out := make(map[string][]state.SweepUnit, len(recs))
	err := gr.SweepGate(ctx, g.Env.Suffix, q, func(model string, us []state.SweepUnit) error {
		out[model] = us
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the units of %s: %w", g.Env, err)
	}
	return out, nil
}
