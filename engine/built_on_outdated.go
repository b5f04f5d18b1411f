package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// OutdatedTrace is where an environment's outdated windows reach: per
// model, its own outdated applied units and the applied units built on
// outdated ones upstream, directly or through other models built on them.
// See TraceOutdated.
type OutdatedTrace struct {
	Models map[string]*ModelTrace
}

// ModelTrace is one model's part of an OutdatedTrace.
type ModelTrace struct {
	Model string
	// Outdated lists the model's applied units built under an earlier
	// definition (of a seed model; see TraceOutdated), in window order.
	Outdated []state.Window
	// BuiltOn lists the model's applied units whose gated upstreams have
	// outdated or built-on-outdated windows in the unit's reach, in window
	// order. A unit may be in both lists.
	BuiltOn []BuiltOn

	// tainted is the union of both lists' windows, what reaches further
	// downstream; all marks a timeless model's existence row.
	tainted state.IntervalSet
	first   state.Window // tainted's first range
	all     bool
}

// BuiltOn is an applied unit built on outdated windows upstream.
type BuiltOn struct {
	Window state.Window
	// Upstreams names each gated upstream with such windows in the unit's
	// reach, in declaration order, with up to MaxBuiltOnWindows of them.
	Upstreams []TaintedUpstream
}

// TaintedUpstream is one upstream's outdated or built-on-outdated windows
// in a downstream unit's reach.
type TaintedUpstream = gate.TaintedUpstream

// MaxBuiltOnWindows bounds the ranges a TaintedUpstream keeps: a THROUGH
// reader's reach is every window before its own.
const MaxBuiltOnWindows = 3

// Of returns model's trace, or nil when nothing of it is outdated or built
// on outdated windows.
func (t *OutdatedTrace) Of(model string) *ModelTrace {
	if t == nil {
		return nil
	}
	return t.Models[model]
}

// BuiltOnAt returns the entry of the unit with window w, or nil.
func (mt *ModelTrace) BuiltOnAt(w state.Window) *BuiltOn {
	if mt == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(mt.BuiltOn, w, func(b BuiltOn, w state.Window) int { return compareWindows(b.Window, w) })
	if !ok {
		return nil
	}
	return &mt.BuiltOn[i]
}

// Reset is every window of the trace a rebuild resets: the outdated units
// and those built on outdated ones, once each, in window order.
func (mt *ModelTrace) Reset() []state.Window {
	if mt == nil {
		return nil
	}
	out := slices.Clone(mt.Outdated)
	for _, b := range mt.BuiltOn {
		out = append(out, b.Window)
	}
	slices.SortFunc(out, compareWindows)
	return slices.CompactFunc(out, state.Window.Equal)
}

func compareWindows(a, b state.Window) int {
	if c := a.Since.Compare(b.Since); c != 0 {
		return c
	}
	return a.Until.Compare(b.Until)
}

// TraceOutdated follows outdated windows downstream through the lineage.
// seeds names the models whose outdated units start the trace (every model
// when empty); targets, when given, limits the work to the models they read
// directly or transitively and themselves (a units listing of one model
// needs no more). A downstream unit is built on outdated windows when one of
// its gated upstreams (EXISTS aside: it reads no data; and edges that read
// another environment, which this one's units cannot describe) has an
// outdated or built-on-outdated window in the unit's reach: the windows
// overlapping it for EXACT and ENCAPSULATE, those before its until for
// THROUGH, any for WHOLE or a timeless model. Only applied units are built
// on anything; a pending unit has yet to read its inputs.
//
// It is one grouped count when nothing is outdated, and otherwise one read
// of the applied rows of each model the outdated ones reach.
func (e *Engine) TraceOutdated(ctx context.Context, seeds, targets []string) (*OutdatedTrace, error) {
	trace := &OutdatedTrace{Models: map[string]*ModelTrace{}}
	recs, outdated, current, err := e.outdatedOf(ctx)
	if err != nil {
		return nil, err
	}
	var from []string
	for name := range outdated {
		if len(seeds) == 0 || slices.Contains(seeds, name) {
			from = append(from, name)
		}
	}
	if len(from) == 0 {
		return trace, nil
	}
	defs, lin, err := e.tracedLineage(recs)
	if err != nil {
		return nil, err
	}
	reach := map[string]bool{}
	for _, n := range append(lin.DownstreamClosure(from...), from...) {
		reach[n] = true
	}
	if len(targets) > 0 {
		keep := map[string]bool{}
		for _, n := range append(lin.UpstreamClosure(targets...), targets...) {
			keep[n] = reach[n]
		}
		reach = keep
	}
	for _, name := range lin.TopologicalOrder() {
		if !reach[name] || defs[name] == nil {
			continue
		}
		mt, err := e.traceModel(ctx, defs[name], trace, slices.Contains(from, name), current[name])
		if err != nil {
			return nil, err
		}
		if len(mt.Outdated) > 0 || len(mt.BuiltOn) > 0 {
			trace.Models[name] = mt
		}
	}
	return trace, nil
}

// tracedLineage resolves each registered model's definition — the spec's
// when it has one, as the next run gates it, else the registration's — and
// the lineage of their gated edges that carry data within this
// environment.
func (e *Engine) tracedLineage(recs []state.ModelRecord) (map[string]*spec.Model, *graph.Lineage, error) {
	defs := map[string]*spec.Model{}
	var names []string
	reads := map[string][]string{}
	for _, rec := range recs {
		m := e.spec.Model(rec.Name)
		if m == nil {
			var err error
			if m, err = spec.ModelFromRecord(rec); err != nil {
				continue // unreadable: nothing can be traced through it
			}
		}
		defs[rec.Name] = m
		names = append(names, rec.Name)
	}
	for _, name := range names {
		for _, src := range tracedEdges(defs[name], e.opts.Env) {
			if defs[src.Name] != nil {
				reads[name] = append(reads[name], src.Name)
			}
		}
	}
	lin, err := graph.NewLineage(names, reads)
	if err != nil {
		return nil, nil, fmt.Errorf("model lineage: %w", err)
	}
	return defs, lin, nil
}

// tracedEdges are m's gated sources that read data of this environment.
func tracedEdges(m *spec.Model, env spec.Env) []spec.Source {
	var out []spec.Source
	for _, src := range m.Upstream {
		if src.Gated() && src.Contract != spec.Exists && src.Kind == spec.KindModel && m.RegistrationEnv(src, env) == env {
			out = append(out, src)
		}
	}
	return out
}

// traceModel reads m's applied units and finds those outdated (when m is a
// seed) and those built on the tainted windows of its upstreams already in
// trace.
func (e *Engine) traceModel(ctx context.Context, m *spec.Model, trace *OutdatedTrace, seed bool, current string) (*ModelTrace, error) {
	mt := &ModelTrace{Model: m.Name}
	rows, err := e.store.Applied(ctx, e.opts.Env.Suffix, m.Name, state.Window{})
	if err != nil {
		return nil, fmt.Errorf("reading the applied units of %s: %w", m.Name, err)
	}
	edges := tracedEdges(m, e.opts.Env)
	var tainted []state.Window
	for _, r := range rows {
		own := seed && UnitDefinition(state.Unit{Status: state.Applied, Fingerprint: r.Fingerprint}, current) == DefinitionOutdated
		if own {
			mt.Outdated = append(mt.Outdated, r.Window)
		}
		var ups []TaintedUpstream
		for _, src := range edges {
			if tu, ok := taintInReach(trace.Of(src.Name), src.Contract, m.Temporality == spec.Timeless, r.Window); ok {
				tu.Model = src.Name
				ups = append(ups, tu)
			}
		}
		if len(ups) > 0 {
			mt.BuiltOn = append(mt.BuiltOn, BuiltOn{Window: r.Window, Upstreams: ups})
		}
		if own || len(ups) > 0 {
			if r.Window.IsZero() {
				mt.all = true
			} else {
				tainted = append(tainted, r.Window)
			}
		}
	}
	mt.tainted = state.NewIntervalSet(tainted...)
	if ws := mt.tainted.Windows(); len(ws) > 0 {
		mt.first = ws[0]
	}
	return mt, nil
}

// taintInReach is the part of up's tainted windows that a unit with window
// w reads through a level-contract: none when up has none.
func taintInReach(up *ModelTrace, level spec.ContractLevel, timelessDown bool, w state.Window) (TaintedUpstream, bool) {
	if up == nil {
		return TaintedUpstream{}, false
	}
	if up.all {
		return TaintedUpstream{Windows: []state.Window{{}}}, true
	}
	if up.tainted.Empty() {
		return TaintedUpstream{}, false
	}
	var in []state.Window
	switch {
	case timelessDown || level == spec.Whole:
		in = up.tainted.Windows()
	case level == spec.Through:
		if !up.first.Since.Before(w.Until) {
			return TaintedUpstream{}, false
		}
		in = up.tainted.Intersect(state.Window{Since: up.first.Since, Until: w.Until}).Windows()
	default: // EXACT, ENCAPSULATE
		in = up.tainted.Intersect(w).Windows()
	}
	if len(in) == 0 {
		return TaintedUpstream{}, false
	}
	tu := TaintedUpstream{Windows: in[:min(len(in), MaxBuiltOnWindows)], More: max(0, len(in)-MaxBuiltOnWindows)}
	return tu, true
}

// builtOn is mt's BuiltOn; nil for a nil trace.
func (mt *ModelTrace) builtOn() []BuiltOn {
	if mt == nil {
		return nil
	}
	return mt.BuiltOn
}

// BuiltOnOutdated is model's part of TraceOutdated over every outdated
// model, reading only model's upstream lineage: its outdated units and
// those built on outdated windows upstream. nil when it has none.
func (e *Engine) BuiltOnOutdated(ctx context.Context, model string) (*ModelTrace, error) {
	t, err := e.TraceOutdated(ctx, nil, []string{model})
	if err != nil {
		return nil, err
	}
	return t.Of(model), nil
}
