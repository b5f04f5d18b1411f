package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// whySpec is a small lineage worked out by hand (times are 2026-01-01 unless
// said otherwise; the engine's clock is 2026-01-03T00:00Z):
//
//	raw.orders (1h, ingest) — its command fails for the hours 05 and 07
//	├─ ENCAPSULATE mart.daily (1d, core)
//	│  ├─ THROUGH report.running (1d, reports)
//	│  └─ WHOLE   report.snapshot (timeless, reports)
//	├─ ENCAPSULATE mart.hourly (1h, core)
//	│  └─ ENCAPSULATE report.hourly_rollup (1d, reports)
//	├─ ENCAPSULATE mart.flex (1h flexible, core)
//	└─ ENCAPSULATE + freshness 1h LATEST mart.fresh (1h, core)
const whySpec = `models:
  - name: raw.orders
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run:
      command:
        - sh
        - -c
        - 'case "$BOLLHAV_SINCE" in 2026-01-01T05:00:00Z|2026-01-01T07:00:00Z) echo source unavailable >&2; exit 3;; esac'
  - name: mart.daily
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["true"]}
  - name: mart.hourly
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["true"]}
  - name: mart.flex
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["true"]}
  - name: mart.fresh
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.orders, contract: encapsulate, freshness: {within: 1h, scope: latest}}
    run: {command: ["true"]}
  - name: report.running
    pipeline: reports
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: mart.daily, contract: through}]
    run: {command: ["true"]}
  - name: report.snapshot
    pipeline: reports
    temporality: timeless
    upstream: [{name: mart.daily, contract: whole}]
    run: {command: ["true"]}
  - name: report.hourly_rollup
    pipeline: reports
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: mart.hourly, contract: encapsulate}]
    run: {command: ["true"]}
`

// whyWorld builds whySpec's state with two real runs at 2026-01-03T00:00Z:
// raw.orders over the first day (22 hours applied, 05 and 07 failed), then
// every mart and report except mart.fresh over the first day. By hand:
//
//	raw.orders            00..23 of day 0: applied except 05, 07 failed; no units on day 1
//	mart.daily            day 0 blocked (missing 05-06, 07-08)
//	mart.hourly           00..23: applied except 05, 07 blocked
//	mart.flex             00..23: applied except 05, 07 blocked
//	report.running        day 0 blocked (THROUGH: mart.daily day 0 missing)
//	report.snapshot       blocked (WHOLE: mart.daily [day 0, day 2) missing)
//	report.hourly_rollup  day 0 blocked (mart.hourly 05-06, 07-08 missing)
func whyWorld(t *testing.T, s state.Store) *Engine {
	t.Helper()
	e := runEngine(t, s, whySpec)
	day0 := days(0, 1)
	res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: &day0}, e.Executor(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := statuses(t, s, "raw.orders"); c[state.Applied] != 22 || c[state.Failed] != 2 {
		t.Fatalf("raw.orders %v, want 22 applied and 2 failed (tasks %+v)", c, res.Tasks)
	}
	res, err = e.Run(t.Context(), RunRequest{Models: []string{"mart.daily", "mart.hourly", "mart.flex", "report.running",
		"report.snapshot", "report.hourly_rollup"}, Window: &day0}, e.Executor(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string][2]int{"mart.daily": {0, 1}, "mart.hourly": {22, 2}, "mart.flex": {22, 2},
		"report.running": {0, 1}, "report.snapshot": {0, 1}, "report.hourly_rollup": {0, 1}} {
		if c := statuses(t, s, model); c[state.Applied] != want[0] || c[state.Blocked] != want[1] {
			t.Fatalf("%s %v, want %d applied and %d blocked (tasks %+v)", model, c, want[0], want[1], res.Tasks)
		}
	}
	return e
}

func link(model string, w state.Window, status state.UnitStatus) string {
	return model + " " + w.String() + " " + string(status)
}

func chainString(ls []gate.ChainLink) []string {
	out := []string{}
	for _, l := range ls {
		s := link(l.Model, l.Window, l.Status)
		if l.Stale {
			s += " stale"
		}
		out = append(out, s)
	}
	return out
}

type fw struct {
	link     string
	releases int
}

func frontierOf(ws []gate.FrontierWindow) []fw {
	out := []fw{}
	for _, w := range ws {
		s := link(w.Model, w.Window, w.Status)
		if w.Stale {
			s += " stale"
		}
		out = append(out, fw{s, w.Releases})
	}
	return out
}

func expectStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func expectFrontier(t *testing.T, got []gate.FrontierWindow, want ...fw) {
	t.Helper()
	g := frontierOf(got)
	if len(g) != len(want) {
		t.Errorf("frontier:\n got  %v\n want %v", g, want)
		return
	}
	for i := range want {
		if g[i] != want[i] {
			t.Errorf("frontier[%d] = %v, want %v", i, g[i], want[i])
		}
	}
}

func mustWhy(t *testing.T, e *Engine, model string, at time.Time) *gate.WhyReport {
	t.Helper()
	r, err := e.Why(t.Context(), model, at)
	if err != nil {
		t.Fatalf("Why(%s, %s): %v", model, state.FormatTime(at), err)
	}
	return r
}

func TestWhyChainEndsAtTheFailedUpstreamUnit(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		r := mustWhy(t, e, "mart.daily", t0.Add(10*time.Hour))
		const reason = "raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z), [2026-01-01T07:00:00Z, 2026-01-01T08:00:00Z)"
		if !r.Window.Equal(days(0, 1)) || r.Status != state.Blocked || r.BlockedReason != reason || r.Satisfied || !r.Registered {
			t.Fatalf("unit %s %s %q satisfied=%v", r.Window, r.Status, r.BlockedReason, r.Satisfied)
		}
		if len(r.Upstreams) != 1 {
			t.Fatalf("upstreams %+v", r.Upstreams)
		}
		u := r.Upstreams[0]
		if u.Upstream != "raw.orders" || u.Level != spec.Encapsulate || u.Satisfied || u.Stale || u.Reason != reason ||
			!windowsEqual(u.Missing, []state.Window{hours(5, 6), hours(7, 8)}) || u.NewestAge != nil {
			t.Errorf("verdict %+v", u)
		}
		// The chain: this unit, then the first failed raw hour it waits on.
		expectStrings(t, "chain", chainString(r.RootCause), []string{
			link("mart.daily", days(0, 1), state.Blocked),
			link("raw.orders", hours(5, 6), state.Failed),
		})
		if d := r.RootCause[1].Detail; !strings.Contains(d, "source unavailable") {
			t.Errorf("the root's detail is its error: %q", d)
		}
		// Frontier: both failed hours. Each reaches, downstream of raw.orders,
		// the blocked or pending units overlapping it: mart.daily day 0,
		// mart.hourly and mart.flex at that hour, report.hourly_rollup day 0
		// (through mart.hourly), report.running day 0 (THROUGH: it ends after
		// the hour begins) and report.snapshot (WHOLE): 6. mart.fresh has no
		// units.
		expectFrontier(t, r.Frontier,
			fw{link("raw.orders", hours(5, 6), state.Failed), 6},
			fw{link("raw.orders", hours(7, 8), state.Failed), 6})
		if r.FrontierMore != 0 {
			t.Errorf("frontier more %d", r.FrontierMore)
		}
	})
}

func TestWhyFollowsBlockedUnitsUpstream(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		failed := link("raw.orders", hours(5, 6), state.Failed)

		// report.snapshot (WHOLE mart.daily over [day 0, day 2)) → the
		// blocked mart.daily day 0 (ranked above the missing day 1) → raw 05.
		r := mustWhy(t, e, "report.snapshot", time.Time{})
		if r.Temporality != spec.Timeless || !r.Window.IsZero() || r.Status != state.Blocked {
			t.Fatalf("unit %s %s", r.Window, r.Status)
		}
		if u := r.Upstreams[0]; u.Level != spec.Whole || !windowsEqual(u.Missing, []state.Window{days(0, 2)}) {
			t.Errorf("verdict %+v", u)
		}
		expectStrings(t, "snapshot chain", chainString(r.RootCause), []string{
			link("report.snapshot", state.Window{}, state.Blocked),
			link("mart.daily", days(0, 1), state.Blocked),
			failed,
		})
		// Frontier: mart.daily day 0 (blocked) and day 1 (no unit). Day 0
		// releases report.running day 0 (ends after day 0 begins) and
		// report.snapshot: 2. Day 1 releases only report.snapshot:
		// report.running's day 0 ends when day 1 begins.
		expectFrontier(t, r.Frontier,
			fw{link("mart.daily", days(0, 1), state.Blocked), 2},
			fw{link("mart.daily", days(1, 2), gate.StatusMissing), 1})

		// report.running day 0 (THROUGH) → mart.daily day 0 → raw 05.
		r = mustWhy(t, e, "report.running", t0.Add(12*time.Hour))
		expectStrings(t, "running chain", chainString(r.RootCause), []string{
			link("report.running", days(0, 1), state.Blocked),
			link("mart.daily", days(0, 1), state.Blocked),
			failed,
		})
		expectFrontier(t, r.Frontier, fw{link("mart.daily", days(0, 1), state.Blocked), 2})

		// A flexible model's stored unit containing the time.
		r = mustWhy(t, e, "mart.flex", t0.Add(7*time.Hour+30*time.Minute))
		if !r.Window.Equal(hours(7, 8)) || r.Status != state.Blocked {
			t.Errorf("flex unit %s %s", r.Window, r.Status)
		}
		expectStrings(t, "flex chain", chainString(r.RootCause), []string{
			link("mart.flex", hours(7, 8), state.Blocked),
			link("raw.orders", hours(7, 8), state.Failed),
		})
	})
}

func TestWhyMissingWindowsAndAppliedUnits(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		// Day 1 of mart.daily has no unit, and neither has raw.orders: the
		// chain stops at the missing unit itself; the frontier is raw's 24
		// hours of day 1, all missing, each releasing only report.snapshot
		// (nothing else downstream has a unit on day 1, and report.running's
		// day 0 ends as day 1 begins).
		r := mustWhy(t, e, "mart.daily", t0.Add(36*time.Hour))
		if !r.Window.Equal(days(1, 2)) || r.Status != gate.StatusMissing {
			t.Fatalf("unit %s %s", r.Window, r.Status)
		}
		expectStrings(t, "chain", chainString(r.RootCause), []string{link("mart.daily", days(1, 2), gate.StatusMissing)})
		var want []fw
		for h := 24; h < 48; h++ {
			want = append(want, fw{link("raw.orders", hours(h, h+1), gate.StatusMissing), 1})
		}
		expectFrontier(t, r.Frontier, want...)

		// A flexible model with no unit at the time: the chunk window.
		r = mustWhy(t, e, "mart.flex", t0.Add(30*time.Hour+5*time.Minute))
		if !r.Window.Equal(hours(30, 31)) || r.Status != gate.StatusMissing {
			t.Errorf("flex missing unit %s %s", r.Window, r.Status)
		}

		// An applied unit: satisfied, nothing to follow, nothing to apply;
		// raw 03's applied_at is the run's clock, 2026-01-03T00:00Z, so at an
		// --as-of two hours later both ages are 2h.
		e.opts.Now = func() time.Time { return t0.Add(50 * time.Hour) }
		r = mustWhy(t, e, "mart.hourly", t0.Add(3*time.Hour))
		if r.Status != state.Applied || !r.Satisfied || len(r.Frontier) != 0 || r.AppliedAt == nil {
			t.Errorf("applied unit %+v", r)
		}
		expectStrings(t, "applied chain", chainString(r.RootCause), []string{link("mart.hourly", hours(3, 4), state.Applied)})
		if u := r.Upstreams[0]; !u.Satisfied || u.NewestAge == nil || *u.NewestAge != 2*time.Hour || *u.OldestAge != 2*time.Hour {
			t.Errorf("ages %+v", u)
		}
	})
}

func TestWhyAfterRepairs(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		// Hour 05 re-pended by an operator: raw.orders has no upstream, so
		// the pending unit is the root (nothing blocks it).
		if n, err := e.Mark(t.Context(), "raw.orders", hours(5, 6), state.Pending); err != nil || n != 1 {
			t.Fatalf("Mark: %d %v", n, err)
		}
		r := mustWhy(t, e, "mart.hourly", t0.Add(5*time.Hour+30*time.Minute))
		expectStrings(t, "chain", chainString(r.RootCause), []string{
			link("mart.hourly", hours(5, 6), state.Blocked),
			link("raw.orders", hours(5, 6), state.Pending),
		})
		// mart.daily still follows the failed hour 07 first.
		r = mustWhy(t, e, "mart.daily", t0)
		expectStrings(t, "daily chain", chainString(r.RootCause), []string{
			link("mart.daily", days(0, 1), state.Blocked),
			link("raw.orders", hours(7, 8), state.Failed),
		})
		expectFrontier(t, r.Frontier,
			fw{link("raw.orders", hours(5, 6), state.Pending), 6},
			fw{link("raw.orders", hours(7, 8), state.Failed), 6})

		// Both hours marked applied: the stored unit is still blocked, but
		// its gate is satisfied now; it is its own root and needs no upstream.
		if n, err := e.Mark(t.Context(), "raw.orders", hours(5, 8), state.Applied); err != nil || n != 2 {
			t.Fatalf("Mark: %d %v", n, err)
		}
		r = mustWhy(t, e, "mart.daily", t0)
		if r.Status != state.Blocked || !r.Satisfied || len(r.Frontier) != 0 {
			t.Errorf("repaired: status %s satisfied %v frontier %v", r.Status, r.Satisfied, frontierOf(r.Frontier))
		}
		expectStrings(t, "repaired chain", chainString(r.RootCause), []string{link("mart.daily", days(0, 1), state.Blocked)})
	})
}

func TestWhyStaleUpstream(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		// raw 03 was applied at 2026-01-03T00:00Z; three hours later the
		// 1h LATEST freshness of mart.fresh blocks its hour 03.
		e.opts.Now = func() time.Time { return t0.Add(51 * time.Hour) }
		h3 := hours(3, 4)
		if _, err := e.Run(t.Context(), RunRequest{Models: []string{"mart.fresh"}, Window: &h3}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
		r := mustWhy(t, e, "mart.fresh", t0.Add(3*time.Hour))
		const reason = "raw.orders (ENCAPSULATE, stale): newest applied_at 2026-01-03T00:00:00Z is older than 1h"
		if r.Status != state.Blocked || r.BlockedReason != reason {
			t.Fatalf("unit %s %q", r.Status, r.BlockedReason)
		}
		u := r.Upstreams[0]
		if u.Satisfied || !u.Stale || u.Reason != reason || len(u.Missing) != 0 || u.NewestAge == nil || *u.NewestAge != 3*time.Hour ||
			u.Freshness == nil || u.Freshness.Within != time.Hour {
			t.Errorf("verdict %+v", u)
		}
		expectStrings(t, "chain", chainString(r.RootCause), []string{
			link("mart.fresh", h3, state.Blocked),
			link("raw.orders", h3, state.Applied) + " stale",
		})
		// Re-applying raw 03 releases, overlapping hour 03: mart.daily day
		// 0, report.running day 0, report.snapshot, report.hourly_rollup day
		// 0 and mart.fresh 03 itself (mart.hourly and mart.flex 03 are
		// applied): 5.
		expectFrontier(t, r.Frontier, fw{link("raw.orders", h3, state.Applied) + " stale", 5})

		// As of half an hour after the load it was fresh: nothing to do.
		e.opts.Now = func() time.Time { return t0.Add(48*time.Hour + 30*time.Minute) }
		r = mustWhy(t, e, "mart.fresh", t0.Add(3*time.Hour))
		if !r.Satisfied || len(r.Frontier) != 0 || *r.Upstreams[0].NewestAge != 30*time.Minute {
			t.Errorf("fresh: %+v", r)
		}
	})
}

func TestWhyRefusesBadInput(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		before := storeState(t, e)
		for _, c := range []struct {
			model string
			at    time.Time
			want  string
		}{
			{"mart.daly", t0, `unknown model "mart.daly": did you mean mart.daily`},
			{"nothing.here", t0, `unknown model "nothing.here"`},
			{"mart.daily", t0.Add(-time.Hour), "starts at 2026-01-01T00:00:00Z"},
			{"mart.daily", time.Time{}, "model mart.daily: a temporal model needs a time"},
		} {
			if _, err := e.Why(t.Context(), c.model, c.at); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Why(%s) = %v, want %q", c.model, err, c.want)
			}
		}
		if storeState(t, e) != before {
			t.Error("Why changed the store")
		}
	})
}

func TestWhyHardGateError(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		// ext.orders is gated but registered nowhere: a hard error that
		// fails the unit; no upstream window can fix it.
		e := runEngine(t, s, `models:
  - name: mart.x
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: ext.orders, contract: encapsulate}]
    run: {command: ["true"]}
`)
		day0 := days(0, 1)
		if _, err := e.Run(t.Context(), RunRequest{Window: &day0}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
		r := mustWhy(t, e, "mart.x", t0)
		if r.Status != state.Failed || r.Satisfied || len(r.Frontier) != 0 || len(r.Upstreams) != 1 || r.Upstreams[0].Err == nil ||
			!strings.Contains(r.Upstreams[0].Err.Error(), "not registered") || !strings.Contains(r.Error, "not registered") {
			t.Errorf("report %+v", r)
		}
		expectStrings(t, "chain", chainString(r.RootCause), []string{link("mart.x", day0, state.Failed)})
	})
}
