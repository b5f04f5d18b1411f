package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var stuckTests = []test{
	{"GroupsByModelStatusAndReason", testStuckGroups},
	{"PagesInWindowOrder", testStuckPages},
	{"PageKeysetSurvivesChanges", testStuckPageKeyset},
	{"Refusals", testStuckRefusals},
	{"OutstandingWindows", testOutstandingWindows},
	{"FailingUnits", testFailingUnits},
	{"LongReason", testStuckLongReason},
}

// stuckStore registers a (fixed, hourly), f (flexible) and t (timeless)
// in the default environment and a in dev, and leaves them with:
// a blocked [0,10) for "r1", blocked [10,15) for "r2", failed [20,23),
// pending and applied elsewhere; f's units [0,2) [0,3) [1,2) [4,6)
// blocked for "r1" (two share a since); t's existence row blocked for
// "r3"; dev's a blocked [0,2) for "r1".
func stuckStore(t *testing.T, s state.Store) state.StuckReader {
	t.Helper()
	sr := storeAs[state.StuckReader](t, s, "StuckGroups")
	register(t, s, "", fixModel("a"), flexModel("f"), timelessModel("t"))
	register(t, s, "dev", fixModel("a"))
	prefill(t, s, "", "a", hourly(0, 30), clock(0))
	prefill(t, s, "dev", "a", hourly(0, 30), clock(0))
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(0, 3), win(1, 2), win(4, 6)}, clock(0))
	prefill(t, s, "", "t", []state.Window{{}}, clock(0))
	move := func(env, model string, w state.Window, to state.UnitStatus, reason string, minute int) {
		t.Helper()
		_, err := s.SetStatus(t.Context(), state.StatusChange{Env: env, Model: model, Window: w,
			From: []state.UnitStatus{state.Pending}, To: to, Reason: reason, Now: clock(minute)})
		must(t, "SetStatus", err)
	}
	// Two moves for "r1" at minutes 3 and 1: the group's change is the
	// earlier one.
	move("", "a", win(5, 10), state.Blocked, "r1", 3)
	move("", "a", win(0, 5), state.Blocked, "r1", 1)
	move("", "a", win(10, 15), state.Blocked, "r2", 2)
	move("", "a", win(20, 23), state.Failed, "", 1)
	move("", "a", win(25, 30), state.Applied, "", 1)
	move("", "f", state.Window{}, state.Blocked, "r1", 1)
	move("", "t", state.Window{}, state.Blocked, "r3", 1)
	move("dev", "a", win(0, 2), state.Blocked, "r1", 1)
	return sr
}

func groupBriefs(gs []state.StuckGroup) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = fmt.Sprintf("%s %s %q %d %s since +%gm", g.Model, g.Status, g.Reason, g.Units, hw(g.Span), g.Changed.Sub(clock(0)).Minutes())
	}
	return out
}

// testStuckGroups: the grouped read counts each model's stuck units by
// status and stored reason with the span of their windows, keeps
// environments apart and reads only the statuses asked for.
func testStuckGroups(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	ctx := t.Context()
	got, err := sr.StuckGroups(ctx, "", []state.UnitStatus{state.Failed, state.Blocked})
	must(t, "StuckGroups", err)
	eq(t, "blocked and failed groups", groupBriefs(got), []string{
		`a blocked "r1" 10 [0h,10h) since +1m`,
		`a blocked "r2" 5 [10h,15h) since +2m`,
		`a failed "" 3 [20h,23h) since +1m`,
		`f blocked "r1" 4 [0h,6h) since +1m`,
		`t blocked "r3" 1 timeless since +1m`,
	})
	got, err = sr.StuckGroups(ctx, "", []state.UnitStatus{state.Blocked})
	must(t, "StuckGroups", err)
	eq(t, "blocked groups", len(got), 4)
	got, err = sr.StuckGroups(ctx, "dev", []state.UnitStatus{state.Blocked, state.Failed})
	must(t, "StuckGroups", err)
	eq(t, "dev groups", groupBriefs(got), []string{`a blocked "r1" 2 [0h,2h) since +1m`})
	got, err = sr.StuckGroups(ctx, "nowhere", []state.UnitStatus{state.Blocked})
	must(t, "StuckGroups", err)
	eq(t, "an environment without models", len(got), 0)
}

// pageAll reads every stuck unit of model a page of limit at a time and
// returns them with the size of each page.
func pageAll(t *testing.T, sr state.StuckReader, model string, statuses []state.UnitStatus, limit int) ([]state.Unit, []int) {
	t.Helper()
	var (
		all   []state.Unit
		sizes []int
		after *state.Window
	)
	for {
		page, err := sr.StuckPage(t.Context(), state.StuckPageQuery{Model: model, Statuses: statuses, After: after, Limit: limit})
		must(t, "StuckPage", err)
		sizes = append(sizes, len(page))
		if len(page) == 0 {
			return all, sizes
		}
		all = append(all, page...)
		w := page[len(page)-1].Window
		after = &w
		if len(sizes) > 100 {
			t.Fatalf("%s: paging does not end", model)
		}
	}
}

// testStuckPages: paging a model's stuck units a few at a time reads each
// once, in window order (since, then until), with what ScanUnits reads
// for them; a timeless model's one unit is one page.
func testStuckPages(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	both := []state.UnitStatus{state.Blocked, state.Failed}
	got, sizes := pageAll(t, sr, "a", both, 4)
	want := scanQ(t, s, state.UnitQuery{Model: "a", Statuses: both})
	eq(t, "a's stuck units paged", briefs(got), briefs(want))
	eq(t, "a's page sizes", sizes, []int{4, 4, 4, 4, 2, 0})
	if !slices.EqualFunc(got, want, func(a, b state.Unit) bool { return a.ID == b.ID && a.BlockedReason == b.BlockedReason }) {
		t.Errorf("paged units differ from scanned ones in id or reason")
	}
	got, _ = pageAll(t, sr, "a", []state.UnitStatus{state.Failed}, 2)
	eq(t, "a's failed units", briefs(got), []string{"a [20h,21h) failed", "a [21h,22h) failed", "a [22h,23h) failed"})
	got, sizes = pageAll(t, sr, "f", both, 1)
	eq(t, "f's units, one a page", hws(windowsOf(got)), hws([]state.Window{win(0, 2), win(0, 3), win(1, 2), win(4, 6)}))
	eq(t, "f's page sizes", sizes, []int{1, 1, 1, 1, 0})
	got, sizes = pageAll(t, sr, "t", both, 5)
	eq(t, "t's existence row", briefs(got), []string{"t timeless blocked"})
	eq(t, "t's page sizes", sizes, []int{1, 0})
	if got[0].BlockedReason != "r3" {
		t.Errorf("t's reason %q, want r3", got[0].BlockedReason)
	}
}

func windowsOf(us []state.Unit) []state.Window {
	out := make([]state.Window, len(us))
	for i, u := range us {
		out[i] = u.Window
	}
	return out
}

// testStuckPageKeyset: a page goes on after the last window read, so a
// unit of a page already read that is released, or one further on that
// becomes blocked in between, neither shifts nor repeats what follows.
func testStuckPageKeyset(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	ctx := t.Context()
	blocked := []state.UnitStatus{state.Blocked}
	first, err := sr.StuckPage(ctx, state.StuckPageQuery{Model: "a", Statuses: blocked, Limit: 5})
	must(t, "StuckPage", err)
	eq(t, "first page", hws(windowsOf(first)), hws(hourly(0, 5)))
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "a", Window: win(0, 3), From: blocked, To: state.Pending, Now: clock(2)})
	must(t, "SetStatus", err)
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "a", Window: win(15, 16), From: []state.UnitStatus{state.Pending}, To: state.Blocked, Reason: "r4", Now: clock(2)})
	must(t, "SetStatus", err)
	after := first[len(first)-1].Window
	next, err := sr.StuckPage(ctx, state.StuckPageQuery{Model: "a", Statuses: blocked, After: &after, Limit: 100})
	must(t, "StuckPage", err)
	eq(t, "the rest", hws(windowsOf(next)), hws(hourly(5, 16)))
}

// testStuckRefusals: a status that is not stuck, no status, a limit below
// one and an unknown model are refused.
func testStuckRefusals(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	ctx := t.Context()
	if _, err := sr.StuckGroups(ctx, "", []state.UnitStatus{state.Pending}); err == nil {
		t.Error("StuckGroups of pending units: no error")
	}
	if _, err := sr.StuckGroups(ctx, "", nil); err == nil {
		t.Error("StuckGroups of no status: no error")
	}
	if _, err := sr.StuckPage(ctx, state.StuckPageQuery{Model: "a", Statuses: []state.UnitStatus{state.Blocked}}); err == nil {
		t.Error("StuckPage with no limit: no error")
	}
	if _, err := sr.StuckPage(ctx, state.StuckPageQuery{Model: "a", Statuses: []state.UnitStatus{state.Applied}, Limit: 1}); err == nil {
		t.Error("StuckPage of applied units: no error")
	}
	_, err := sr.StuckPage(ctx, state.StuckPageQuery{Model: "nope", Statuses: []state.UnitStatus{state.Blocked}, Limit: 1})
	wantNotFound(t, "StuckPage of an unknown model", err)
}

// testOutstandingWindows: the windows of a model's units that are not
// applied are those ScanUnits reads for pending, running, blocked and
// failed units, in window order, as microseconds (0, 0 for the timeless
// row), each model's together, for many models at once; environments
// stay apart and an unregistered model has none.
func testOutstandingWindows(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	ctx := t.Context()
	claimExactly(t, s, "", "a", 1, clock(3)) // one running unit
	outstanding := []state.UnitStatus{state.Pending, state.Running, state.Blocked, state.Failed}
	read := func(env string, models ...string) map[string][]string {
		t.Helper()
		out := map[string][]string{}
		last := ""
		err := sr.OutstandingWindows(ctx, env, models, func(model string, since, until int64) error {
			if model != last && out[model] != nil {
				t.Errorf("%s's windows come apart", model)
			}
			last = model
			w := state.Window{}
			if since != 0 || until != 0 {
				w = state.Window{Since: time.UnixMicro(since).UTC(), Until: time.UnixMicro(until).UTC()}
			}
			out[model] = append(out[model], hw(w))
			return nil
		})
		must(t, "OutstandingWindows", err)
		return out
	}
	all := read("", "a", "f", "t", "nope")
	for _, m := range []string{"a", "f", "t"} {
		var want []string
		for _, u := range scanQ(t, s, state.UnitQuery{Model: m, Statuses: outstanding}) {
			want = append(want, hw(u.Window))
		}
		eq(t, m+"'s outstanding windows", all[m], want)
	}
	eq(t, "a's outstanding windows, a count", len(all["a"]), 25)
	eq(t, "dev's a", len(read("dev", "a")["a"]), 30)
	eq(t, "an unregistered model", len(all["nope"]), 0)
	eq(t, "no model", len(read("")), 0)
	// An error of fn ends the read with that error, fn not called again
	// (a store that reads models at once stops them all).
	enough := errors.New("enough")
	calls := 0
	err := sr.OutstandingWindows(ctx, "", []string{"a", "f", "t"}, func(string, int64, int64) error {
		calls++
		return enough
	})
	if !errors.Is(err, enough) || calls != 1 {
		t.Errorf("fn failing at once: error %v after %d calls, want %v after 1", err, calls, enough)
	}
}

// testFailingUnits: the failing read is every failed unit of the
// environment and every pending unit with a not-before time (a retry's
// wait, with its error; a wait for upstream work, without one), each
// model's together in window order; a pending unit with no wait, a
// blocked one and another environment's failed one are not in it.
func testFailingUnits(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	ctx := t.Context()
	cs := claimExactly(t, s, "", "a", 2, clock(3))
	retry := state.Outcome{Status: state.Pending, Error: "exit status 1: source down", At: clock(4), NotBefore: clock(30)}
	wait := state.Outcome{Status: state.Pending, BlockedReason: "up (EXACT): waiting on 1 running unit", At: clock(4), NotBefore: clock(20)}
	must(t, "Complete", s.Complete(ctx, cs[0], retry))
	must(t, "Complete", s.Complete(ctx, cs[1], wait))
	_, err := s.SetStatus(ctx, state.StatusChange{Env: "dev", Model: "a", Window: win(5, 6),
		From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: clock(1)})
	must(t, "SetStatus", err)
	read := func(env string) []state.Unit {
		t.Helper()
		var out []state.Unit
		must(t, "FailingUnits", sr.FailingUnits(ctx, env, func(u state.Unit) error {
			out = append(out, u)
			return nil
		}))
		return out
	}
	got := read("")
	want := []state.Unit{{Model: "a", Window: cs[0].Unit.Window, Status: state.Pending}, {Model: "a", Window: cs[1].Unit.Window, Status: state.Pending}}
	for _, w := range hourly(20, 23) {
		want = append(want, state.Unit{Model: "a", Window: w, Status: state.Failed})
	}
	slices.SortFunc(want, func(a, b state.Unit) int { return a.Window.Since.Compare(b.Window.Since) })
	eq(t, "the failing units, in window order", briefs(got), briefs(want))
	for _, u := range got {
		if u.Env != "" || u.Model != "a" || u.ID == 0 {
			t.Errorf("unit %s: env %q, model %q, id %d; want a of the default environment with its id", brief(u), u.Env, u.Model, u.ID)
		}
		switch {
		case u.Window == cs[0].Unit.Window && (u.Error != retry.Error || u.NotBefore == nil || !u.NotBefore.Equal(clock(30))):
			t.Errorf("the retrying unit: error %q, not before %v", u.Error, u.NotBefore)
		case u.Window == cs[1].Unit.Window && (u.Error != "" || u.NotBefore == nil || !u.NotBefore.Equal(clock(20))):
			t.Errorf("the waiting unit: error %q, not before %v", u.Error, u.NotBefore)
		}
	}
	eq(t, "dev's failing units", briefs(read("dev")), []string{"a [5h,6h) failed"})
	eq(t, "an environment without models", len(read("nowhere")), 0)
}

// testStuckLongReason: a unit blocked for a reason of 20,000 characters
// that do not compress (a gate listing hundreds of missing ranges comes
// near) is stored, counted by the grouped read and paged whole. An index
// entry that carried the reason would refuse the write on PostgreSQL
// (2,704 bytes at most), and the unit could never be blocked.
func testStuckLongReason(t *testing.T, s state.Store, _ *config) {
	sr := stuckStore(t, s)
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 20_000 {
		fmt.Fprintf(&b, "%016x", r.Uint64())
	}
	reason := b.String()
	_, err := s.SetStatus(t.Context(), state.StatusChange{Model: "a", Window: win(15, 16),
		From: []state.UnitStatus{state.Pending}, To: state.Blocked, Reason: reason, Now: clock(2)})
	must(t, "SetStatus with a long reason", err)
	groups, err := sr.StuckGroups(t.Context(), "", []state.UnitStatus{state.Blocked})
	must(t, "StuckGroups", err)
	found := false
	for _, g := range groups {
		if g.Model == "a" && g.Reason == reason {
			found = g.Units == 1
		}
	}
	if !found {
		t.Errorf("the grouped read has no group of a's one unit with the long reason")
	}
	after := win(14, 15)
	page, err := sr.StuckPage(t.Context(), state.StuckPageQuery{Model: "a", Statuses: []state.UnitStatus{state.Blocked}, After: &after, Limit: 1})
	must(t, "StuckPage", err)
	if len(page) != 1 || page[0].BlockedReason != reason {
		t.Errorf("the page after 14h: %v, want the unit [15h,16h) with its whole reason", briefs(page))
	}
	// Reasons either side of 2,000 bytes, where PostgreSQL's grouped read
	// splits between an index carrying the reason and one that does not
	// (migration 0017), and a multi-byte one that is under 2,000
	// characters but over 2,000 bytes: each counted once, in a group of
	// its own, its reason whole.
	edge := map[string]int{
		strings.Repeat("s", 1999): 16,
		strings.Repeat("l", 2000): 17,
		strings.Repeat("é", 1200): 18, // 2,400 bytes
	}
	for r, hour := range edge {
		_, err := s.SetStatus(t.Context(), state.StatusChange{Model: "a", Window: win(hour, hour+1),
			From: []state.UnitStatus{state.Pending}, To: state.Blocked, Reason: r, Now: clock(2)})
		must(t, "SetStatus", err)
	}
	groups, err = sr.StuckGroups(t.Context(), "", []state.UnitStatus{state.Blocked, state.Failed})
	must(t, "StuckGroups", err)
	total := 0
	for _, g := range groups {
		if g.Model != "a" {
			continue
		}
		total += g.Units
		if hour, ok := edge[g.Reason]; ok {
			if g.Units != 1 || g.Span != win(hour, hour+1) {
				t.Errorf("the group of the %d-byte reason: %d units %s, want 1 unit [%dh,%dh)", len(g.Reason), g.Units, hw(g.Span), hour, hour+1)
			}
			delete(edge, g.Reason)
		}
	}
	for r := range edge {
		t.Errorf("no group of the %d-byte reason", len(r))
	}
	// a: 15 blocked for r1 and r2, 3 failed, the long reason and the three.
	if total != 15+3+1+3 {
		t.Errorf("a's groups count %d units, want %d: each stuck unit once", total, 15+3+1+3)
	}
}
