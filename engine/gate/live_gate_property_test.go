package gate_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// liveSpec has every contract level, with and without freshness (both
// scopes), over a fixed, a flexible and a timeless upstream; downstream
// grains coarser than their upstreams; a timeless downstream; a chain of
// two gated levels; require_current edges, whose upstreams' units are
// completed under the current definition, an earlier one or none; and hard
// errors (EXACT on flexible, an unregistered upstream).
const liveSpec = `
models:
  - {name: raw.fix, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}}
  - {name: raw.flex, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}}
  - {name: ref.config, temporality: timeless}
  - {name: core.exact, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.fix, contract: exact, freshness: {within: 3h}}]}
  - name: core.encap
    chunking: {interval: 2h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.flex, contract: encapsulate, freshness: {within: 2h, scope: all}}
      - {name: raw.fix, contract: encapsulate}
  - {name: core.through, chunking: {interval: 2h, start: "2026-01-01T02:00:00Z"},
     upstream: [{name: raw.fix, contract: through, freshness: {within: 4h}}]}
  - name: core.whole
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: core.exact, contract: whole, freshness: {within: 5h, scope: all}}
      - {name: raw.flex, contract: exists}
  - name: mart.snapshot
    temporality: timeless
    upstream:
      - {name: ref.config, contract: whole, freshness: {within: 6h}}
      - {name: raw.flex, contract: whole}
  - name: mart.chain
    chunking: {interval: 2h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: core.encap, contract: encapsulate}
      - {name: core.through, contract: through}
  - name: core.current
    chunking: {interval: 2h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.fix, contract: encapsulate, require_current: true}
      - {name: raw.flex, contract: through, require_current: true, freshness: {within: 5h}}
  - {name: mart.bad, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.flex, contract: exact}, {name: other.model, contract: whole}]}
`

// liveModels are the models the property test changes, with their grain
// in hours (0: timeless) and whether they are flexible.
var liveModels = []struct {
	name  string
	hours int
	flex  bool
}{
	{"raw.fix", 1, false}, {"raw.flex", 1, true}, {"ref.config", 0, false},
	{"core.exact", 1, false}, {"core.encap", 2, false}, {"core.through", 2, false},
	{"core.whole", 1, false}, {"mart.snapshot", 0, false}, {"mart.chain", 2, false}, {"core.current", 2, false},
	{"mart.bad", 1, false},
}

// liveDay is the start of every grid; the clock starts 30 hours later and
// the units lie in its first 40 hours.
var liveDay = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func liveHour(h int) time.Time { return liveDay.Add(time.Duration(h) * time.Hour) }

// TestLiveGateEqualsAFullSweep is the property of the live gate index
// (issue 21): after any sequence of unit changes written to a real store —
// prefills, status moves to every status with old and new applied_at,
// torches, uncovers of a flexible model (which trims units at the edges),
// claims and completions under runs, a re-registration — and of clock
// steps, the index, fed the change feed in batches of any size (some
// leaving a gap it must fill from the store), says what a fresh full sweep
// says at the same now, unit for unit and in its counts. And between
// changes its verdicts hold until NextChange: a sweep one nanosecond before
// it agrees without the index doing anything, so a freshness limit or a
// completed window is never missed by the caller's timer.
//
// It runs 20 sequences per store (10 under -race, where the pure-Go
// SQLite crawls; rapid takes a fifth of either under -short), a few
// seconds a store; BOLLHAV_LIVE_CHECKS=500, RAPID_CHECKS or -rapid.checks
// run more.
func TestLiveGateEqualsAFullSweep(t *testing.T) {
	checks := 20 // rapid runs a fifth of it under -short
	if enginetest.UnderRace {
		checks = 10
	}
	if n, err := strconv.Atoi(os.Getenv("BOLLHAV_LIVE_CHECKS")); err == nil && n > 0 {
		checks = n
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		sp, err := spec.Parse("live.yaml", []byte(liveSpec))
		if err != nil {
			t.Fatal(err)
		}
		withRapidChecks(t, checks, func() {
			rapid.Check(t, func(rt *rapid.T) { liveProperty(t, rt, s, sp) })
		})
	})
}

// withRapidChecks runs fn with rapid's check count set to n, unless the
// command line or the environment chose one.
func withRapidChecks(t *testing.T, n int, fn func()) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok || given {
		fn()
		return
	}
	f := flag.Lookup("rapid.checks")
	old := f.Value.String()
	if err := f.Value.Set(strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Value.Set(old) }()
	fn()
}

// liveWorld is one sequence's store, engine, index and clock.
type liveWorld struct {
	t     *testing.T
	rt    *rapid.T
	s     state.Store
	g     *gate.Reader
	now   time.Time
	live  *gate.Live
	dirty bool // changes written since the index last took the feed
	// regChanged: a registration changed and no run has shown it yet.
	regChanged bool
	variant    bool
	sp         *spec.Spec
	log        []string
}

func liveProperty(t *testing.T, rt *rapid.T, s state.Store, sp *spec.Spec) {
	ctx := t.Context()
	w := &liveWorld{t: t, rt: rt, s: s, sp: sp, now: liveHour(30)}
	// Half the sequences judge with the spec's definitions, half from the
	// registrations alone (as a UI opened on a store does), where a
	// re-registration changes verdicts.
	storeOnly := rapid.Bool().Draw(rt, "storeOnly")
	w.g = &gate.Reader{Store: s, Spec: sp, Now: func() time.Time { return w.now }}
	if err := register(ctx, s, sp, w.now); err != nil {
		rt.Fatal(err)
	}
	w.reset()
	w.seed()
	if storeOnly {
		w.g = &gate.Reader{Store: s, Now: func() time.Time { return w.now }}
	}
	if rapid.Bool().Draw(rt, "plainStore") {
		// Without SweepReader and RegionReader: the index reads back a
		// window at a time through ScanUnits.
		w.g.Store = hideSweep{s}
	}
	live, err := gate.NewLive(ctx, *w.g)
	if err != nil {
		rt.Fatal(err)
	}
	w.live = live
	w.check("built")
	steps := rapid.IntRange(1, 14).Draw(rt, "steps")
	for i := range steps {
		switch op := rapid.IntRange(0, 10).Draw(rt, fmt.Sprintf("op%d", i)); op {
		case 0, 1:
			w.prefill()
		case 2, 3, 4:
			w.setStatus()
		case 5:
			w.claimAndComplete()
		case 6:
			w.remove()
		case 7:
			w.tick()
		case 8:
			w.reregister()
		case 10:
			w.rebuild()
		default:
			w.sync()
		}
	}
	w.sync()
}

func (w *liveWorld) logf(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf(format, args...))
}

// reset leaves no unit in the store, and the registrations as liveSpec
// has them.
func (w *liveWorld) reset() {
	ctx := w.t.Context()
	if err := register(ctx, w.s, w.sp, w.now); err != nil {
		w.rt.Fatal(err)
	}
	for _, m := range liveModels {
		if _, err := w.s.SetStatus(ctx, state.StatusChange{Model: m.name, From: []state.UnitStatus{state.Running}, To: state.Pending, Now: w.now}); err != nil {
			w.rt.Fatal(err)
		}
		if _, err := w.s.Delete(ctx, state.RemoveRequest{Model: m.name, Now: w.now}); err != nil {
			w.rt.Fatal(err)
		}
	}
}

// seed starts a sequence where gates can pass: every model prefilled over
// its first 34 hours, the upstreams (and core.exact, which core.whole
// needs WHOLE) applied at ages drawn from fresh to stale, with a hole or
// two punched in them.
func (w *liveWorld) seed() {
	ctx := w.t.Context()
	for _, m := range liveModels {
		var ws []state.Window
		for h := 0; h+max(m.hours, 1) <= 34 && m.hours > 0; h += m.hours {
			ws = append(ws, state.Window{Since: liveHour(h), Until: liveHour(h + m.hours)})
		}
		if m.hours == 0 {
			ws = []state.Window{{}}
		}
		if _, err := w.s.Prefill(ctx, state.PrefillRequest{Model: m.name, Windows: ws, Now: w.now}); err != nil {
			w.rt.Fatal(err)
		}
	}
	for _, name := range []string{"raw.fix", "raw.flex", "ref.config", "core.exact"} {
		age := time.Duration(rapid.IntRange(0, 6*60).Draw(w.rt, "seedAge")) * time.Minute
		if _, err := w.s.SetStatus(ctx, state.StatusChange{Model: name, From: []state.UnitStatus{state.Pending}, To: state.Applied,
			AppliedAt: w.now.Add(-age), Now: w.now}); err != nil {
			w.rt.Fatal(err)
		}
		for range rapid.IntRange(0, 2).Draw(w.rt, "holes") {
			h := rapid.IntRange(0, 33).Draw(w.rt, "hole")
			hole := state.Window{Since: liveHour(h), Until: liveHour(h + 1)}
			if _, err := w.s.SetStatus(ctx, state.StatusChange{Model: name, Window: hole, From: []state.UnitStatus{state.Applied}, To: state.Failed, Now: w.now}); err != nil {
				w.rt.Fatal(err)
			}
		}
	}
	w.logf("seeded")
}

// drawModel picks a model to change.
func (w *liveWorld) drawModel(label string) (string, int, bool) {
	k := rapid.IntRange(0, len(liveModels)-1).Draw(w.rt, label)
	m := liveModels[k]
	return m.name, m.hours, m.flex
}

// drawWindows draws windows of a model: grid windows over a run of hours
// for a fixed model, units of 1-3 hours (which may overlap) for a flexible
// one, the existence row for a timeless one.
func (w *liveWorld) drawWindows(hours int, flex bool) []state.Window {
	if hours == 0 {
		return []state.Window{{}}
	}
	from := rapid.IntRange(0, 38).Draw(w.rt, "from")
	n := rapid.IntRange(1, 12).Draw(w.rt, "count")
	var ws []state.Window
	for k := range n {
		a := from + k*hours
		if flex {
			a = from + k*rapid.IntRange(1, 3).Draw(w.rt, "step")
		}
		width := hours
		if flex {
			width = rapid.IntRange(1, 3).Draw(w.rt, "width")
		}
		if a+width > 40 {
			break
		}
		if !flex {
			a -= a % hours
		}
		ws = append(ws, state.Window{Since: liveHour(a), Until: liveHour(a + width)})
	}
	return ws
}

// drawRange is a window of whole hours, short or long, or zero (the whole
// model).
func (w *liveWorld) drawRange(hours int) state.Window {
	if hours == 0 || rapid.IntRange(0, 5).Draw(w.rt, "wholeModel") == 0 {
		return state.Window{}
	}
	a := rapid.IntRange(0, 39).Draw(w.rt, "since")
	b := rapid.IntRange(a+1, 40).Draw(w.rt, "until")
	return state.Window{Since: liveHour(a), Until: liveHour(b)}
}

func (w *liveWorld) drawStatuses(label string) []state.UnitStatus {
	var out []state.UnitStatus
	for _, st := range []state.UnitStatus{state.Pending, state.Blocked, state.Failed, state.Applied} {
		if rapid.Bool().Draw(w.rt, label+string(st)) {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		out = []state.UnitStatus{state.Pending}
	}
	return out
}

func (w *liveWorld) prefill() {
	name, hours, flex := w.drawModel("prefillModel")
	ws := w.drawWindows(hours, flex)
	n, err := w.s.Prefill(w.t.Context(), state.PrefillRequest{Model: name, Windows: ws, Now: w.now})
	if err != nil {
		w.rt.Fatalf("prefill %s %v: %v", name, ws, err)
	}
	w.logf("prefill %s %d windows: %d new", name, len(ws), n)
	w.dirty = true
}

func (w *liveWorld) setStatus() {
	name, hours, _ := w.drawModel("setModel")
	win := w.drawRange(hours)
	from := w.drawStatuses("from")
	to := []state.UnitStatus{state.Applied, state.Applied, state.Pending, state.Blocked, state.Failed}[rapid.IntRange(0, 4).Draw(w.rt, "to")]
	// applied_at from eight hours ago to now, in whole minutes: old
	// enough to be stale behind every limit, new enough to be fresh.
	at := w.now.Add(-time.Duration(rapid.IntRange(0, 8*60).Draw(w.rt, "ageMinutes")) * time.Minute)
	n, err := w.s.SetStatus(w.t.Context(), state.StatusChange{Model: name, Window: win, From: from, To: to, AppliedAt: at, Now: w.now})
	if err != nil {
		w.rt.Fatalf("set %s %s %v→%s: %v", name, win, from, to, err)
	}
	w.logf("set %s %s %v→%s at %s: %d", name, win, from, to, at.Format("15:04"), n)
	w.dirty = true
}

// claimAndComplete claims units of a model under a new run, as a worker
// does, and completes some of them in one batch.
func (w *liveWorld) claimAndComplete() {
	ctx := w.t.Context()
	name, _, _ := w.drawModel("claimModel")
	runID, err := w.s.CreateRun(ctx, state.Run{Models: []string{name}, StateMode: "discover", StartedAt: w.now, Status: state.RunRunning})
	if err != nil {
		w.rt.Fatal(err)
	}
	claims, err := w.s.Claim(ctx, state.ClaimRequest{Models: []string{name}, Worker: "w1", Lease: time.Hour,
		Limit: rapid.IntRange(1, 6).Draw(w.rt, "claimLimit"), RunID: runID, Now: w.now})
	if err != nil {
		w.rt.Fatal(err)
	}
	var items []state.Completion
	for i, c := range claims {
		switch rapid.IntRange(0, 3).Draw(w.rt, fmt.Sprintf("outcome%d", i)) {
		case 0: // left running
		case 1:
			items = append(items, state.Completion{Claim: c, Outcome: state.Outcome{Status: state.Failed, At: w.now, Error: "boom"}})
		default:
			items = append(items, state.Completion{Claim: c, Outcome: state.Outcome{Status: state.Applied, At: w.now, Fingerprint: w.drawFingerprint(name, i)}})
		}
	}
	if len(items) > 0 {
		errs, err := w.s.CompleteBatch(ctx, items)
		if err != nil || errors.Join(errs...) != nil {
			w.rt.Fatalf("complete: %v %v", err, errs)
		}
	}
	w.logf("run %d on %s: %d claimed, %d completed", runID, name, len(claims), len(items))
	if len(claims) > 0 {
		w.regChanged = false // a run the index has not seen: it reads the registry
	}
	w.dirty = true
}

// rebuild runs a range of an upstream again, as `bollhav run` with
// bulldozer does: its units go back to pending, are claimed and applied
// under one definition drawn for all of them — the current one, an earlier
// one (outdated for core.current's require_current edges) or none.
func (w *liveWorld) rebuild() {
	ctx := w.t.Context()
	name := []string{"raw.fix", "raw.flex"}[rapid.IntRange(0, 1).Draw(w.rt, "rebuildModel")]
	win := w.drawRange(1)
	if _, err := w.s.SetStatus(ctx, state.StatusChange{Model: name, Window: win, From: []state.UnitStatus{state.Applied, state.Failed},
		To: state.Pending, Now: w.now}); err != nil {
		w.rt.Fatal(err)
	}
	runID, err := w.s.CreateRun(ctx, state.Run{Models: []string{name}, StateMode: "bulldozer", StartedAt: w.now, Status: state.RunRunning})
	if err != nil {
		w.rt.Fatal(err)
	}
	claims, err := w.s.Claim(ctx, state.ClaimRequest{Models: []string{name}, Worker: "w1", Lease: time.Hour, Limit: 100, RunID: runID, Now: w.now})
	if err != nil {
		w.rt.Fatal(err)
	}
	fp := w.drawFingerprint(name, 0)
	items := make([]state.Completion, len(claims))
	for i, c := range claims {
		items[i] = state.Completion{Claim: c, Outcome: state.Outcome{Status: state.Applied, At: w.now, Fingerprint: fp}}
	}
	if len(items) > 0 {
		errs, err := w.s.CompleteBatch(ctx, items)
		if err != nil || errors.Join(errs...) != nil {
			w.rt.Fatalf("complete: %v %v", err, errs)
		}
	}
	w.logf("rebuild %s %s under %q: %d units", name, win, fp, len(claims))
	if len(claims) > 0 {
		w.regChanged = false
	}
	w.dirty = true
}

// drawFingerprint is the definition a completed unit of model was built
// under: the model's current one, an earlier one (outdated for a
// require_current downstream) or none recorded.
func (w *liveWorld) drawFingerprint(model string, i int) string {
	switch rapid.IntRange(0, 2).Draw(w.rt, fmt.Sprintf("fingerprint%d", i)) {
	case 0:
		return ""
	case 1:
		return "an-earlier-definition"
	}
	fp, err := currentFingerprint(w.t.Context(), w.g, model)
	if err != nil {
		w.rt.Fatal(err)
	}
	return fp
}

func (w *liveWorld) remove() {
	ctx := w.t.Context()
	name, hours, flex := w.drawModel("removeModel")
	win := w.drawRange(hours)
	var (
		n   int
		err error
	)
	if flex && rapid.Bool().Draw(w.rt, "uncover") {
		n, err = w.s.Uncover(ctx, state.RemoveRequest{Model: name, Window: win, Now: w.now})
		w.logf("uncover %s %s: %d (%v)", name, win, n, err)
	} else {
		n, err = w.s.Delete(ctx, state.RemoveRequest{Model: name, Window: win, Now: w.now})
		w.logf("delete %s %s: %d (%v)", name, win, n, err)
	}
	// Both stores refuse, changing nothing, a torch of a running unit and
	// an uncover whose trimmed part would land on another unit's window
	// (overlapping flexible units, which this test prefills on purpose).
	if err != nil && !errors.Is(err, state.ErrUnitsRunning) && !errors.Is(err, state.ErrWindowTaken) {
		w.rt.Fatal(err)
	}
	w.dirty = true
}

// tick moves the clock: by whole minutes, or to just before and then to
// the moment the index says a verdict may next change.
func (w *liveWorld) tick() {
	w.sync()
	next, ok := w.live.NextChange()
	if ok && rapid.Bool().Draw(w.rt, "toNextChange") {
		w.now = next.Add(-time.Nanosecond)
		w.logf("clock to %s, 1ns before the next change", w.now.Format(time.RFC3339Nano))
		w.checkUnchanged("1ns before NextChange")
		w.now = next
	} else {
		w.now = w.now.Add(time.Duration(rapid.IntRange(1, 180).Draw(w.rt, "minutes")) * time.Minute)
		w.logf("clock to %s", w.now.Format(time.RFC3339))
		if !ok || w.now.Before(next) {
			w.checkUnchanged("before NextChange")
		}
	}
	if _, err := w.live.Advance(w.t.Context()); err != nil {
		w.rt.Fatal(err)
	}
	w.check("advanced")
}

// reregister registers liveSpec with one freshness limit changed (or back),
// as `bollhav apply` would: the index sees it at the next run, or when
// asked to check.
func (w *liveWorld) reregister() {
	w.variant = !w.variant
	text := liveSpec
	if w.variant {
		text = strings.Replace(text, "freshness: {within: 3h}", "freshness: {within: 1h}", 1)
	}
	sp, err := spec.Parse("live.yaml", []byte(text))
	if err != nil {
		w.rt.Fatal(err)
	}
	if err := register(w.t.Context(), w.s, sp, w.now); err != nil {
		w.rt.Fatal(err)
	}
	w.logf("re-registered (variant %v)", w.variant)
	w.regChanged = true
}

// sync hands the index the feed since its seq, in batches of random
// sizes, some starting past a few changes (a gap it must fill).
func (w *liveWorld) sync() {
	ctx := w.t.Context()
	if w.regChanged {
		if _, err := w.live.CheckRegistrations(ctx); err != nil {
			w.rt.Fatal(err)
		}
		w.regChanged = false
	}
	for {
		cs, err := w.s.Changes(ctx, w.live.Seq(), rapid.IntRange(1, 40).Draw(w.rt, "batch"))
		if err != nil {
			w.rt.Fatal(err)
		}
		if len(cs) == 0 {
			break
		}
		if skip := rapid.IntRange(0, 3).Draw(w.rt, "skip"); skip < len(cs) && skip > 0 && rapid.Bool().Draw(w.rt, "gap") {
			cs = cs[skip:]
		}
		stats, err := w.live.Apply(ctx, cs)
		if err != nil {
			w.rt.Fatal(err)
		}
		w.logf("applied %d changes: %+v", len(cs), stats)
	}
	w.dirty = false
	w.check("synced")
}

// check compares the index with a full sweep at the clock's now.
func (w *liveWorld) check(when string) {
	w.rt.Helper()
	if w.dirty {
		return
	}
	if got := w.live.Now(); !got.Equal(w.now) {
		w.fail(when, fmt.Sprintf("the index judges at %s, the clock says %s", got, w.now))
	}
	w.compare(when)
}

// checkUnchanged compares the index, not told the time has moved, with a
// full sweep at the clock's now.
func (w *liveWorld) checkUnchanged(when string) {
	w.rt.Helper()
	w.compare(when)
}

func (w *liveWorld) compare(when string) {
	w.rt.Helper()
	ctx := w.t.Context()
	var want []gate.SweptUnit
	rep, err := w.g.Sweep(ctx, gate.BlockedFilter{}, func(u gate.SweptUnit) error {
		want = append(want, u)
		return nil
	})
	if err != nil {
		w.rt.Fatal(err)
	}
	var got []gate.SweptUnit
	if err := w.live.Units(gate.BlockedFilter{}, func(u gate.SweptUnit) error {
		got = append(got, u)
		return nil
	}); err != nil {
		w.rt.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		var diff []string
		for i := range max(len(got), len(want)) {
			var g, x string
			if i < len(got) {
				g = fmt.Sprint(got[i])
			}
			if i < len(want) {
				x = fmt.Sprint(want[i])
			}
			if g != x {
				diff = append(diff, fmt.Sprintf("  #%d live %s\n      sweep %s\n      gate  %s", i, g, x, w.unitGate(want, i)))
			}
		}
		w.fail(when, "the units differ:\n"+strings.Join(diff[:min(len(diff), 12)], "\n"))
	}
	// A few units' whole gate — reasons, missing ranges — as a run's gate
	// reads it from the store. Only at the index's now: a missing range
	// grows with the clock, where a verdict holds until NextChange.
	for range min(len(want), 4) {
		if !w.live.Now().Equal(w.now) {
			break
		}
		u := want[rapid.IntRange(0, len(want)-1).Draw(w.rt, "gateUnit")]
		lg, ok := w.live.Gate(u.Model, u.Window)
		if got := w.unitGate(want, slices.Index(want, u)); !ok || fmt.Sprintf("%s: %s %v", readinessOf(lg), lg.BlockedReason, lg.Err) != got {
			w.fail(when, fmt.Sprintf("%s %s: the index's gate %s: %s %v (%v), the store's %s", u.Model, u.Window, readinessOf(lg), lg.BlockedReason, lg.Err, ok, got))
		}
		// The verdict the counts are made of folds from those reasons: a
		// require_current wait on outdated rows alone is Outdated, not
		// Waiting.
		if r := readinessOf(lg); r != u.Readiness {
			w.fail(when, fmt.Sprintf("%s %s: counted %s, the gate's reasons say %s: %s", u.Model, u.Window, u.Readiness, r, lg.BlockedReason))
		}
	}
	lrep, err := w.live.Report(gate.BlockedFilter{})
	if err != nil {
		w.rt.Fatal(err)
	}
	lrep.Now = rep.Now // the report's Now is checked by check
	if !reflect.DeepEqual(lrep, rep) {
		w.fail(when, fmt.Sprintf("the reports differ:\n  live  %+v\n  sweep %+v", lrep, rep))
	}
	for _, f := range []gate.BlockedFilter{{Model: "core.encap"}, {Pipeline: "nope"}} {
		lr, lerr := w.live.Report(f)
		sr, serr := w.g.Sweep(ctx, f, nil)
		if fmt.Sprint(lerr) != fmt.Sprint(serr) || (lerr == nil && fmt.Sprint(lr.Models) != fmt.Sprint(sr.Models)) {
			w.fail(when, fmt.Sprintf("filter %+v: live %v %v, sweep %v %v", f, lr, lerr, sr, serr))
		}
	}
}

func (w *liveWorld) fail(when, msg string) {
	w.rt.Helper()
	w.rt.Fatalf("%s, at %s: %s\nsteps:\n  %s", when, w.now.Format(time.RFC3339Nano), msg, strings.Join(w.log, "\n  "))
}

// unitGate is what the per-unit gate (a run's) says of units[i], to tell
// which side of a disagreement is wrong.
func (w *liveWorld) unitGate(units []gate.SweptUnit, i int) string {
	if i >= len(units) {
		return "-"
	}
	u := units[i]
	m := w.sp.Model(u.Model)
	if w.g.Spec == nil {
		// Judged from the registrations alone: as registered now.
		rec, err := w.s.Model(w.t.Context(), "", u.Model)
		if err != nil {
			return err.Error()
		}
		if m, err = spec.ModelFromRecord(rec); err != nil {
			return err.Error()
		}
	}
	var win *state.Window
	if m.Temporality == spec.Temporal {
		win = &u.Window
	}
	g, err := w.g.Unit(w.t.Context(), m, win, w.now)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s: %s %v", readinessOf(g), g.BlockedReason, g.Err)
}

// register registers sp as the engine's Apply does, for a rapid.T.
func register(ctx context.Context, s state.Store, sp *spec.Spec, now time.Time) error {
	recs, edges := enginetest.Records("", sp)
	_, err := s.Register(ctx, "", recs, edges, now)
	return err
}

// currentFingerprint is the definition fingerprint g judges model's
// require-current contracts by, as engine.CurrentFingerprint reads it: the
// spec's, else the registration's, else none.
func currentFingerprint(ctx context.Context, g *gate.Reader, model string) (string, error) {
	if m := g.Spec.Model(model); m != nil {
		return spec.Fingerprint(m), nil
	}
	rec, err := g.Store.Model(ctx, g.Env.Suffix, model)
	if errors.Is(err, state.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return spec.RecordFingerprint(rec)
}
