package gate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

func blockedString(us []gate.BlockedUnit) []string {
	out := []string{}
	for _, u := range us {
		w := "existence"
		if !u.Window.IsZero() {
			w = u.Window.String()
		}
		out = append(out, fmt.Sprintf("%s %s holds=%d", u.Model, w, u.Holds))
	}
	return out
}

// lineageBlocked is Blocked's answer on enginetest.Lineage, most impact
// first (TestBlockedOrdersByHolds works the holds out).
func lineageBlocked() []string {
	return []string{
		"mart.daily " + days(0, 1).String() + " holds=2",
		"mart.hourly " + hours(5, 6).String() + " holds=1",
		"mart.hourly " + hours(7, 8).String() + " holds=1",
		"mart.flex " + hours(5, 6).String() + " holds=0",
		"mart.flex " + hours(7, 8).String() + " holds=0",
		"report.hourly_rollup " + days(0, 1).String() + " holds=0",
		"report.running " + days(0, 1).String() + " holds=0",
		"report.snapshot existence holds=0",
	}
}

func TestBlockedOrdersByHolds(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		got, err := g.Blocked(t.Context(), gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		// Holds by hand (outstanding units downstream, reached through
		// the gated lineage):
		//   mart.daily day 0: report.running day 0 (THROUGH, ends after
		//     day 0 begins) + report.snapshot (WHOLE) = 2
		//   mart.hourly 05, 07: report.hourly_rollup day 0 = 1 each
		//   mart.flex 05, 07, report.*: nothing downstream = 0
		// Ties by model, then since.
		expectStrings(t, "blocked", blockedString(got), lineageBlocked())
		if got[0].Pipeline != "core" || got[0].Reason != "raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z), [2026-01-01T07:00:00Z, 2026-01-01T08:00:00Z)" {
			t.Errorf("first %+v", got[0])
		}

		// Filters.
		got, err = g.Blocked(t.Context(), gate.BlockedFilter{Pipeline: "reports"})
		if err != nil {
			t.Fatal(err)
		}
		expectStrings(t, "reports", blockedString(got), []string{
			"report.hourly_rollup " + days(0, 1).String() + " holds=0",
			"report.running " + days(0, 1).String() + " holds=0",
			"report.snapshot existence holds=0",
		})
		got, err = g.Blocked(t.Context(), gate.BlockedFilter{Model: "mart.hourly"})
		if err != nil {
			t.Fatal(err)
		}
		expectStrings(t, "mart.hourly", blockedString(got), []string{
			"mart.hourly " + hours(5, 6).String() + " holds=1",
			"mart.hourly " + hours(7, 8).String() + " holds=1",
		})
		got, err = g.Blocked(t.Context(), gate.BlockedFilter{Model: "raw.orders"})
		if err != nil || len(got) != 0 {
			t.Errorf("raw.orders has failed units, none blocked: %v %v", got, err)
		}

		for f, want := range map[gate.BlockedFilter]string{
			{Model: "mart.dayly"}:                      `unknown model "mart.dayly": did you mean mart.daily?`,
			{Pipeline: "nope"}:                         `unknown pipeline "nope": the pipelines are core, ingest, reports`,
			{Model: "mart.daily", Pipeline: "reports"}: "model mart.daily is in pipeline core, not reports",
		} {
			if _, err := g.Blocked(t.Context(), f); err == nil || err.Error() != want {
				t.Errorf("Blocked(%+v) = %v, want %q", f, err, want)
			}
		}
	})
}

func TestBlockedHoldsCountOutstandingUnitsOnly(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		// Apply report.running's day 0 and fail report.snapshot by hand
		// (the store, not the engine: the run loop's statuses): mart.daily
		// day 0 then reaches only the failed snapshot, which still waits.
		ctx := t.Context()
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: "report.running", Window: days(0, 1), From: []state.UnitStatus{state.Blocked},
			To: state.Applied, AppliedAt: t0, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: "report.snapshot", From: []state.UnitStatus{state.Blocked},
			To: state.Failed, Now: t0}); err != nil {
			t.Fatal(err)
		}
		got, err := g.Blocked(ctx, gate.BlockedFilter{Model: "mart.daily"})
		if err != nil {
			t.Fatal(err)
		}
		expectStrings(t, "blocked", blockedString(got), []string{"mart.daily " + days(0, 1).String() + " holds=1"})
	})
}

// TestTriageRanksFailedUnitsWithTheBlocked: the triage queue holds the
// failed hours of raw.orders with the blocked units, each failed hour
// carrying its impact as a blocked unit would, so the failed roots come
// first; a failed unit keeps its error and a blocked one its reason.
func TestTriageRanksFailedUnitsWithTheBlocked(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		got, err := g.Triage(t.Context(), gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		// raw.orders 05 by hand: mart.daily day 0, mart.hourly 05,
		// mart.flex 05 (ENCAPSULATE: the hour itself), report.running
		// day 0 (THROUGH on mart.daily), report.snapshot (timeless),
		// report.hourly_rollup day 0 (on mart.hourly 05) = 6; 07 alike.
		// mart.fresh never ran: no units.
		// The blocked units follow in Blocked's order.
		expectStrings(t, "triage", blockedString(got), append([]string{
			"raw.orders " + hours(5, 6).String() + " holds=6",
			"raw.orders " + hours(7, 8).String() + " holds=6",
		}, lineageBlocked()...))
		if f := got[0]; f.Status != state.Failed || f.Error != "exit status 3: source unavailable" || f.Reason != "" {
			t.Errorf("the failed hour: status %s, error %q, reason %q", f.Status, f.Error, f.Reason)
		}
		if b := got[2]; b.Status != state.Blocked || b.Error != "" || b.Reason == "" {
			t.Errorf("the blocked day: status %s, error %q, reason %q", b.Status, b.Error, b.Reason)
		}
		// Blocked alone still lists no failed unit.
		blocked, err := g.Blocked(t.Context(), gate.BlockedFilter{})
		if err != nil || len(blocked) != len(got)-2 {
			t.Errorf("Blocked lists %d units (%v), want the %d blocked ones", len(blocked), err, len(got)-2)
		}
	})
}

// TestBlockedScales lists 100,000 blocked units (20,000 under -race), each
// holding back one pending unit downstream, from the store of each backend.
func TestBlockedScales(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 units")
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := reader(&enginetest.World{Store: s, Now: t0.Add(48 * time.Hour), Spec: enginetest.RegisterYAML(t, s, `models:
  - {name: big.q, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: big.h, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: big.q, contract: encapsulate}], run: {command: ["true"]}}
`, t0)})
		ctx := t.Context()
		// 100,000 in a plain build; a fifth of it under -race, where the
		// pure-Go SQLite's prefill of them alone took over a minute and a
		// half. The answer checked is the same at either size.
		n := 100_000
		if enginetest.UnderRace {
			n = 20_000
		}
		grid, _ := state.NewGrid(t0, state.Interval{N: 15, Unit: state.Minute}, time.UTC)
		qs := make([]state.Window, n)
		for i := range qs {
			qs[i] = grid.WindowAt(i)
		}
		hs := make([]state.Window, n/4)
		for i := range hs {
			hs[i] = hours(i, i+1)
		}
		for model, ws := range map[string][]state.Window{"big.q": qs, "big.h": hs} {
			if _, err := s.Prefill(ctx, state.PrefillRequest{Model: model, Windows: ws, Now: t0}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: "big.q", From: []state.UnitStatus{state.Pending}, To: state.Blocked, Now: t0}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := g.Blocked(ctx, gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d blocked units in %s", len(got), time.Since(start))
		// Each quarter hour overlaps exactly its pending hour of big.h.
		if len(got) != n || got[0].Holds != 1 || got[n-1].Holds != 1 || !got[0].Window.Equal(qs[0]) || !got[n-1].Window.Equal(qs[n-1]) {
			t.Fatalf("%d units, first %+v, last %+v", len(got), got[0], got[n-1])
		}
	})
}
