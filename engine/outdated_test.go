package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// outdatedSpec is chainSpec with a comment to edit: mart.daily reads
// raw.orders, and both run commands a test can change.
const outdatedSpec = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["./load.sh", "v1"], timeout: 5m} # the loader
  - {name: mart.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["./mart.sh"]}}
`

func statusOf(t *testing.T, e *Engine, model string) ModelStatus {
	t.Helper()
	all, err := e.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range all {
		if st.Name == model {
			one, err := e.ModelStatus(t.Context(), model)
			if err != nil {
				t.Fatal(err)
			}
			if one.Outdated != st.Outdated {
				t.Errorf("%s: ModelStatus says %d outdated, Status %d", model, one.Outdated, st.Outdated)
			}
			return st
		}
	}
	t.Fatalf("status has no %s", model)
	return ModelStatus{}
}

// Change a model's command → exactly its applied windows are outdated; an
// unchanged model and a change that does not touch output (a timeout, a
// comment) stay current; an operator's mark is unknown, never outdated;
// plan --outdated lists exactly them and run --outdated makes them current.
func TestOutdatedWindowsRebuilt(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := runEngine(t, s, outdatedSpec)
		if _, err := e.Run(ctx, RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		// A mark on the second day's first hours: unknown definition.
		if _, err := e.Run(ctx, RunRequest{Models: []string{"raw.orders"}, Window: ptrWin(days(1, 2)), Mode: "discover"}, &fakeExec{fail: func(string, *state.Window) error { return errors.New("down") }}, nil); err != nil {
			t.Fatal(err)
		}
		if n, err := e.Mark(ctx, "raw.orders", days(1, 2), state.Applied); err != nil || n != 24 {
			t.Fatalf("Mark = %d, %v", n, err)
		}
		if got := statusOf(t, e, "raw.orders").Outdated; got != 0 {
			t.Fatalf("unchanged spec: %d outdated, want 0", got)
		}

		// A timeout and a comment: still current.
		e.spec = mustParse(t, strings.NewReplacer("timeout: 5m", "timeout: 1h", "# the loader", "# loads orders").Replace(outdatedSpec))
		if got := statusOf(t, e, "raw.orders").Outdated; got != 0 {
			t.Errorf("a timeout and a comment changed: %d outdated, want 0", got)
		}

		// The command: exactly the 24 hours run under v1 are outdated.
		e.spec = mustParse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1))
		raw := statusOf(t, e, "raw.orders")
		if raw.Outdated != 24 || raw.Counts[state.Applied] != 48 {
			t.Errorf("after the command change: %d outdated of %d applied, want 24 of 48", raw.Outdated, raw.Counts[state.Applied])
		}
		if got := statusOf(t, e, "mart.daily").Outdated; got != 0 {
			t.Errorf("mart.daily (unchanged) has %d outdated, want 0", got)
		}
		var defs []string
		err := e.ScanUnits(ctx, "raw.orders", state.Window{}, nil, func(u state.Unit) error {
			defs = append(defs, UnitDefinition(u, raw.Fingerprint))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(strings.Join(defs, " "), DefinitionOutdated) != 24 || defs[0] != DefinitionOutdated || defs[24] != DefinitionUnknown {
			t.Errorf("unit definitions %v; want the first day outdated, the marked day unknown", defs)
		}

		p, err := e.Plan(ctx, RunRequest{Outdated: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Models) != 1 || p.Models[0].Model != "raw.orders" || p.Models[0].Reset.Len() != 24 || p.Models[0].Run.Len() != 24 ||
			!p.Models[0].Window.Equal(days(0, 1)) {
			t.Fatalf("plan --outdated = %+v; want raw.orders' 24 hours of day one", p.Models)
		}
		exec := &fakeExec{}
		res, err := e.Run(ctx, RunRequest{Outdated: true}, exec, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run --outdated: %v %+v", err, res)
		}
		if exec.count("raw.orders") != 24 || exec.count("mart.daily") != 0 {
			t.Errorf("run --outdated ran %v; want the 24 outdated hours only", exec.calls)
		}
		if got := statusOf(t, e, "raw.orders"); got.Outdated != 0 || got.Counts[state.Applied] != 48 {
			t.Errorf("after run --outdated: %d outdated, %d applied; want 0 and 48", got.Outdated, got.Counts[state.Applied])
		}
		if p, err := e.Plan(ctx, RunRequest{Outdated: true}); err != nil || len(p.Models) != 0 {
			t.Errorf("plan --outdated after the rebuild = %+v, %v; want nothing", p, err)
		}
		if _, err := e.Plan(ctx, RunRequest{Outdated: true, Mode: "torch"}); err == nil || !strings.Contains(err.Error(), "bulldozer") {
			t.Errorf("--outdated with torch: %v; want a refusal naming bulldozer", err)
		}
	})
}

func ptrWin(w state.Window) *state.Window { return &w }

// hardcodedSpec: a command model reading a hardcoded source of rates.
const hardcodedSpec = `models:
  - name: core.priced
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: ref.rates
        hardcoded: {rows: [{cur: SEK, rate: 1}]}
    run: {command: ["./price.sh"]}
`

// A change to a hardcoded source's rows marks its reader's applied windows
// outdated; rewriting the same rows in another order of keys does not.
func TestHardcodedRowsChangeOutdatesTheReader(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, hardcodedSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: ptrWin(days(0, 2))}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e.spec = mustParse(t, strings.Replace(hardcodedSpec, "{cur: SEK, rate: 1}", "{rate: 1, cur: SEK}", 1))
		if got := statusOf(t, e, "core.priced"); got.Outdated != 0 || got.Counts[state.Applied] != 2 {
			t.Errorf("the same rows written otherwise: %d outdated of %d, want 0 of 2", got.Outdated, got.Counts[state.Applied])
		}
		e.spec = mustParse(t, strings.Replace(hardcodedSpec, "rate: 1}", "rate: 2}", 1))
		if got := statusOf(t, e, "core.priced"); got.Outdated != 2 {
			t.Errorf("after a rate changed: %d outdated, want both days", got.Outdated)
		}
	})
}

// builtOnSpec: core.daily reads raw.orders' hours of its day, mart.total
// every core.daily day through its own, mart.ok only needs raw.orders
// registered (EXISTS reads no data).
const builtOnSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {command: ["./load.sh", "v1"]}}
  - {name: core.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["./daily.sh"]}}
  - {name: mart.total, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: core.daily, contract: through}], run: {command: ["./total.sh"]}}
  - {name: mart.ok, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: exists}], run: {command: ["./ok.sh"]}}
`

// builtOnWorld runs day one under raw.orders' v1 and day two under v2:
// raw.orders' first 24 hours are outdated, core.daily's day one is built
// on them, and mart.total's two days are built on core.daily's day one
// (THROUGH reads every day before its own).
func builtOnWorld(t *testing.T, s state.Store) *Engine {
	t.Helper()
	e := runEngine(t, s, builtOnSpec)
	if _, err := e.Run(t.Context(), RunRequest{Window: ptrWin(days(0, 1))}, &fakeExec{}, nil); err != nil {
		t.Fatal(err)
	}
	e.spec = mustParse(t, strings.Replace(builtOnSpec, `"v1"`, `"v2"`, 1))
	if _, err := e.Run(t.Context(), RunRequest{Window: ptrWin(days(1, 2))}, &fakeExec{}, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

func windowsText(ws []state.Window) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, w.String())
	}
	return strings.Join(parts, " ")
}

func builtOnText(mt *ModelTrace) string {
	if mt == nil {
		return ""
	}
	var parts []string
	for _, b := range mt.BuiltOn {
		var ups []string
		for _, u := range b.Upstreams {
			ups = append(ups, u.Model+" "+windowsText(u.Windows))
		}
		parts = append(parts, b.Window.String()+" on "+strings.Join(ups, ", "))
	}
	return strings.Join(parts, "; ")
}

// Built on outdated follows the contract's reach through the lineage:
// core.daily's day one (ENCAPSULATE over the outdated hours), not its day
// two; both of mart.total's days (THROUGH reaches core.daily's day one);
// nothing of mart.ok (EXISTS reads no data).
func TestBuiltOnOutdatedFollowsTheReach(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := builtOnWorld(t, s)
		tr, err := e.TraceOutdated(t.Context(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Of("raw.orders"); got == nil || len(got.Outdated) != 24 || !got.Outdated[0].Equal(hours(0, 1)) || len(got.BuiltOn) != 0 {
			t.Errorf("raw.orders: %+v; want its first 24 hours outdated", got)
		}
		d0, d1 := days(0, 1).String(), days(1, 2).String()
		if got, want := builtOnText(tr.Of("core.daily")), d0+" on raw.orders "+d0; got != want {
			t.Errorf("core.daily built on outdated: %q, want %q", got, want)
		}
		if got, want := builtOnText(tr.Of("mart.total")), d0+" on core.daily "+d0+"; "+d1+" on core.daily "+d0; got != want {
			t.Errorf("mart.total built on outdated: %q, want %q", got, want)
		}
		if tr.Of("mart.ok") != nil || tr.Of("core.daily").Outdated != nil {
			t.Errorf("mart.ok %+v, core.daily's own outdated %v: want neither", tr.Of("mart.ok"), tr.Of("core.daily").Outdated)
		}
		// One model's view reads the same, and why names the upstream.
		mt, err := e.BuiltOnOutdated(t.Context(), "mart.total")
		if err != nil || builtOnText(mt) != builtOnText(tr.Of("mart.total")) {
			t.Errorf("BuiltOnOutdated(mart.total) = %q, %v", builtOnText(mt), err)
		}
		r, err := e.Why(t.Context(), "core.daily", t0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Definition != DefinitionCurrent || len(r.BuiltOnOutdated) != 1 || r.BuiltOnOutdated[0].Model != "raw.orders" ||
			windowsText(r.BuiltOnOutdated[0].Windows) != d0 {
			t.Errorf("why core.daily day one: definition %q, built on %+v", r.Definition, r.BuiltOnOutdated)
		}
		if r, err := e.Why(t.Context(), "core.daily", t0.Add(25*time.Hour)); err != nil || len(r.BuiltOnOutdated) != 0 {
			t.Errorf("why core.daily day two: built on %+v, %v; want none", r, err)
		}
	})
}

// plan --outdated lists the outdated windows by model; --downstream adds
// the windows built on them, model by model with counts, and run rebuilds
// exactly those, after which nothing is outdated or built on outdated.
func TestOutdatedDownstreamRebuilds(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := builtOnWorld(t, s)
		summary := func(p *Plan) string {
			var parts []string
			for _, mp := range p.Models {
				parts = append(parts, mp.Model+" "+strconv.Itoa(mp.OutdatedUnits)+"+"+strconv.Itoa(mp.BuiltOnOutdated))
			}
			return strings.Join(parts, ", ")
		}
		p, err := e.Plan(ctx, RunRequest{Outdated: true})
		if err != nil || summary(p) != "raw.orders 24+0" {
			t.Fatalf("plan --outdated = %q, %v; want raw.orders' 24", summary(p), err)
		}
		p, err = e.Plan(ctx, RunRequest{Outdated: true, Downstream: true})
		if err != nil || summary(p) != "raw.orders 24+0, core.daily 0+1, mart.total 0+2" {
			t.Fatalf("plan --outdated --downstream = %q, %v", summary(p), err)
		}
		if mp := modelPlan(t, p, "mart.total"); !windowsEqual(mp.Reset.List(), []state.Window{days(0, 1), days(1, 2)}) {
			t.Errorf("mart.total resets %s", fmtWindows(mp.Reset.List()))
		}
		if p, err := e.Plan(ctx, RunRequest{Outdated: true, Downstream: true, Models: []string{"core.daily"}}); err != nil || summary(p) != "core.daily 0+0" {
			t.Errorf("plan --outdated core.daily --downstream = %q, %v; want core.daily alone, with nothing (it has no outdated unit)", summary(p), err)
		}
		exec := &fakeExec{}
		res, err := e.Run(ctx, RunRequest{Outdated: true, Downstream: true}, exec, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run --outdated --downstream: %v %+v", err, res)
		}
		if exec.count("raw.orders") != 24 || exec.count("core.daily") != 1 || exec.count("mart.total") != 2 || exec.count("mart.ok") != 0 {
			t.Errorf("run --outdated --downstream ran %v", exec.calls)
		}
		tr, err := e.TraceOutdated(ctx, nil, nil)
		if err != nil || len(tr.Models) != 0 {
			t.Errorf("after the rebuild the trace is %+v, %v; want empty", tr, err)
		}
		for _, m := range []string{"raw.orders", "core.daily", "mart.total"} {
			if st := statusOf(t, e, m); st.Outdated != 0 || st.Counts[state.Applied] == 0 || st.Counts[state.Pending]+st.Counts[state.Blocked] != 0 {
				t.Errorf("%s after the rebuild: %+v", m, st.Counts)
			}
		}
	})
}

func changesOf(t *testing.T, e *Engine, model string, at time.Time) (string, *time.Time) {
	t.Helper()
	r, err := e.Why(t.Context(), model, at)
	if err != nil {
		t.Fatal(err)
	}
	if r.Definition != DefinitionOutdated {
		t.Fatalf("why %s: definition %q, want outdated", model, r.Definition)
	}
	if r.Change == nil {
		return "<none>", nil
	}
	var parts []string
	for _, c := range r.Change.Changes {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; "), r.Change.ChangedAt
}

// why says what changed since an outdated unit was built, from the
// definitions registration keeps: the spec's edit before it is registered
// (no time), then with the time the new definition was registered.
func TestWhyDiffsTheEarlierDefinition(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, outdatedSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders"}}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e.spec = mustParse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1))
		got, at := changesOf(t, e, "raw.orders", t0)
		if got != "run.command: ./load.sh v1 → ./load.sh v2" || at != nil {
			t.Errorf("before apply: %q at %v; want the command, not registered yet", got, at)
		}
		applied := t0.Add(50 * time.Hour)
		e.opts.Now = func() time.Time { return applied }
		if _, err := e.Apply(t.Context()); err != nil {
			t.Fatal(err)
		}
		got, at = changesOf(t, e, "raw.orders", t0)
		if got != "run.command: ./load.sh v1 → ./load.sh v2" || at == nil || !at.Equal(applied) {
			t.Errorf("after apply: %q at %v; want the command, changed at %s", got, at, applied)
		}
		// A store-only engine reads both definitions from the store.
		bare := New(s, nil, Options{Now: e.opts.Now})
		if got, _ := changesOf(t, bare, "raw.orders", t0); got != "run.command: ./load.sh v1 → ./load.sh v2" {
			t.Errorf("store-only: %q", got)
		}
	})
}

// A registration written before definitions were kept (no fingerprint
// given to Register) is kept, first seen when it was registered, when the
// next apply replaces it — its definition read on its own, or in the one
// read of every registration an apply replacing many takes; a unit built
// under a definition never kept has no change to show.
func TestApplyKeepsTheReplacedRegistration(t *testing.T) {
	for _, oneByOne := range []int{replacedOneByOne, 0} {
		t.Run(fmt.Sprintf("one-by-one=%d", oneByOne), func(t *testing.T) {
			was := replacedOneByOne
			replacedOneByOne = oneByOne
			t.Cleanup(func() { replacedOneByOne = was })
			testApplyKeepsTheReplacedRegistration(t)
		})
	}
}

func testApplyKeepsTheReplacedRegistration(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := runEngine(t, s, outdatedSpec)
		old := spec.ModelRecord("", e.spec.Model("raw.orders"), state.Interval{})
		fp := old.Fingerprint
		old.Fingerprint = "" // as an earlier bollhav registered it
		registeredAt := t0.Add(time.Hour)
		if _, err := s.Register(ctx, "", []state.ModelRecord{old}, nil, registeredAt); err != nil {
			t.Fatal(err)
		}
		if ds, err := s.Definitions(ctx, "", "raw.orders"); err != nil || len(ds) != 0 {
			t.Fatalf("history before the apply: %v, %v; want none", ds, err)
		}
		e.spec = mustParse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1))
		if _, err := e.Apply(ctx); err != nil {
			t.Fatal(err)
		}
		ds, err := s.Definitions(ctx, "", "raw.orders")
		if err != nil || len(ds) != 2 || ds[0].Fingerprint != fp || !ds[0].FirstSeen.Equal(registeredAt) {
			t.Fatalf("history after the apply: %+v, %v; want v1 first seen at %s, then v2", ds, err, registeredAt)
		}
		// Units applied under a definition the store never kept.
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{hours(0, 1)}, Now: t0}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.orders"}, Worker: "w", Lease: time.Hour, Limit: 1, Now: t0})
		if err != nil || len(cs) != 1 {
			t.Fatal(cs, err)
		}
		if err := s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: t0, Fingerprint: "00000000000000e0"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := changesOf(t, e, "raw.orders", t0); got != "<none>" {
			t.Errorf("a definition never kept: %q, want no change", got)
		}
	})
}

// require_current counts an upstream's outdated windows as not applied for
// that contract alone: after raw.orders' command changes, mart.strict's
// day blocks with a reason naming the outdated range, why and the sweep
// and incidents agree, mart.loose still runs; rebuilding the outdated
// hours releases it. An unknown (marked) hour is never outdated.
func TestRequireCurrentGatesOnOutdatedWindows(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := runEngine(t, s, enginetest.RequireCurrentSpec)
		if _, err := e.Run(ctx, RunRequest{Window: ptrWin(days(0, 1)), Models: []string{"raw.orders"}}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		// Day two: hours 0-5 applied under v1, the rest marked (unknown).
		down := &fakeExec{fail: func(_ string, w *state.Window) error {
			if !w.Since.Before(hours(30, 31).Since) {
				return errors.New("down")
			}
			return nil
		}}
		if _, err := e.Run(ctx, RunRequest{Window: ptrWin(days(1, 2)), Models: []string{"raw.orders"}}, down, nil); err != nil {
			t.Fatal(err)
		}
		if n, err := e.Mark(ctx, "raw.orders", hours(30, 48), state.Applied); err != nil || n != 18 {
			t.Fatalf("Mark = %d, %v", n, err)
		}
		e.spec = mustParse(t, enginetest.RequireCurrentSpecV2)

		exec := &fakeExec{}
		if _, err := e.Run(ctx, RunRequest{Window: ptrWin(days(0, 2)), Models: []string{"mart.strict", "mart.loose"}}, exec, nil); err != nil {
			t.Fatal(err)
		}
		if exec.count("mart.strict") != 0 || exec.count("mart.loose") != 2 {
			t.Fatalf("ran %v; want mart.loose's two days and nothing of mart.strict", exec.calls)
		}
		byWindow := map[string]state.Unit{}
		if err := e.ScanUnits(ctx, "mart.strict", state.Window{}, nil, func(u state.Unit) error { byWindow[u.Window.String()] = u; return nil }); err != nil {
			t.Fatal(err)
		}
		day1, day2 := byWindow[days(0, 1).String()], byWindow[days(1, 2).String()]
		wantReason := "raw.orders (ENCAPSULATE): [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z) applied under an earlier definition"
		if day1.Status != state.Blocked || day1.BlockedReason != wantReason {
			t.Errorf("mart.strict day 1: %s %q; want blocked %q", day1.Status, day1.BlockedReason, wantReason)
		}
		wantReason = "raw.orders (ENCAPSULATE): [2026-01-02T00:00:00Z, 2026-01-02T06:00:00Z) applied under an earlier definition"
		if day2.Status != state.Blocked || day2.BlockedReason != wantReason {
			t.Errorf("mart.strict day 2: %s %q; want blocked %q (the marked hours are unknown, not outdated)", day2.Status, day2.BlockedReason, wantReason)
		}

		// why: the upstream's outdated range, the root cause at the first
		// outdated hour, the frontier the 24 outdated hours.
		r, err := e.Why(ctx, "mart.strict", t0)
		if err != nil {
			t.Fatal(err)
		}
		up := r.Upstreams[0]
		if up.Satisfied || len(up.Missing) != 0 || len(up.Outdated) != 1 || !up.Outdated[0].Equal(days(0, 1)) {
			t.Errorf("why upstream verdict: satisfied %v, missing %v, outdated %v; want day 1 outdated", up.Satisfied, up.Missing, up.Outdated)
		}
		last := r.RootCause[len(r.RootCause)-1]
		if len(r.RootCause) != 2 || last.Model != "raw.orders" || !last.Window.Equal(hours(0, 1)) || !last.Outdated || last.Status != state.Applied ||
			last.Detail != gate.OutdatedText {
			t.Errorf("why root cause %+v; want raw.orders' first hour, applied and outdated", r.RootCause)
		}
		outdated := 0
		for _, f := range r.Frontier {
			if f.Model == "raw.orders" && f.Outdated && f.Status == state.Applied {
				outdated++
			}
		}
		if outdated != 24 || len(r.Frontier) != 24 {
			t.Errorf("why frontier %+v; want raw.orders' 24 outdated hours", r.Frontier)
		}

		// The sweep judges both days held by the outdated upstream — not
		// waiting on a missing range: nothing is missing, as both reasons
		// say; incidents name raw.orders.
		outdated = 0
		if _, err := e.GateSweep(ctx, gate.BlockedFilter{Model: "mart.strict"}, func(u gate.SweptUnit) error {
			if u.Readiness == gate.Outdated {
				outdated++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if outdated != 2 {
			t.Errorf("sweep: %d of mart.strict's days held by the outdated upstream, want 2", outdated)
		}
		inc, err := e.Incidents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(inc.Incidents) != 1 || inc.Incidents[0].Kind != gate.IncidentOutdated || inc.Incidents[0].Model != "raw.orders" {
			t.Errorf("incidents %+v; want one outdated incident on raw.orders", inc.Incidents)
		} else if o := inc.Incidents[0]; o.Units != 30 || !o.Span.Equal(hours(0, 30)) {
			// Every outdated hour holds the days back, not the first one
			// alone (it read "1 unit"): day 1's 24 and day 2's hours 0-5.
			t.Errorf("the outdated incident counts %d units over %s, want the 30 outdated hours of days 1 and 2", o.Units, o.Span)
		}

		// Rebuilding the outdated hours releases mart.strict: its days'
		// stored reason is rewritten, and the summary names them.
		rebuilt, err := e.Run(ctx, RunRequest{Outdated: true, Models: []string{"raw.orders"}}, &fakeExec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if models, span, n := rebuilt.ReleasedRun(); n != 2 || len(models) != 1 || models[0] != "mart.strict" || !span.Equal(days(0, 2)) {
			t.Errorf("the rebuild released %+v, want mart.strict's two days", rebuilt.Released)
		}
		exec = &fakeExec{}
		if _, err := e.Run(ctx, RunRequest{Window: ptrWin(days(0, 2)), Models: []string{"mart.strict"}}, exec, nil); err != nil {
			t.Fatal(err)
		}
		if got := statuses(t, s, "mart.strict"); got[state.Applied] != 2 || exec.count("mart.strict") != 2 {
			t.Errorf("after the rebuild: mart.strict %v, ran %v; want both days applied", got, exec.calls)
		}
	})
}

// TestOutdatedRebuildWithDownstreamRunsWhatItReleases (issue 32 §5):
// mart.strict's day is blocked on raw.orders' outdated hours (require
// current); `run --outdated --downstream raw.orders` rebuilds the hours and,
// in the same command, applies the day it released (Then) — before, the day
// stayed blocked with the reason that no longer held.
func TestOutdatedRebuildWithDownstreamRunsWhatItReleases(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := runEngine(t, s, enginetest.RequireCurrentSpec)
		if _, err := e.Run(ctx, RunRequest{Window: ptrWin(days(0, 1)), Models: []string{"raw.orders"}}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e.spec = mustParse(t, enginetest.RequireCurrentSpecV2)
		if _, err := e.Run(ctx, RunRequest{Window: ptrWin(days(0, 1)), Models: []string{"mart.strict"}}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		if u := unit(t, s, "mart.strict", days(0, 1)); u.Status != state.Blocked {
			t.Fatalf("mart.strict's day is %s %q, want blocked on the outdated hours", u.Status, u.BlockedReason)
		}
		exec := &fakeExec{}
		res, err := e.Run(ctx, RunRequest{Outdated: true, Downstream: true, Models: []string{"raw.orders"}}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if u := unit(t, s, "mart.strict", days(0, 1)); u.Status != state.Applied || exec.count("mart.strict") != 1 {
			t.Errorf("after the rebuild with downstream mart.strict's day is %s %q (ran %v), want applied in the same command",
				u.Status, u.BlockedReason, exec.calls)
		}
		if res.FailedThen() {
			t.Errorf("the rebuild failed: %+v", res)
		}
	})
}
