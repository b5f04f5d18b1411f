package metrics

import (
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// freshnessLimits is, per upstream model, the tightest freshness `within`
// among the gated edges that read it in e's environment: the spec's models
// as the spec declares them, the other registered models as their stored
// definitions do (a model of another spec still gates on this one). An
// edge the environment does not gate (deactivate_for_dev in a suffixed
// environment) sets no limit.
//
// One gauge per upstream, not one per edge: the alert "lag over the
// contract" then needs no join across two label sets, and the tightest
// limit is the first one a downstream unit trips over (`bollhav why` on
// that unit names the edge).
func freshnessLimits(e *engine.Engine, recs []state.ModelRecord) map[string]time.Duration {
	models := map[string]*spec.Model{}
	sp := e.Spec()
	for _, rec := range recs {
		if sp.Model(rec.Name) != nil {
			continue // the spec's definition, below, wins: not decoded
		}
		if m, err := spec.ModelFromRecord(rec); err == nil {
			models[rec.Name] = m
		}
	}
	if sp != nil {
		for _, m := range sp.Models {
			models[m.Name] = m
		}
	}
	out := map[string]time.Duration{}
	for _, m := range models {
		for _, src := range m.Upstream {
			if !src.Gated() || src.Freshness == nil || src.Freshness.Within <= 0 || m.GateSkipped(src, e.Env()) {
				continue
			}
			if cur, ok := out[src.Name]; !ok || src.Freshness.Within < cur {
				out[src.Name] = src.Freshness.Within
			}
		}
	}
	return out
}
