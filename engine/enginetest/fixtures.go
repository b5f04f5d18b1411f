package enginetest

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// A Fixture is a named state worked out by hand: a spec, the clock it is
// seen at, and every unit it holds. Seed writes it with the factory; Runs
// are the engine runs that produce the same units from an empty store,
// which engine's factory_matches_run_test replays on both backends, so a
// fixture cannot drift from what the engine does.
type Fixture struct {
	Name string
	// Spec is the fixture's bollhav.yaml.
	Spec string
	// Now is the engine clock the state is seen at.
	Now time.Time
	// Runs produce Units: each is a run of the named models over Window
	// (the contract range when zero) with the engine's clock at At.
	Runs []FixtureRun
	// Units are the units the runs leave; a unit's RunID is the number of
	// the run (from 1) that left it, a run id on a fresh store.
	Units []UnitOpts
}

// FixtureRun is one engine run of a fixture.
type FixtureRun struct {
	At     time.Time
	Models []string
	Window state.Window
	// Status is how the run ends: failed when a unit failed; a run that
	// only blocked units succeeded.
	Status state.RunStatus
}

// World is a seeded fixture: the store, the parsed spec and the clock.
type World struct {
	Store state.Store
	Spec  *spec.Spec
	Now   time.Time
	// TaskIDs are the registered models' task ids.
	TaskIDs map[string]int
	// Runs are the ids of the fixture's runs, in order.
	Runs []int64
}

// Clock is a clock fixed at w.Now, for an engine's or a gate reader's Now.
func (w *World) Clock() func() time.Time {
	now := w.Now
	return func() time.Time { return now }
}

// Seed writes f into s: the spec registered as of its first run, a run
// record for each run, and its units.
func (f Fixture) Seed(t testing.TB, s state.Store) *World {
	t.Helper()
	sp := Parse(t, f.Spec)
	regAt := f.Now
	if len(f.Runs) > 0 {
		regAt = f.Runs[0].At
	}
	w := &World{Store: s, Spec: sp, Now: f.Now, TaskIDs: Register(t, s, "", sp, regAt)}
	for _, r := range f.Runs {
		w.Runs = append(w.Runs, Run(t, s, RunOpts{Models: r.Models, Window: r.Window, Status: r.Status, StartedAt: r.At}))
	}
	us := make([]UnitOpts, len(f.Units))
	for i, u := range f.Units {
		if u.RunID > 0 {
			u.RunID = w.Runs[u.RunID-1]
		}
		us[i] = u
	}
	Units(t, s, us...)
	return w
}

// T0 is where the fixtures' calendars start: 2026-01-01T00:00Z.
var T0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Hours is the window from hour a to hour b after T0.
func Hours(a, b int) state.Window {
	return state.Window{Since: T0.Add(time.Duration(a) * time.Hour), Until: T0.Add(time.Duration(b) * time.Hour)}
}

// Days is the window from day a to day b after T0.
func Days(a, b int) state.Window { return Hours(24*a, 24*b) }

// hourly is one unit of model for each hour of [a, b) with the status
// status, except the hours in other, which get theirs.
func hourly(model string, a, b int, u UnitOpts, other map[int]UnitOpts) []UnitOpts {
	var out []UnitOpts
	for h := a; h < b; h++ {
		o, ok := other[h]
		if !ok {
			o = u
		}
		o.Model, o.Window = model, Hours(h, h+1)
		out = append(out, o)
	}
	return out
}

// The why lineage's blocked reasons, as the gate words them.
const (
	rawMissing0507   = "raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z), [2026-01-01T07:00:00Z, 2026-01-01T08:00:00Z)"
	rawMissing05     = "raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)"
	rawMissing07     = "raw.orders (ENCAPSULATE): missing [2026-01-01T07:00:00Z, 2026-01-01T08:00:00Z)"
	hourlyMissing    = "mart.hourly (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z), [2026-01-01T07:00:00Z, 2026-01-01T08:00:00Z)"
	dailyMissingDay0 = "mart.daily (THROUGH): missing [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)"
	dailyMissingAll  = "mart.daily (WHOLE): missing [2026-01-01T00:00:00Z, 2026-01-03T00:00:00Z)"
	// SourceUnavailable is the error of raw.orders' failing hours in the
	// lineage fixtures: its command's exit status and stderr.
	SourceUnavailable = "exit status 3: source unavailable"
)

// LineageSpec is a small lineage worked out by hand (times are 2026-01-01
// unless said otherwise):
//
//	raw.orders (1h, ingest) — its command fails for the hours 05 and 07
//	until a file "fixed" exists in the spec directory
//	├─ ENCAPSULATE mart.daily (1d, core)
//	│  ├─ THROUGH report.running (1d, reports)
//	│  └─ WHOLE   report.snapshot (timeless, reports)
//	├─ ENCAPSULATE mart.hourly (1h, core)
//	│  └─ ENCAPSULATE report.hourly_rollup (1d, reports)
//	├─ ENCAPSULATE mart.flex (1h flexible, core)
//	└─ ENCAPSULATE + freshness 1h LATEST mart.fresh (1h, core)
const LineageSpec = `models:
  - name: raw.orders
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run:
      command:
        - sh
        - -c
        - 'case "$BOLLHAV_SINCE" in 2026-01-01T05:00:00Z|2026-01-01T07:00:00Z) test -f fixed || { echo source unavailable >&2; exit 3; };; esac'
  - {name: mart.daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
  - {name: mart.hourly, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
  - {name: mart.flex, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
  - name: mart.fresh
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.orders, contract: encapsulate, freshness: {within: 1h, scope: latest}}
    run: {command: ["true"]}
  - {name: report.running, pipeline: reports, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: mart.daily, contract: through}], run: {command: ["true"]}}
  - {name: report.snapshot, pipeline: reports, temporality: timeless,
     upstream: [{name: mart.daily, contract: whole}], run: {command: ["true"]}}
  - {name: report.hourly_rollup, pipeline: reports, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: mart.hourly, contract: encapsulate}], run: {command: ["true"]}}
`

// Lineage is LineageSpec after two runs at 2026-01-03T00:00Z: raw.orders
// over the first day (22 hours applied, 05 and 07 failed), then every mart
// and report except mart.fresh over the first day:
//
//	raw.orders            00..23 of day 0: applied except 05, 07 failed; no units on day 1
//	mart.daily            day 0 blocked (missing 05-06, 07-08)
//	mart.hourly           00..23: applied except 05, 07 blocked
//	mart.flex             00..23: applied except 05, 07 blocked
//	report.running        day 0 blocked (THROUGH: mart.daily day 0 missing)
//	report.snapshot       blocked (WHOLE: mart.daily [day 0, day 2) missing)
//	report.hourly_rollup  day 0 blocked (mart.hourly 05-06, 07-08 missing)
//
// It is a failed hour with a day blocked behind it, and what reaches
// through that day downstream.
var Lineage = lineage()

func lineage() Fixture {
	now := T0.Add(48 * time.Hour)
	day0 := Days(0, 1)
	applied := UnitOpts{Status: state.Applied, At: now}
	f := Fixture{
		Name: "lineage",
		Spec: LineageSpec,
		Now:  now,
		Runs: []FixtureRun{
			{At: now, Models: []string{"raw.orders"}, Window: day0, Status: state.RunFailed},
			{At: now, Models: []string{"mart.daily", "mart.hourly", "mart.flex", "report.running", "report.snapshot", "report.hourly_rollup"},
				Window: day0, Status: state.RunSucceeded},
		},
	}
	failed := UnitOpts{Status: state.Failed, At: now, Error: SourceUnavailable, RunID: 1}
	applied.RunID = 1
	f.Units = hourly("raw.orders", 0, 24, applied, map[int]UnitOpts{5: failed, 7: failed})
	blocked := func(model string, w state.Window, reason string) UnitOpts {
		return UnitOpts{Model: model, Window: w, Status: state.Blocked, At: now, BlockedReason: reason, RunID: 2}
	}
	applied.RunID = 2
	for _, m := range []string{"mart.hourly", "mart.flex"} {
		f.Units = append(f.Units, hourly(m, 0, 24, applied, map[int]UnitOpts{
			5: blocked(m, Hours(5, 6), rawMissing05), 7: blocked(m, Hours(7, 8), rawMissing07)})...)
	}
	f.Units = append(f.Units,
		blocked("mart.daily", day0, rawMissing0507),
		blocked("report.running", day0, dailyMissingDay0),
		blocked("report.snapshot", state.Window{}, dailyMissingAll),
		blocked("report.hourly_rollup", day0, hourlyMissing),
	)
	return f
}

// FailedHourSpec is one hourly source and the daily mart over it, in one
// pipeline; the source's command fails for hour 05 of 2026-01-01.
const FailedHourSpec = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run:
      command:
        - sh
        - -c
        - 'case "$BOLLHAV_SINCE" in 2026-01-01T05:00:00Z) echo source unavailable >&2; exit 3;; esac'
  - {name: mart.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`

// FailedHour is a failed hour with a day blocked behind it: FailedHourSpec
// after a run of raw.orders over 2026-01-01 (hour 05 failed, the other 23
// applied) and one of mart.daily (its day blocked), both at 2026-01-02T00:00Z.
var FailedHour = failedHour()

func failedHour() Fixture {
	now := T0.Add(24 * time.Hour)
	day0 := Days(0, 1)
	f := Fixture{
		Name: "failed-hour",
		Spec: FailedHourSpec,
		Now:  now,
		Runs: []FixtureRun{
			{At: now, Models: []string{"raw.orders"}, Window: day0, Status: state.RunFailed},
			{At: now, Models: []string{"mart.daily"}, Window: day0, Status: state.RunSucceeded},
		},
	}
	f.Units = hourly("raw.orders", 0, 24, UnitOpts{Status: state.Applied, At: now, RunID: 1},
		map[int]UnitOpts{5: {Status: state.Failed, At: now, Error: SourceUnavailable, RunID: 1}})
	f.Units = append(f.Units, UnitOpts{Model: "mart.daily", Window: day0, Status: state.Blocked, At: now, BlockedReason: rawMissing05, RunID: 2})
	return f
}

// StaleUpstreamSpec is an hourly source and an hourly mart that wants the
// source's newest load within the hour.
const StaleUpstreamSpec = `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - name: mart.fresh
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.orders, contract: encapsulate, freshness: {within: 1h, scope: latest}}
    run: {command: ["true"]}
`

// StaleUpstream is a stale upstream: StaleUpstreamSpec's raw.orders loaded
// over 2026-01-01 at 2026-01-02T00:00Z, and mart.fresh run over the hours
// 00–04 a day later, all blocked because raw.orders' newest load is older
// than the hour its freshness allows.
var StaleUpstream = staleUpstream()

// StaleReason is the blocked reason of StaleUpstream's mart.fresh units.
const StaleReason = "raw.orders (ENCAPSULATE, stale): newest applied_at 2026-01-02T00:00:00Z is older than 1h"

func staleUpstream() Fixture {
	loaded, now := T0.Add(24*time.Hour), T0.Add(48*time.Hour)
	f := Fixture{
		Name: "stale-upstream",
		Spec: StaleUpstreamSpec,
		Now:  now,
		Runs: []FixtureRun{
			{At: loaded, Models: []string{"raw.orders"}, Window: Days(0, 1), Status: state.RunSucceeded},
			{At: now, Models: []string{"mart.fresh"}, Window: Hours(0, 5), Status: state.RunSucceeded},
		},
	}
	f.Units = hourly("raw.orders", 0, 24, UnitOpts{Status: state.Applied, At: loaded, RunID: 1}, nil)
	f.Units = append(f.Units, hourly("mart.fresh", 0, 5, UnitOpts{Status: state.Blocked, At: now, BlockedReason: StaleReason, RunID: 2}, nil)...)
	return f
}

// UnregisteredUpstreamSpec is a daily model gated on a model registered
// nowhere.
const UnregisteredUpstreamSpec = `models:
  - {name: mart.x, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: ext.orders, contract: encapsulate}], run: {command: ["true"]}}
`

// UnregisteredUpstream is a hard gate error: UnregisteredUpstreamSpec's
// mart.x run over 2026-01-01 at 2026-01-03T00:00Z, its day failed because
// its gated upstream is not registered — no upstream window can fix it.
var UnregisteredUpstream = Fixture{
	Name: "unregistered-upstream",
	Spec: UnregisteredUpstreamSpec,
	Now:  T0.Add(48 * time.Hour),
	Runs: []FixtureRun{{At: T0.Add(48 * time.Hour), Models: []string{"mart.x"}, Window: Days(0, 1), Status: state.RunFailed}},
	Units: []UnitOpts{{Model: "mart.x", Window: Days(0, 1), Status: state.Failed, At: T0.Add(48 * time.Hour), RunID: 1,
		Error: "ext.orders (ENCAPSULATE): gated upstream is not registered (register it with `bollhav apply`, or drop the contract to make it ungated)"}},
}

// LineageStale is Lineage three hours on, at 2026-01-03T03:00Z, after two
// more runs then: mart.fresh over day 0 — its 22 hours over applied
// raw.orders rows blocked stale (the rows are past its 1h freshness), 05
// and 07 blocked on the failed hours — and mart.daily over day 1, blocked
// on raw.orders' day 1, which was never loaded.
var LineageStale = lineageStale()

func lineageStale() Fixture {
	f := lineage()
	f.Name = "lineage-stale"
	f.Now = T0.Add(51 * time.Hour)
	f.Runs = append(f.Runs,
		FixtureRun{At: f.Now, Models: []string{"mart.fresh"}, Window: Days(0, 1), Status: state.RunSucceeded},
		FixtureRun{At: f.Now, Models: []string{"mart.daily"}, Window: Days(1, 2), Status: state.RunSucceeded})
	stale := UnitOpts{Status: state.Blocked, At: f.Now, RunID: 3,
		BlockedReason: "raw.orders (ENCAPSULATE, stale): newest applied_at 2026-01-03T00:00:00Z is older than 1h"}
	f.Units = append(f.Units, hourly("mart.fresh", 0, 24, stale, map[int]UnitOpts{
		5: {Status: state.Blocked, At: f.Now, RunID: 3, BlockedReason: rawMissing05},
		7: {Status: state.Blocked, At: f.Now, RunID: 3, BlockedReason: rawMissing07},
	})...)
	f.Units = append(f.Units, UnitOpts{Model: "mart.daily", Window: Days(1, 2), Status: state.Blocked, At: f.Now, RunID: 4,
		BlockedReason: "raw.orders (ENCAPSULATE): missing [2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z)"})
	return f
}

// ExactOverFlexSpec gates an hourly mart EXACT on a flexible source: a
// hard gate error, since a flexible model's units never promise a window.
const ExactOverFlexSpec = `models:
  - {name: raw.flex, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex},
     run: {command: ["true"]}}
  - {name: mart.exact, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.flex, contract: exact}], run: {command: ["true"]}}
`

const exactOverFlexError = "raw.flex (EXACT): EXACT on a flexible upstream can never match: its rows are coalesced into ranges, so no exact-grain row exists (Guard A); use ENCAPSULATE"

// ExactOverFlex is ExactOverFlexSpec run over the hours 00–02 of
// 2026-01-01 at 2026-01-03T00:00Z: raw.flex applied, mart.exact's two
// hours failed on the hard gate error.
var ExactOverFlex = exactOverFlex()

func exactOverFlex() Fixture {
	now := T0.Add(48 * time.Hour)
	f := Fixture{
		Name: "exact-over-flex",
		Spec: ExactOverFlexSpec,
		Now:  now,
		Runs: []FixtureRun{{At: now, Models: []string{"raw.flex", "mart.exact"}, Window: Hours(0, 2), Status: state.RunFailed}},
	}
	f.Units = hourly("raw.flex", 0, 2, UnitOpts{Status: state.Applied, At: now, RunID: 1}, nil)
	f.Units = append(f.Units, hourly("mart.exact", 0, 2, UnitOpts{Status: state.Failed, At: now, RunID: 1, Error: exactOverFlexError}, nil)...)
	return f
}

// RequireCurrentSpec is an hourly source whose command a test changes (v1
// to v2, a definition change) and two daily marts over it under the same
// contract: mart.strict requires raw.orders current, mart.loose does not.
const RequireCurrentSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {command: ["./load.sh", "v1"]}}
  - {name: mart.strict, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate, require_current: true}], run: {command: ["./mart.sh"]}}
  - {name: mart.loose, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["./mart.sh"]}}
`

// RequireCurrentSpecV2 is RequireCurrentSpec with raw.orders' command
// changed: every raw.orders row applied under RequireCurrentSpec is then
// outdated.
var RequireCurrentSpecV2 = strings.Replace(RequireCurrentSpec, `"v1"`, `"v2"`, 1)

// LineageSpecOf is LineageSpec with only the named models, in its order:
// a front end's tests that draw the lineage smaller take it from here, so
// the lineage is drawn once.
func LineageSpecOf(models ...string) string {
	keep := map[string]bool{}
	for _, m := range models {
		keep[m] = true
	}
	head, body, _ := strings.Cut(LineageSpec, "\n")
	var b strings.Builder
	b.WriteString(head + "\n")
	// A model starts at "  - ", as a block ("  - name: x\n") or a flow
	// mapping ("  - {name: x, "), and runs to the next.
	blocks := strings.Split(body, "\n  - ")
	for i, blk := range blocks {
		if i == 0 {
			blk = strings.TrimPrefix(blk, "  - ")
		}
		name := strings.TrimPrefix(strings.TrimPrefix(blk, "{"), "name: ")
		name = name[:strings.IndexAny(name, ",\n")]
		if keep[name] {
			b.WriteString("  - " + strings.TrimSuffix(blk, "\n") + "\n")
		}
	}
	return b.String()
}
