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

// A unit that misses a range on one upstream and is only stale on another
// waits for the range, as a run's gate says: the sweep (and the live
// index) once reported it stale, whichever upstream came first. Found by
// TestLiveGateEqualsAFullSweep.
func TestGateSweepMissingBeatsStale(t *testing.T) {
	const text = `
models:
  - name: ref.config
    temporality: timeless
  - name: raw.flex
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}
  - name: mart.snapshot
    temporality: timeless
    upstream:
      - {name: ref.config, contract: whole, freshness: {within: 6h}}
      - {name: raw.flex, contract: whole}
`
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		sp, err := spec.Parse("fold.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now := day.Add(10 * time.Hour)
		e := engine.New(s, sp, engine.Options{Now: func() time.Time { return now }})
		if _, err := e.Apply(ctx); err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"ref.config", "mart.snapshot"} {
			if _, err := s.Prefill(ctx, state.PrefillRequest{Model: m, Windows: []state.Window{{}}, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		// ref.config applied 7h ago (stale behind 6h); raw.flex has
		// nothing (missing all ten hours).
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: "ref.config", From: []state.UnitStatus{state.Pending}, To: state.Applied,
			AppliedAt: now.Add(-7 * time.Hour), Now: now}); err != nil {
			t.Fatal(err)
		}
		_, units := sweepAll(t, e, gate.BlockedFilter{Model: "mart.snapshot"})
		if len(units) != 1 || units[0].Readiness != gate.Waiting {
			t.Fatalf("mart.snapshot swept as %v, want one unit waiting (raw.flex misses its range)", units)
		}
		checkAgainstGate(t, e, units)
	})
}
