package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// twoRootsSpec: a daily model gated on an hourly load (ENCAPSULATE) and a
// daily one (EXACT), in another pipeline.
const twoRootsSpec = `models:
  - {name: ingest.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: ingest.fx, pipeline: ingest, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: core.orders_daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: ingest.orders, contract: encapsulate}, {name: ingest.fx, contract: exact}], run: {command: ["true"]}}
`

// TestAUnitHeldByTwoRootsCountsUnderBoth: day 0 of core.orders_daily waits
// on a failed hour of ingest.orders and on ingest.fx's failed day; day 1
// only on another failed hour. Both incidents hold day 0 — fixing
// ingest.orders first would leave it blocked — so ingest.orders holds 2
// and alone releases 1, ingest.fx holds 1 and alone releases none, and
// the report holds 2 units, each once. why names both roots.
func TestAUnitHeldByTwoRootsCountsUnderBoth(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, twoRootsSpec)
		failing := &fakeExec{fail: func(model string, w *state.Window) error {
			switch {
			case model == "ingest.orders" && (w.Equal(hours(5, 6)) || w.Equal(hours(30, 31))),
				model == "ingest.fx" && w.Equal(days(0, 1)):
				return errors.New("exit status 1: source down")
			}
			return nil
		}}
		two := days(0, 2)
		if _, err := e.Run(t.Context(), RunRequest{Window: &two}, failing, nil); err != nil {
			t.Fatal(err)
		}
		if c := statuses(t, s, "core.orders_daily"); c[state.Blocked] != 2 {
			t.Fatalf("core.orders_daily %v, want both days blocked", c)
		}
		rep, err := e.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]gate.Incident{}
		for _, inc := range rep.Incidents {
			got[inc.Model] = inc
		}
		if o := got["ingest.orders"]; o.Blocked != 2 || o.Releases != 1 || o.HoldsText() != "holds 2 units of core.orders_daily (fixing it alone releases 1)" {
			t.Errorf("ingest.orders holds %d, releases %d (%q); want 2 and 1", o.Blocked, o.Releases, o.HoldsText())
		}
		if f := got["ingest.fx"]; f.Blocked != 1 || f.Releases != 0 {
			t.Errorf("ingest.fx holds %d, releases %d; want 1 and 0: it also holds day 0", f.Blocked, f.Releases)
		}
		if rep.Held != 2 || len(rep.Incidents) != 2 {
			t.Errorf("report holds %d units in %d incidents, want 2 in 2", rep.Held, len(rep.Incidents))
		}
		why, err := e.Why(t.Context(), "core.orders_daily", t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		roots := map[string]state.UnitStatus{}
		for _, l := range why.Roots {
			roots[l.Model+" "+l.Window.String()] = l.Status
		}
		if len(roots) != 2 || roots["ingest.orders "+hours(5, 6).String()] != state.Failed || roots["ingest.fx "+days(0, 1).String()] != state.Failed {
			t.Errorf("why's roots %v, want ingest.orders' failed hour and ingest.fx's failed day", roots)
		}
	})
}
