package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

func link(model string, w state.Window, status state.UnitStatus) string {
	return model + " " + w.String() + " " + string(status)
}

// staleLink is link, said to be stale when it is.
func staleLink(model string, w state.Window, status state.UnitStatus, stale bool) string {
	if stale {
		return link(model, w, status) + " stale"
	}
	return link(model, w, status)
}

func chainString(ls []gate.ChainLink) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, staleLink(l.Model, l.Window, l.Status, l.Stale))
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
		out = append(out, fw{staleLink(w.Model, w.Window, w.Status, w.Stale), w.Releases})
	}
	return out
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

func mustWhy(t *testing.T, g *gate.Reader, model string, at time.Time) *gate.WhyReport {
	t.Helper()
	r, err := g.Why(t.Context(), model, at)
	if err != nil {
		t.Fatalf("Why(%s, %s): %v", model, state.FormatTime(at), err)
	}
	return r
}

func TestWhyChainEndsAtTheFailedUpstreamUnit(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		r := mustWhy(t, g, "mart.daily", t0.Add(10*time.Hour))
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
		// Frontier: both failed hours. A run of one alone releases the held
		// units whose every root it loads: mart.hourly and mart.flex at that
		// hour, 2. mart.daily day 0, report.hourly_rollup and report.running
		// day 0 wait on both hours; report.snapshot also on mart.daily's day
		// 1, which nothing loads. mart.fresh has no units.
		expectFrontier(t, r.Frontier,
			fw{link("raw.orders", hours(5, 6), state.Failed), 2},
			fw{link("raw.orders", hours(7, 8), state.Failed), 2})
		if r.FrontierMore != 0 {
			t.Errorf("frontier more %d", r.FrontierMore)
		}
	})
}

func TestWhyFollowsBlockedUnitsUpstream(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		failed := link("raw.orders", hours(5, 6), state.Failed)

		// report.snapshot (WHOLE mart.daily over [day 0, day 2)) → the
		// blocked mart.daily day 0 (ranked above the missing day 1) → raw 05.
		r := mustWhy(t, g, "report.snapshot", time.Time{})
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
		// Frontier: mart.daily day 0 (blocked) and day 1 (no unit). A run
		// of either alone releases nothing: day 0 is held itself (by raw 05
		// and 07: fix those first), and report.snapshot waits on day 0's
		// roots as well as on day 1.
		expectFrontier(t, r.Frontier,
			fw{link("mart.daily", days(0, 1), state.Blocked), 0},
			fw{link("mart.daily", days(1, 2), gate.StatusMissing), 0})

		// report.running day 0 (THROUGH) → mart.daily day 0 → raw 05.
		r = mustWhy(t, g, "report.running", t0.Add(12*time.Hour))
		expectStrings(t, "running chain", chainString(r.RootCause), []string{
			link("report.running", days(0, 1), state.Blocked),
			link("mart.daily", days(0, 1), state.Blocked),
			failed,
		})
		expectFrontier(t, r.Frontier, fw{link("mart.daily", days(0, 1), state.Blocked), 0})

		// A flexible model's stored unit containing the time.
		r = mustWhy(t, g, "mart.flex", t0.Add(7*time.Hour+30*time.Minute))
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
		g := lineage(t, s)
		// Day 1 of mart.daily has no unit, and neither has raw.orders: the
		// chain stops at the missing unit itself; the frontier is raw's 24
		// hours of day 1, all missing, each releasing nothing alone: nothing
		// downstream has a unit on day 1 but report.snapshot, which also
		// waits on raw 05 and 07.
		r := mustWhy(t, g, "mart.daily", t0.Add(36*time.Hour))
		if !r.Window.Equal(days(1, 2)) || r.Status != gate.StatusMissing {
			t.Fatalf("unit %s %s", r.Window, r.Status)
		}
		expectStrings(t, "chain", chainString(r.RootCause), []string{link("mart.daily", days(1, 2), gate.StatusMissing)})
		var want []fw
		for h := 24; h < 48; h++ {
			want = append(want, fw{link("raw.orders", hours(h, h+1), gate.StatusMissing), 0})
		}
		expectFrontier(t, r.Frontier, want...)

		// A flexible model with no unit at the time: the chunk window.
		r = mustWhy(t, g, "mart.flex", t0.Add(30*time.Hour+5*time.Minute))
		if !r.Window.Equal(hours(30, 31)) || r.Status != gate.StatusMissing {
			t.Errorf("flex missing unit %s %s", r.Window, r.Status)
		}

		// An applied unit: satisfied, nothing to follow, nothing to apply;
		// raw 03's applied_at is the run's clock, 2026-01-03T00:00Z, so at an
		// --as-of two hours later both ages are 2h.
		g.Now = at(t0.Add(50 * time.Hour))
		r = mustWhy(t, g, "mart.hourly", t0.Add(3*time.Hour))
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
		g := lineage(t, s)
		// Hour 05 re-pended by an operator: raw.orders has no upstream, so
		// the pending unit is the root (nothing blocks it).
		if n := mark(t, s, "raw.orders", hours(5, 6), state.Pending, g.Now()); n != 1 {
			t.Fatalf("mark: %d", n)
		}
		r := mustWhy(t, g, "mart.hourly", t0.Add(5*time.Hour+30*time.Minute))
		expectStrings(t, "chain", chainString(r.RootCause), []string{
			link("mart.hourly", hours(5, 6), state.Blocked),
			link("raw.orders", hours(5, 6), state.Pending),
		})
		// mart.daily still follows the failed hour 07 first.
		r = mustWhy(t, g, "mart.daily", t0)
		expectStrings(t, "daily chain", chainString(r.RootCause), []string{
			link("mart.daily", days(0, 1), state.Blocked),
			link("raw.orders", hours(7, 8), state.Failed),
		})
		// Each hour alone releases mart.hourly and mart.flex at that hour.
		expectFrontier(t, r.Frontier,
			fw{link("raw.orders", hours(5, 6), state.Pending), 2},
			fw{link("raw.orders", hours(7, 8), state.Failed), 2})

		// Both hours marked applied: the stored unit is still blocked, but
		// its gate is satisfied now; it is its own root and needs no upstream.
		if n := mark(t, s, "raw.orders", hours(5, 8), state.Applied, g.Now()); n != 2 {
			t.Fatalf("mark: %d", n)
		}
		r = mustWhy(t, g, "mart.daily", t0)
		if r.Status != state.Blocked || !r.Satisfied || len(r.Frontier) != 0 {
			t.Errorf("repaired: status %s satisfied %v frontier %v", r.Status, r.Satisfied, frontierOf(r.Frontier))
		}
		expectStrings(t, "repaired chain", chainString(r.RootCause), []string{link("mart.daily", days(0, 1), state.Blocked)})
	})
}

func TestWhyStaleUpstream(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		// raw 03 was applied at 2026-01-03T00:00Z; three hours later the
		// 1h LATEST freshness of mart.fresh blocks its hour 03, as a run
		// then leaves it (enginetest.StaleUpstream, checked against a real
		// run).
		g.Now = at(t0.Add(51 * time.Hour))
		h3 := hours(3, 4)
		const reason = "raw.orders (ENCAPSULATE, stale): newest applied_at 2026-01-03T00:00:00Z is older than 1h"
		enginetest.Units(t, s, enginetest.UnitOpts{Model: "mart.fresh", Window: h3, Status: state.Blocked, At: g.Now(), BlockedReason: reason})
		r := mustWhy(t, g, "mart.fresh", t0.Add(3*time.Hour))
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
		// Re-applying raw 03 releases mart.fresh 03 itself, whose only root
		// is that row; mart.daily day 0, the reports and the marts' other
		// hours wait on raw 05 and 07: 1.
		expectFrontier(t, r.Frontier, fw{link("raw.orders", h3, state.Applied) + " stale", 1})

		// As of half an hour after the load it was fresh: nothing to do.
		g.Now = at(t0.Add(48*time.Hour + 30*time.Minute))
		r = mustWhy(t, g, "mart.fresh", t0.Add(3*time.Hour))
		if !r.Satisfied || len(r.Frontier) != 0 || *r.Upstreams[0].NewestAge != 30*time.Minute {
			t.Errorf("fresh: %+v", r)
		}
	})
}

func TestWhyRefusesBadInput(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		before := storeText(t, s)
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
			if _, err := g.Why(t.Context(), c.model, c.at); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Why(%s) = %v, want %q", c.model, err, c.want)
			}
		}
		if storeText(t, s) != before {
			t.Error("Why changed the store")
		}
	})
}

func TestWhyHardGateError(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		// ext.orders is gated but registered nowhere: a hard error that
		// fails the unit; no upstream window can fix it.
		g := reader(enginetest.UnregisteredUpstream.Seed(t, s))
		day0 := days(0, 1)
		r := mustWhy(t, g, "mart.x", t0)
		if r.Status != state.Failed || r.Satisfied || len(r.Frontier) != 0 || len(r.Upstreams) != 1 || r.Upstreams[0].Err == nil ||
			!strings.Contains(r.Upstreams[0].Err.Error(), "not registered") || !strings.Contains(r.Error, "not registered") {
			t.Errorf("report %+v", r)
		}
		expectStrings(t, "chain", chainString(r.RootCause), []string{link("mart.x", day0, state.Failed)})
	})
}

// TestWhyRequireCurrentFromTheRegistration: a reader without a spec (a
// store-only engine, the UI opened on production) reads require_current
// from the registration and judges the same: raw.orders' first day,
// applied under v1 and registered since as v2, is outdated for mart.strict.
func TestWhyRequireCurrentFromTheRegistration(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		now := t0.Add(48 * time.Hour)
		enginetest.RegisterYAML(t, s, enginetest.RequireCurrentSpec, now)
		var us []enginetest.UnitOpts
		for h := range 24 {
			us = append(us, enginetest.UnitOpts{Model: "raw.orders", Window: hours(h, h+1), Status: state.Applied, At: now})
		}
		enginetest.Units(t, s, us...)
		enginetest.RegisterYAML(t, s, enginetest.RequireCurrentSpecV2, now)
		bare := &gate.Reader{Store: s, Now: at(now)}
		r := mustWhy(t, bare, "mart.strict", t0)
		if len(r.Upstreams) != 1 || r.Upstreams[0].Satisfied || len(r.Upstreams[0].Outdated) != 1 {
			t.Errorf("a store-only why: %+v; want raw.orders' day 1 outdated", r.Upstreams)
		}
	})
}
