package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// reachSpec has one hourly upstream read at every level by hourly
// downstreams, one with a freshness limit.
const reachSpec = `
models:
  - {name: raw.fix, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}}
  - {name: d.exact, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.fix, contract: exact, freshness: {within: 3h}}]}
  - {name: d.through, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.fix, contract: through}]}
  - {name: d.whole, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.fix, contract: whole}]}
  - {name: d.exists, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.fix, contract: exists}]}
`

// reachWorld is reachSpec registered, every model prefilled over hours
// 0-99, the clock at hour 100, and a live index built.
func reachWorld(t *testing.T, s state.Store) (*gate.Reader, *gate.Live, *time.Time) {
	t.Helper()
	now := liveHour(100)
	g := registered(t, s, "", reachSpec, &now)
	var ws []state.Window
	for h := range 100 {
		ws = append(ws, state.Window{Since: liveHour(h), Until: liveHour(h + 1)})
	}
	for _, m := range g.Spec.Models {
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: m.Name, Windows: ws, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	live, err := gate.NewLive(t.Context(), *g)
	if err != nil {
		t.Fatal(err)
	}
	return g, live, &now
}

// feed hands live everything in the feed after its seq.
func feed(t *testing.T, s state.Store, live *gate.Live) gate.ApplyStats {
	t.Helper()
	var total gate.ApplyStats
	for {
		cs, err := s.Changes(t.Context(), live.Seq(), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			return total
		}
		st, err := live.Apply(t.Context(), cs)
		if err != nil {
			t.Fatal(err)
		}
		total.Changes += st.Changes
		total.Read += st.Read
		total.Rejudged += st.Rejudged
		if st.Rebuilt != "" {
			total.Rebuilt = st.Rebuilt
		}
	}
}

func applyHours(t *testing.T, s state.Store, model string, from, to int, at time.Time) {
	t.Helper()
	if _, err := s.SetStatus(t.Context(), state.StatusChange{Model: model, Window: state.Window{Since: liveHour(from), Until: liveHour(to)},
		From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: at, Now: at}); err != nil {
		t.Fatal(err)
	}
}

func readinessIn(t *testing.T, live *gate.Live, model string, h int) gate.Readiness {
	t.Helper()
	r, ok := live.Readiness(model, state.Window{Since: liveHour(h), Until: liveHour(h + 1)})
	if !ok {
		t.Fatalf("%s hour %d: no verdict", model, h)
	}
	return r
}

// A change re-judges only what its contract reach says, and the verdicts
// it leaves are a full sweep's.
func TestLiveGateRejudgesOnlyTheReach(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g, live, now := reachWorld(t, s)
		// Hour 50 of raw.fix applied: EXACT re-judges d.exact's hour 50,
		// THROUGH every d.through hour ending after 50:00 (hours 50-99),
		// WHOLE's one verdict stays "missing" (99 hours are), EXISTS
		// never looks. 1 + 50 units; raw.fix's own unit is applied now.
		applyHours(t, s, "raw.fix", 50, 51, *now)
		st := feed(t, s, live)
		if st.Rebuilt != "" || st.Changes != 1 || st.Rejudged != 51 {
			t.Errorf("one applied hour: %+v; want 1 change, 51 units re-judged, no rebuild", st)
		}
		if r := readinessIn(t, live, "d.exact", 50); r != gate.Ready {
			t.Errorf("d.exact hour 50 is %s, want ready", r)
		}
		if r := readinessIn(t, live, "d.exact", 49); r != gate.Waiting {
			t.Errorf("d.exact hour 49 is %s, want waiting", r)
		}
		sameAsSweep(t, g, live)

		// The rest of raw.fix: now WHOLE's verdict changes, and every
		// d.whole unit is judged again; d.through's hours 0-99 all reach.
		applyHours(t, s, "raw.fix", 0, 50, *now)
		applyHours(t, s, "raw.fix", 51, 100, *now)
		st = feed(t, s, live)
		if st.Rejudged < 100+100 {
			t.Errorf("the whole upstream applied: %d units re-judged; want at least d.whole's and d.through's 200", st.Rejudged)
		}
		for _, m := range []string{"d.exact", "d.through", "d.whole", "d.exists"} {
			if r := readinessIn(t, live, m, 99); r != gate.Ready {
				t.Errorf("%s hour 99 is %s, want ready", m, r)
			}
		}
		sameAsSweep(t, g, live)
	})
}

// The clock flips verdicts at the two moments it can, and NextChange names
// each to the nanosecond: at 101:00 raw.fix's hour 100 completes and WHOLE
// needs it (d.whole waits), and at applied_at + 3h + 1ns d.exact's
// freshness limit runs out (stale). Until then the verdicts hold.
func TestLiveGateFlipsOnTheClock(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g, live, now := reachWorld(t, s)
		loaded := liveHour(99) // an hour before the clock
		applyHours(t, s, "raw.fix", 0, 100, loaded)
		feed(t, s, live)
		if r := readinessIn(t, live, "d.whole", 10); r != gate.Ready {
			t.Fatalf("d.whole hour 10 is %s, want ready", r)
		}
		step := func(want time.Time, model string, before, after gate.Readiness) {
			t.Helper()
			next, ok := live.NextChange()
			if !ok || !next.Equal(want) {
				t.Fatalf("NextChange %s (%v), want %s", next, ok, want)
			}
			*now = next.Add(-time.Nanosecond)
			if st, err := live.Advance(t.Context()); err != nil || st.Rejudged != 0 {
				t.Errorf("advancing to 1ns before %s: %+v %v; want nothing re-judged", want, st, err)
			}
			if r := readinessIn(t, live, model, 10); r != before {
				t.Errorf("1ns before %s %s hour 10 is %s, want %s", want, model, r, before)
			}
			sameAsSweep(t, g, live)
			*now = next
			if _, err := live.Advance(t.Context()); err != nil {
				t.Fatal(err)
			}
			if r := readinessIn(t, live, model, 10); r != after {
				t.Errorf("at %s %s hour 10 is %s, want %s", want, model, r, after)
			}
			sameAsSweep(t, g, live)
		}
		step(liveHour(101), "d.whole", gate.Ready, gate.Waiting)
		step(loaded.Add(3*time.Hour+time.Nanosecond), "d.exact", gate.Ready, gate.Stale)
		// d.whole misses hour 100 for good and d.exact is stale: the
		// clock alone changes nothing more.
		if next, ok := live.NextChange(); ok {
			t.Errorf("after both flips NextChange is %s; want none", next)
		}
	})
}

// What cannot be applied piecewise rebuilds, and says why: a model
// registered after the index was built, and a registration changed before
// a run the index had not seen.
func TestLiveGateRebuilds(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g, live, now := reachWorld(t, s)
		g.Spec = enginetest.RegisterYAML(t, s, reachSpec+`
  - {name: d.late, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.fix, contract: encapsulate}]}
`, *now)
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "d.late", Windows: []state.Window{{Since: liveHour(0), Until: liveHour(1)}}, Now: *now}); err != nil {
			t.Fatal(err)
		}
		st := feed(t, s, live)
		if !strings.Contains(st.Rebuilt, "d.late") {
			t.Errorf("a change of a model registered later: rebuilt %q, want a rebuild naming d.late", st.Rebuilt)
		}
		sameAsSweep(t, g, live)

		// d.exact's limit tightened to 1h in the registry (the index reads
		// definitions from it when opened without a spec), then a run.
		storeOnly := &gate.Reader{Store: s, Now: g.Now}
		live, err := gate.NewLive(t.Context(), *storeOnly)
		if err != nil {
			t.Fatal(err)
		}
		enginetest.RegisterYAML(t, s, strings.Replace(reachSpec, "within: 3h", "within: 1h", 1), *now)
		if st := feed(t, s, live); st.Rebuilt != "" || st.Changes != 0 {
			t.Errorf("a registration alone is no change in the feed: %+v", st)
		}
		runID, err := s.CreateRun(t.Context(), state.Run{Models: []string{"raw.fix"}, StateMode: "discover", Status: state.RunRunning, StartedAt: *now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{"raw.fix"}, Worker: "w", Lease: time.Hour, Limit: 1, RunID: runID, Now: *now}); err != nil {
			t.Fatal(err)
		}
		if st := feed(t, s, live); st.Rebuilt != "the registrations changed" {
			t.Errorf("a run after a changed registration: rebuilt %q, want \"the registrations changed\"", st.Rebuilt)
		}
		sameAsSweep(t, storeOnly, live)
	})
}

// sameAsSweep compares the index's report and units with a full sweep's.
func sameAsSweep(t *testing.T, g *gate.Reader, live *gate.Live) {
	t.Helper()
	rep, want := sweepAll(t, g, gate.BlockedFilter{})
	var got []gate.SweptUnit
	if err := live.Units(gate.BlockedFilter{}, func(u gate.SweptUnit) error {
		got = append(got, u)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lrep, err := live.Report(gate.BlockedFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || lrep.Units != rep.Units {
		t.Fatalf("the index has %d units (%d in its report), a sweep %d (%d)", len(got), lrep.Units, len(want), rep.Units)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("unit %d: the index says %v, a sweep %v", i, got[i], want[i])
		}
	}
}
