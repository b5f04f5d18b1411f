package spec

import (
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// ModelRecord is m's registration in env, as the engine registers it (and
// as a test that seeds a store without an engine must, so the two cannot
// drift). interval, when not zero, replaces the model's own (a torch
// migration under INTERVAL_OVERRIDE registers the grain the grid was
// rebuilt at).
func ModelRecord(env string, m *Model, interval state.Interval) state.ModelRecord {
	def := DefinitionOf(m)
	rec := state.ModelRecord{Env: env, Name: m.Name, Pipeline: m.Pipeline, Temporality: m.Temporality.String()}
	if m.Temporality == Temporal && m.Chunking != nil {
		c := m.Chunking
		iv := c.Interval
		if !interval.IsZero() {
			iv = interval
			def.Chunking.Interval = iv.String()
		}
		rec.Flexibility = c.Flexibility.String()
		rec.Interval = iv.String()
		rec.Timezone = LocationName(c.Location)
		rec.Start = c.Start.UTC()
		if c.End != nil {
			end := c.End.UTC()
			rec.End = &end
		}
	}
	rec.Definition = def.JSON()
	rec.ContentHash = ContentHash(rec.Definition)
	rec.Fingerprint = DefinitionFingerprint(def)
	return rec
}

// Edge is one task dependency of a model, by name.
type Edge struct {
	Task, DependsOn string
	Type            graph.DependencyType
	// Implicit marks the SUCCESS edge of a gated upstream that has no
	// after: entry.
	Implicit bool
	// Cross marks an edge onto a model of another pipeline, or onto a
	// model the spec does not define.
	Cross bool
	// Pipeline is the upstream's pipeline, empty when the spec lacks it.
	Pipeline string
}

// ModelEdges derives m's dependencies as the design says (docs/design.md,
// The task graph): its explicit after: entries, plus an implicit SUCCESS
// edge for each gated upstream unless an explicit edge to it exists.
// Edges onto models of other pipelines, or onto models sp does not
// define, are cross edges; same-pipeline edges come first, each group in
// declaration order.
func ModelEdges(sp *Spec, m *Model) (same, cross []Edge) {
	explicit := map[string]bool{}
	add := func(dep string, typ graph.DependencyType, implicit bool) {
		up := sp.Model(dep)
		if up != nil && up.Pipeline == m.Pipeline {
			same = append(same, Edge{Task: m.Name, DependsOn: dep, Type: typ, Implicit: implicit})
			return
		}
		e := Edge{Task: m.Name, DependsOn: dep, Type: typ, Implicit: implicit, Cross: true}
		if up != nil {
			e.Pipeline = up.Pipeline
		}
		cross = append(cross, e)
	}
	for _, a := range m.After {
		explicit[a.Task] = true
		add(a.Task, a.On, false)
	}
	for _, src := range m.Upstream {
		if src.Gated() && !explicit[src.Name] {
			explicit[src.Name] = true
			add(src.Name, graph.Success, true)
		}
	}
	return same, cross
}

// EdgeRecords are m's task edges in env as registration stores them:
// ModelEdges, same-pipeline edges first.
func EdgeRecords(env string, sp *Spec, m *Model) []state.EdgeRecord {
	same, cross := ModelEdges(sp, m)
	out := make([]state.EdgeRecord, 0, len(same)+len(cross))
	for _, e := range same {
		out = append(out, state.EdgeRecord{Env: env, Task: e.Task, DependsOn: e.DependsOn, Type: e.Type.String(), Implicit: e.Implicit})
	}
	for _, c := range cross {
		implicit := true
		for _, a := range m.After {
			if a.Task == c.DependsOn {
				implicit = false
			}
		}
		out = append(out, state.EdgeRecord{Env: env, Task: c.Task, DependsOn: c.DependsOn, Type: c.Type.String(), Implicit: implicit, Cross: true})
	}
	return out
}
