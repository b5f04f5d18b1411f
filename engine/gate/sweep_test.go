package gate_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// readinessOf folds the per-unit gate (GateUnitFromStore, the path a run
// takes) the way a sweep reports it: a hard error first, then a missing
// range, then an upstream applied only under an earlier definition
// (require_current), then freshness.
func readinessOf(g gate.UnitGate) gate.Readiness {
	if g.Err != nil {
		return gate.Failing
	}
	if g.Satisfied {
		return gate.Ready
	}
	outdated := false
	for _, v := range g.Verdicts {
		if v.Satisfied || v.Stale || v.Skipped {
			continue
		}
		// Only outdated: no range missing, and the reason says so (a
		// timeless upstream's existence row has no range to list).
		if len(v.Missing) == 0 && (len(v.Outdated) > 0 || strings.HasSuffix(v.Reason, gate.OutdatedText)) {
			outdated = true
			continue
		}
		return gate.Waiting
	}
	if outdated {
		return gate.Outdated
	}
	return gate.Stale
}

// registered is yaml registered in s's environment env at *now, and a gate
// reader over it whose clock reads *now (a test moves it by setting *now).
func registered(t *testing.T, s state.Store, env, yaml string, now *time.Time) *gate.Reader {
	t.Helper()
	sp := enginetest.Parse(t, yaml)
	enginetest.Register(t, s, env, sp, *now)
	return &gate.Reader{Store: s, Spec: sp, Env: spec.Env{Suffix: env}, Now: func() time.Time { return *now }}
}

// sweepAll runs a sweep and returns its units.
func sweepAll(t *testing.T, g *gate.Reader, f gate.BlockedFilter) (*gate.SweepReport, []gate.SweptUnit) {
	t.Helper()
	var units []gate.SweptUnit
	rep, err := g.Sweep(t.Context(), f, func(u gate.SweptUnit) error {
		units = append(units, u)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep, units
}

// checkAgainstGate asserts that every swept unit's readiness is what the
// run's own gate (GateUnitFromStore) says about it.
func checkAgainstGate(t *testing.T, g *gate.Reader, units []gate.SweptUnit) map[gate.Readiness]int {
	t.Helper()
	seen := map[gate.Readiness]int{}
	for _, u := range units {
		m := g.Spec.Model(u.Model)
		var w *state.Window
		if m.Temporality == spec.Temporal {
			w = &u.Window
		}
		ug, err := g.Unit(t.Context(), m, w, g.Now())
		if err != nil {
			t.Fatal(err)
		}
		if want := readinessOf(ug); u.Readiness != want {
			t.Errorf("%s %s (%s): sweep says %s, the gate %s (%s%v)", u.Model, u.Window, u.Status, u.Readiness, want, ug.BlockedReason, ug.Err)
		}
		// The hard error told from the registrations alone, as the
		// incidents report tells a gate error, is this unit's.
		hard, err := g.HardErrorOf(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(hard) != fmt.Sprint(ug.Err) {
			t.Errorf("%s %s: the model's hard error is %v, the unit's gate says %v", u.Model, u.Window, hard, ug.Err)
		}
		seen[u.Readiness]++
	}
	return seen
}

// hideSweep hides the store's SweepReader, so GateSweep reads model by
// model through ScanUnits.
type hideSweep struct{ state.Store }

func TestGateSweepAgreesWithTheGateOnAGeneratedProject(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := generated(t, s, 6000)
		rep, units := sweepAll(t, g, gate.BlockedFilter{})
		seen := checkAgainstGate(t, g, units)
		if seen[gate.Ready] == 0 || seen[gate.Waiting] == 0 {
			t.Errorf("want ready and waiting units in a generated project, got %v", seen)
		}

		// Every unit that is not applied is judged, once, and the report
		// counts them by model.
		outstanding, released := 0, 0
		for _, m := range g.Spec.Models {
			st, err := s.Stats(t.Context(), "", m.Name)
			if err != nil {
				t.Fatal(err)
			}
			outstanding += st.Counts[state.Pending] + st.Counts[state.Running] + st.Counts[state.Blocked] + st.Counts[state.Failed]
		}
		byModel := map[string]gate.ModelReadiness{}
		for _, m := range rep.Models {
			byModel[m.Model] = m
		}
		counted := map[string]int{}
		for _, u := range units {
			counted[u.Model]++
			if u.Status == state.Blocked && u.Readiness == gate.Ready {
				released++
			}
		}
		if len(units) != outstanding || rep.Units != outstanding {
			t.Errorf("swept %d units (report %d); the store holds %d that are not applied", len(units), rep.Units, outstanding)
		}
		sumReleased := 0
		for name, n := range counted {
			m := byModel[name]
			if m.Outstanding != n || m.Ready+m.Waiting+m.Outdated+m.Stale+m.Errors != n {
				t.Errorf("%s: report %+v, %d units swept", name, m, n)
			}
			sumReleased += m.Released
		}
		if sumReleased != released || released == 0 {
			t.Errorf("released: report %d, units %d; want some blocked units ready now", sumReleased, released)
		}

		// A store without SweepReader gives the same answers, and so does
		// an engine opened from the store alone (definitions as registered).
		plain := &gate.Reader{Store: hideSweep{s}, Spec: g.Spec, Now: g.Now}
		_, again := sweepAll(t, plain, gate.BlockedFilter{})
		if fmt.Sprint(again) != fmt.Sprint(units) {
			t.Error("a store without SweepReader swept differently")
		}
		storeOnly := &gate.Reader{Store: s, Now: g.Now}
		_, again = sweepAll(t, storeOnly, gate.BlockedFilter{})
		if fmt.Sprint(again) != fmt.Sprint(units) {
			t.Error("an engine without the spec swept differently")
		}
	})
}

// SweepModels judges the models it names, and only them, as the whole
// sweep judges them (the Blocked view's verdicts at scale); a model not
// registered is left out, and none named judges nothing.
func TestGateSweepOfSomeModelsJudgesThemAsTheWholeSweep(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := generated(t, s, 3000)
		_, all := sweepAll(t, g, gate.BlockedFilter{})
		want := map[string]string{}
		var models []string
		for _, u := range all {
			if u.Status == state.Blocked && !slices.Contains(models, u.Model) && len(models) < 3 {
				models = append(models, u.Model)
			}
		}
		for _, u := range all {
			if slices.Contains(models, u.Model) {
				want[u.Model+" "+u.Window.String()] = u.Readiness.String()
			}
		}
		if len(models) < 2 || len(want) == 0 {
			t.Fatalf("want blocked units of a few models to judge, got models %v", models)
		}
		got := map[string]string{}
		rep, err := g.SweepModels(t.Context(), append(models, "no.such.model"), func(u gate.SweptUnit) error {
			got[u.Model+" "+u.Window.String()] = u.Readiness.String()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) || rep.Units != len(want) {
			t.Errorf("SweepModels(%v) judged %d units (report %d), the whole sweep %d of them, or differently", models, len(got), rep.Units, len(want))
		}
		rep, err = g.SweepModels(t.Context(), nil, nil)
		if err != nil || rep.Units != 0 {
			t.Errorf("SweepModels of no model: %d units judged, %v", rep.Units, err)
		}
	})
}

// sweepSpec has one model per hard error and skip the gate knows, over a
// fixed and a flexible hourly upstream and a timeless one.
const sweepSpec = `
models:
  - {name: raw.fix, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}}
  - {name: raw.flex, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}}
  - {name: ref.config, temporality: timeless}
  - {name: mart.exact_on_flex, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.flex, contract: exact}]}
  - {name: mart.window_on_timeless, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: ref.config, contract: encapsulate}]}
  - {name: mart.unregistered, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: other.model, contract: whole}]}
  - name: mart.dev_skip
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: other.model, contract: encapsulate, deactivate_for_dev: true}
      - {name: raw.fix, contract: exact}
  - name: mart.fresh
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.fix, contract: through, freshness: {within: 3h, scope: latest}}
      - {name: raw.flex, contract: encapsulate, freshness: {within: 3h, scope: all}}
  - {name: mart.latest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.fix, contract: through, freshness: {within: 3h}}]}
  - {name: report.snapshot, temporality: timeless,
     upstream: [{name: raw.fix, contract: whole}, {name: ref.config, contract: whole}]}
`

func TestGateSweepHardErrorsSkipsAndFreshness(t *testing.T) {
	for _, suffix := range []string{"", "pr1"} {
		t.Run("env="+spec.Env{Suffix: suffix}.String(), func(t *testing.T) { sweepHardErrors(t, suffix) })
	}
}

func sweepHardErrors(t *testing.T, suffix string) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		hour := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
		now := hour(10)
		g := registered(t, s, suffix, sweepSpec, &now)
		env := suffix
		prefill := func(model string, from, to int) {
			var ws []state.Window
			for h := from; h < to; h++ {
				ws = append(ws, state.Window{Since: hour(h), Until: hour(h + 1)})
			}
			if from < 0 {
				ws = []state.Window{{}}
			}
			if _, err := s.Prefill(ctx, state.PrefillRequest{Env: env, Model: model, Windows: ws, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		apply := func(model string, from, to int, at time.Time) {
			w := state.Window{}
			if from >= 0 {
				w = state.Window{Since: hour(from), Until: hour(to)}
			}
			if _, err := s.SetStatus(ctx, state.StatusChange{Env: env, Model: model, Window: w, From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: at, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		// raw.fix: hours 0-9, applied but for a hole at hour 4; hours
		// 0-5 loaded at 01:00 (old), 6-9 at 09:30 (fresh).
		prefill("raw.fix", 0, 10)
		apply("raw.fix", 0, 4, hour(1))
		apply("raw.fix", 5, 6, hour(1))
		apply("raw.fix", 6, 10, hour(9).Add(30*time.Minute))
		// raw.flex: two-hour units over hours 0-8, loaded at 08:00.
		if _, err := s.Prefill(ctx, state.PrefillRequest{Env: env, Model: "raw.flex", Windows: []state.Window{{Since: hour(0), Until: hour(2)}, {Since: hour(2), Until: hour(4)},
			{Since: hour(4), Until: hour(6)}, {Since: hour(6), Until: hour(8)}}, Now: now}); err != nil {
			t.Fatal(err)
		}
		apply("raw.flex", 0, 8, hour(8))
		prefill("ref.config", -1, 0)
		apply("ref.config", -1, 0, hour(2))
		for _, m := range []string{"mart.exact_on_flex", "mart.window_on_timeless", "mart.unregistered", "mart.dev_skip", "mart.fresh", "mart.latest"} {
			prefill(m, 6, 10)
		}
		prefill("report.snapshot", -1, 0)

		_, units := sweepAll(t, g, gate.BlockedFilter{})
		checkAgainstGate(t, g, units)
		if _, err := g.Sweep(ctx, gate.BlockedFilter{Model: "mart.nope"}, nil); err == nil || !strings.Contains(err.Error(), "mart.nope") {
			t.Errorf("a sweep of an unknown model: %v; want an error naming it", err)
		}

		// By hand, at 10:00, for the windows 06..10:
		//  exact_on_flex, window_on_timeless, unregistered: hard errors.
		//  dev_skip: other.model skipped in pr1 (a hard error in prod,
		//    where it is not registered); raw.fix EXACT rows exist.
		//  fresh: THROUGH raw.fix misses hour 4 for every window;
		//    ENCAPSULATE raw.flex misses hours 8-10.
		//  snapshot: WHOLE raw.fix misses hour 4.
		want := map[string][]gate.Readiness{
			"mart.exact_on_flex":      {gate.Failing, gate.Failing, gate.Failing, gate.Failing},
			"mart.window_on_timeless": {gate.Failing, gate.Failing, gate.Failing, gate.Failing},
			"mart.unregistered":       {gate.Failing, gate.Failing, gate.Failing, gate.Failing},
			"mart.dev_skip":           {gate.Ready, gate.Ready, gate.Ready, gate.Ready},
			"mart.fresh":              {gate.Waiting, gate.Waiting, gate.Waiting, gate.Waiting},
			"mart.latest":             {gate.Waiting, gate.Waiting, gate.Waiting, gate.Waiting},
			"report.snapshot":         {gate.Waiting},
			"raw.fix":                 {gate.Ready}, // hour 4: no gated upstream
		}
		if suffix == "" {
			want["mart.dev_skip"] = []gate.Readiness{gate.Failing, gate.Failing, gate.Failing, gate.Failing}
		}
		expectReadiness(t, units, want)

		// Fill the hole at hour 4 at 02:00: THROUGH is complete and its
		// newest row (09:30) is within 3h (LATEST); raw.flex's only row
		// over 06-08, loaded 08:00, is too (ALL). Windows past hour 8
		// still miss raw.flex.
		apply("raw.fix", 4, 5, hour(2))
		_, units = sweepAll(t, g, gate.BlockedFilter{Model: "mart.fresh"})
		checkAgainstGate(t, g, units)
		expectReadiness(t, units, map[string][]gate.Readiness{"mart.fresh": {gate.Ready, gate.Ready, gate.Waiting, gate.Waiting}})
		_, units = sweepAll(t, g, gate.BlockedFilter{Pipeline: "default"})
		for _, u := range units {
			if u.Model == "raw.fix" {
				t.Errorf("raw.fix is all applied now, but the sweep judged %s", u.Window)
			}
		}
		_, units = sweepAll(t, g, gate.BlockedFilter{Model: "report.snapshot"})
		expectReadiness(t, units, map[string][]gate.Readiness{"report.snapshot": {gate.Ready}})

		// Three hours later the raw.flex rows are older than 3h (ALL):
		// stale, though nothing is missing before hour 8.
		now = hour(11).Add(time.Minute)
		_, units = sweepAll(t, g, gate.BlockedFilter{Model: "mart.fresh"})
		checkAgainstGate(t, g, units)
		expectReadiness(t, units, map[string][]gate.Readiness{"mart.fresh": {gate.Stale, gate.Stale, gate.Waiting, gate.Waiting}})
		_, units = sweepAll(t, g, gate.BlockedFilter{Model: "mart.latest"})
		expectReadiness(t, units, map[string][]gate.Readiness{"mart.latest": {gate.Ready, gate.Ready, gate.Ready, gate.Ready}})

		// At 13:00 raw.fix's newest row (09:30) is older than 3h too:
		// THROUGH with LATEST is stale.
		now = hour(13)
		_, units = sweepAll(t, g, gate.BlockedFilter{Model: "mart.latest"})
		checkAgainstGate(t, g, units)
		expectReadiness(t, units, map[string][]gate.Readiness{"mart.latest": {gate.Stale, gate.Stale, gate.Stale, gate.Stale}})
	})
}

func expectReadiness(t *testing.T, units []gate.SweptUnit, want map[string][]gate.Readiness) {
	t.Helper()
	got := map[string][]gate.Readiness{}
	for _, u := range units {
		got[u.Model] = append(got[u.Model], u.Readiness)
	}
	for m, w := range want {
		if fmt.Sprint(got[m]) != fmt.Sprint(w) {
			t.Errorf("%s: %v, want %v", m, got[m], w)
		}
	}
	for m := range got {
		if _, ok := want[m]; !ok {
			t.Errorf("unexpected units of %s: %v", m, got[m])
		}
	}
}

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
  - {name: raw.hourly, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}}
  - {name: stg.latest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.hourly, contract: encapsulate, freshness: {within: 6h}}]}
  - {name: stg.all, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.hourly, contract: through, freshness: {within: 6h, scope: all}}]}
  - {name: stg.plain, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.hourly, contract: encapsulate}]}
`
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		now := t0.Add(10 * time.Hour)
		g := registered(t, s, "", text, &now)
		hours := func(from, to int) []state.Window {
			var ws []state.Window
			for h := from; h < to; h++ {
				ws = append(ws, enginetest.Hours(h, h+1))
			}
			return ws
		}
		for _, m := range g.Spec.Models {
			if _, err := s.Prefill(ctx, state.PrefillRequest{Model: m.Name, Windows: hours(0, 5), Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		for _, run := range []struct {
			from, to int
			ago      time.Duration
		}{{0, 2, 8 * time.Hour}, {2, 4, time.Hour}} {
			w := enginetest.Hours(run.from, run.to)
			if _, err := s.SetStatus(ctx, state.StatusChange{Model: "raw.hourly", Window: w, From: []state.UnitStatus{state.Pending},
				To: state.Applied, AppliedAt: now.Add(-run.ago), Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		_, units := sweepAll(t, g, gate.BlockedFilter{})
		expectReadiness(t, units, map[string][]gate.Readiness{
			"stg.latest": {gate.Stale, gate.Stale, gate.Ready, gate.Ready, gate.Waiting},
			"stg.all":    {gate.Stale, gate.Stale, gate.Stale, gate.Stale, gate.Waiting},
			"stg.plain":  {gate.Ready, gate.Ready, gate.Ready, gate.Ready, gate.Waiting},
			"raw.hourly": {gate.Ready},
		})
		checkAgainstGate(t, g, units)
	})
}

// A unit that misses a range on one upstream and is only stale on another
// waits for the range, as a run's gate says: the sweep (and the live
// index) once reported it stale, whichever upstream came first. Found by
// TestLiveGateEqualsAFullSweep.
func TestGateSweepMissingBeatsStale(t *testing.T) {
	const text = `
models:
  - {name: ref.config, temporality: timeless}
  - {name: raw.flex, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}}
  - name: mart.snapshot
    temporality: timeless
    upstream:
      - {name: ref.config, contract: whole, freshness: {within: 6h}}
      - {name: raw.flex, contract: whole}
`
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		now := t0.Add(10 * time.Hour)
		g := registered(t, s, "", text, &now)
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
		_, units := sweepAll(t, g, gate.BlockedFilter{Model: "mart.snapshot"})
		if len(units) != 1 || units[0].Readiness != gate.Waiting {
			t.Fatalf("mart.snapshot swept as %v, want one unit waiting (raw.flex misses its range)", units)
		}
		checkAgainstGate(t, g, units)
	})
}
