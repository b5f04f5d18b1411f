package engine_test

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// The sweep reads an upstream's applied rows merged as far as its gates
// allow (state.SweepNeed). raw.hourly's four applied hours touch, so they
// are one island, but the first two were applied 8h ago and the last two
// 1h ago: an island carrying its newest applied_at would pass hours 0 and
// 1 of stg.latest through a 6h limit, and carrying one applied_at at all
// would pass every hour of stg.all (ALL reads the oldest). stg.plain reads
// the same upstream with no limit, so the sweep also merges it into its
// island for a coverage-only edge of another model — which must not leak
// into the freshness edges.
func TestGateSweepKeepsApartWhatFreshnessTellsApart(t *testing.T) {
	const text = `
models:
  - name: raw.hourly
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
  - name: stg.latest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.hourly, contract: encapsulate, freshness: {within: 6h}}
  - name: stg.all
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.hourly, contract: through, freshness: {within: 6h, scope: all}}
  - name: stg.plain
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.hourly, contract: encapsulate}
`
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		sp, err := spec.Parse("merge.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now := day.Add(10 * time.Hour)
		e := engine.New(s, sp, engine.Options{Now: func() time.Time { return now }})
		if _, err := e.Apply(ctx); err != nil {
			t.Fatal(err)
		}
		hours := func(from, to int) []state.Window {
			var ws []state.Window
			for h := from; h < to; h++ {
				ws = append(ws, state.Window{Since: day.Add(time.Duration(h) * time.Hour), Until: day.Add(time.Duration(h+1) * time.Hour)})
			}
			return ws
		}
		for _, m := range sp.Models {
			if _, err := s.Prefill(ctx, state.PrefillRequest{Model: m.Name, Windows: hours(0, 5), Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		for _, run := range []struct {
			from, to int
			ago      time.Duration
		}{{0, 2, 8 * time.Hour}, {2, 4, time.Hour}} {
			w := state.Window{Since: day.Add(time.Duration(run.from) * time.Hour), Until: day.Add(time.Duration(run.to) * time.Hour)}
			if _, err := s.SetStatus(ctx, state.StatusChange{Model: "raw.hourly", Window: w, From: []state.UnitStatus{state.Pending},
				To: state.Applied, AppliedAt: now.Add(-run.ago), Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		_, units := sweepAll(t, e, gate.BlockedFilter{})
		expectReadiness(t, units, map[string][]gate.Readiness{
			"stg.latest": {gate.Stale, gate.Stale, gate.Ready, gate.Ready, gate.Waiting},
			"stg.all":    {gate.Stale, gate.Stale, gate.Stale, gate.Stale, gate.Waiting},
			"stg.plain":  {gate.Ready, gate.Ready, gate.Ready, gate.Ready, gate.Waiting},
			"raw.hourly": {gate.Ready},
		})
		checkAgainstGate(t, e, units)
	})
}
