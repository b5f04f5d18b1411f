package storetest

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var unitTests = []test{
	{"Prefill", testPrefill},
	{"PrefillRejectsEmptyWindow", testPrefillRejectsEmptyWindow},
	{"PrefillTimeless", testPrefillTimeless},
	{"PrefillLarge", testPrefillLarge},
	{"ScanUnitsFilters", testScanUnitsFilters},
	{"ScanUnitsStops", testScanUnitsStops},
	{"Stats", testStats},
	{"AppliedAndCoverage", testAppliedAndCoverage},
}

// testPrefill: prefill creates only the windows that have no unit yet, so
// re-running it (every run does) is harmless.
func testPrefill(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("a"))
	eq(t, "first prefill of [0h,3h)", prefill(t, s, "", "a", hourly(0, 3), clock(1)), 3)
	eq(t, "same prefill again", prefill(t, s, "", "a", hourly(0, 3), clock(2)), 0)
	eq(t, "prefill of [2h,5h)", prefill(t, s, "", "a", hourly(2, 5), clock(3)), 2)
	eq(t, "duplicates within one call count once", prefill(t, s, "", "a", []state.Window{win(5, 6), win(5, 6), win(6, 7)}, clock(4)), 2)
	eq(t, "no windows", prefill(t, s, "", "a", nil, clock(5)), 0)

	us := scan(t, s, "", "a")
	eq(t, "units", briefs(us), []string{
		"a [0h,1h) pending", "a [1h,2h) pending", "a [2h,3h) pending", "a [3h,4h) pending",
		"a [4h,5h) pending", "a [5h,6h) pending", "a [6h,7h) pending",
	})
	ids := map[int64]bool{}
	for _, u := range us {
		if u.ID <= 0 || ids[u.ID] {
			t.Errorf("unit %s has id %d, want a positive id of its own", hw(u.Window), u.ID)
		}
		ids[u.ID] = true
		eq(t, hw(u.Window)+" Env", u.Env, "")
		eq(t, hw(u.Window)+" Model", u.Model, "a")
		eq(t, hw(u.Window)+" Attempts", u.Attempts, 0)
		eq(t, hw(u.Window)+" Fence", u.Fence, int64(0))
		eq(t, hw(u.Window)+" LeaseOwner", u.LeaseOwner, "")
		eqTimePtr(t, hw(u.Window)+" LeaseUntil", u.LeaseUntil, nil)
		eqTimePtr(t, hw(u.Window)+" AppliedAt", u.AppliedAt, nil)
		if u.RowsWritten != nil {
			t.Errorf("%s RowsWritten = %d, want nil", hw(u.Window), *u.RowsWritten)
		}
		eqTime(t, hw(u.Window)+" Since", u.Window.Since, u.Window.Since.UTC())
	}
	if len(us) == 7 {
		// The unit keeps the time of the prefill that created it.
		eqTime(t, "[0h,1h) UpdatedAt", us[0].UpdatedAt, clock(1))
		eqTime(t, "[4h,5h) UpdatedAt", us[4].UpdatedAt, clock(3))
	}
}

// testPrefillRejectsEmptyWindow: an empty window would slip past every
// overlap test, so it must never reach the store.
func testPrefillRejectsEmptyWindow(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("a"))
	empty := state.Window{Since: at(1), Until: at(1)}
	reversed := state.Window{Since: at(2), Until: at(1)}
	for _, w := range []state.Window{empty, reversed} {
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "a", Windows: []state.Window{win(0, 1), w}, Now: clock(1)}); err == nil {
			t.Errorf("Prefill with [%s, %s) succeeded, want an error", w.Since, w.Until)
		}
	}
	eq(t, "units after refused prefills", briefs(scan(t, s, "", "a")), []string{})
}

// testPrefillTimeless: a timeless model's one existence row is the zero
// Window and round-trips as such.
func testPrefillTimeless(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", timelessModel("ref.v"))
	eq(t, "prefill", prefill(t, s, "", "ref.v", []state.Window{{}}, clock(1)), 1)
	eq(t, "prefill again", prefill(t, s, "", "ref.v", []state.Window{{}}, clock(2)), 0)
	us := scan(t, s, "", "ref.v")
	eq(t, "units", briefs(us), []string{"ref.v timeless pending"})
	if len(us) == 1 && (!us[0].Window.IsZero()) {
		t.Errorf("existence row window = %v, want the zero Window", us[0].Window)
	}
	// A windowed query never matches the existence row.
	eq(t, "units overlapping [0h,1h)", briefs(scanQ(t, s, state.UnitQuery{Model: "ref.v", Window: win(0, 1)})), []string{})

	cs := claim(t, s, "", "ref.v", 5, clock(3))
	eq(t, "claims", claimBriefs(cs), []string{"ref.v timeless running"})
	if len(cs) != 1 {
		t.FailNow()
	}
	complete(t, s, cs[0], state.Applied, clock(4))
	rows, err := s.Applied(ctx, "", "ref.v", state.Window{})
	must(t, "Applied", err)
	if len(rows) != 1 || !rows[0].Window.IsZero() || !rows[0].AppliedAt.Equal(clock(4)) {
		t.Errorf("Applied = %+v, want the existence row applied at %s", rows, clock(4))
	}
	eq(t, "coverage of a timeless model", coverage(t, s, "", "ref.v", state.Window{}), "")
}

// testPrefillLarge: the design point, 100,000 windows in one call, must not
// trip a backend's limit on statement parameters.
func testPrefillLarge(t *testing.T, s state.Store, c *config) {
	n := c.largePrefill
	register(t, s, "", fixModel("a"))
	ws := hourly(0, n)
	eq(t, "created", prefill(t, s, "", "a", ws, clock(1)), n)
	eq(t, "created again", prefill(t, s, "", "a", ws, clock(2)), 0)
	st, err := s.Stats(t.Context(), "", "a")
	must(t, "Stats", err)
	eq(t, "pending", st.Counts[state.Pending], n)
	last := scanQ(t, s, state.UnitQuery{Model: "a", Window: win(n-1, n+5)})
	eq(t, "last unit", briefs(last), []string{fmt.Sprintf("a [%dh,%dh) pending", n-1, n)})
}

// testScanUnitsFilters: window overlap (touching is not overlapping),
// statuses, and the order a timeline is drawn in.
func testScanUnitsFilters(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"), fixModel("b"), fixModel("c"))
	prefill(t, s, "", "a", hourly(0, 6), clock(1))
	prefill(t, s, "", "b", hourly(0, 2), clock(1))
	// Given backwards, read in window order.
	prefill(t, s, "", "c", []state.Window{win(2, 3), win(1, 2), win(0, 1)}, clock(1))
	_, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: win(2, 4), From: []state.UnitStatus{state.Pending}, To: state.Blocked, Now: clock(2)})
	must(t, "SetStatus", err)

	q := func(q state.UnitQuery) []string { return briefs(scanQ(t, s, q)) }
	eq(t, "a", q(state.UnitQuery{Model: "a"}), []string{
		"a [0h,1h) pending", "a [1h,2h) pending", "a [2h,3h) blocked",
		"a [3h,4h) blocked", "a [4h,5h) pending", "a [5h,6h) pending",
	})
	eq(t, "a overlapping [90m,210m)", q(state.UnitQuery{Model: "a", Window: winD(90*time.Minute, 210*time.Minute)}), []string{
		"a [1h,2h) pending", "a [2h,3h) blocked", "a [3h,4h) blocked",
	})
	eq(t, "a overlapping exactly [2h,3h)", q(state.UnitQuery{Model: "a", Window: win(2, 3)}), []string{"a [2h,3h) blocked"})
	eq(t, "a blocked", q(state.UnitQuery{Model: "a", Statuses: []state.UnitStatus{state.Blocked}}), []string{"a [2h,3h) blocked", "a [3h,4h) blocked"})
	eq(t, "a blocked or pending in [3h,5h)", q(state.UnitQuery{Model: "a", Window: win(3, 5), Statuses: []state.UnitStatus{state.Blocked, state.Pending}}), []string{
		"a [3h,4h) blocked", "a [4h,5h) pending",
	})
	eq(t, "a failed", q(state.UnitQuery{Model: "a", Statuses: []state.UnitStatus{state.Failed}}), []string{})
	eq(t, "c in window order", q(state.UnitQuery{Model: "c"}), []string{"c [0h,1h) pending", "c [1h,2h) pending", "c [2h,3h) pending"})
	eq(t, "every model of env in [1h,2h)", q(state.UnitQuery{Window: win(1, 2)}), []string{"a [1h,2h) pending", "b [1h,2h) pending", "c [1h,2h) pending"})
	eq(t, "every blocked unit of env", q(state.UnitQuery{Statuses: []state.UnitStatus{state.Blocked}}), []string{"a [2h,3h) blocked", "a [3h,4h) blocked"})
	eq(t, "another env", q(state.UnitQuery{Env: "pr1"}), []string{})

	// Statuses across every model (what a first look at the incidents
	// reads in one pass): by model name, then timeline, whatever the order
	// the units were written in, and nothing of another environment.
	register(t, s, "pr1", fixModel("a"))
	prefill(t, s, "pr1", "a", hourly(0, 2), clock(1))
	// Registered last, named between a and b: name order, not the order
	// of registration.
	register(t, s, "", fixModel("aa"))
	prefill(t, s, "", "aa", hourly(0, 1), clock(1))
	for _, c := range []state.StatusChange{
		{Model: "c", Window: win(2, 3), From: []state.UnitStatus{state.Pending}, To: state.Blocked, Now: clock(3)},
		{Model: "b", Window: win(1, 2), From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: clock(3)},
		{Model: "c", Window: win(0, 1), From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: clock(3)},
		{Env: "pr1", Model: "a", From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: clock(3)},
		{Model: "aa", From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: clock(3)},
	} {
		_, err := s.SetStatus(ctx, c)
		must(t, "SetStatus", err)
	}
	eq(t, "every failed or blocked unit of env", q(state.UnitQuery{Statuses: []state.UnitStatus{state.Failed, state.Blocked}}), []string{
		"a [2h,3h) blocked", "a [3h,4h) blocked", "aa [0h,1h) failed", "b [1h,2h) failed", "c [0h,1h) failed", "c [2h,3h) blocked",
	})
	eq(t, "every failed unit of pr1", q(state.UnitQuery{Env: "pr1", Statuses: []state.UnitStatus{state.Failed}}), []string{
		"a [0h,1h) failed", "a [1h,2h) failed",
	})
}

// testScanUnitsStops: a callback error ends the scan and is returned as is.
func testScanUnitsStops(t *testing.T, s state.Store, _ *config) {
	modelA(t, s, 50, clock(1))
	stop := errors.New("enough")
	calls := 0
	err := s.ScanUnits(t.Context(), state.UnitQuery{Model: "a"}, func(state.Unit) error { calls++; return stop })
	if !errors.Is(err, stop) {
		t.Errorf("ScanUnits err = %v, want the callback's error", err)
	}
	eq(t, "callback calls", calls, 1)
	// The store is still usable: nothing leaked a connection or a lock.
	eq(t, "prefill after a stopped scan", prefill(t, s, "", "a", hourly(50, 51), clock(2)), 1)
}

// testStats: counts per status and the newest applied_at, what `status`
// shows per model.
func testStats(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"))
	st, err := s.Stats(ctx, "", "a")
	must(t, "Stats of an empty model", err)
	eq(t, "empty counts", st.Counts, map[state.UnitStatus]int{state.Pending: 0, state.Running: 0, state.Applied: 0, state.Blocked: 0, state.Failed: 0})
	eqTimePtr(t, "empty LastAppliedAt", st.LastAppliedAt, nil)

	prefill(t, s, "", "a", hourly(0, 5), clock(1))
	cs := claim(t, s, "", "a", 2, clock(2)) // [0h,1h) and [1h,2h)
	if len(cs) != 2 {
		t.Fatalf("claimed %v, want two units", claimBriefs(cs))
	}
	complete(t, s, cs[0], state.Applied, clock(3))
	must(t, "Complete failed", s.Complete(ctx, cs[1], state.Outcome{Status: state.Failed, At: clock(3), Error: "boom"}))
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "a", Window: win(2, 3), From: []state.UnitStatus{state.Pending}, To: state.Blocked, Now: clock(4)})
	must(t, "SetStatus blocked", err)
	claim(t, s, "", "a", 1, clock(5)) // [3h,4h) running; [4h,5h) stays pending

	st, err = s.Stats(ctx, "", "a")
	must(t, "Stats", err)
	eq(t, "counts", st.Counts, map[state.UnitStatus]int{state.Pending: 1, state.Running: 1, state.Applied: 1, state.Blocked: 1, state.Failed: 1})
	eqTimePtr(t, "LastAppliedAt", st.LastAppliedAt, ptr(clock(3)))

	markApplied(t, s, "", "a", win(4, 5), clock(9))
	st, err = s.Stats(ctx, "", "a")
	must(t, "Stats", err)
	eq(t, "counts after mark", st.Counts, map[state.UnitStatus]int{state.Pending: 0, state.Running: 1, state.Applied: 2, state.Blocked: 1, state.Failed: 1})
	eqTimePtr(t, "LastAppliedAt after mark", st.LastAppliedAt, ptr(clock(9)))
}

// testAppliedAndCoverage: what the gate reads — applied rows touching a
// window, and the union of applied windows clipped to it.
func testAppliedAndCoverage(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 6, clock(1))
	markApplied(t, s, "", "a", win(0, 1), clock(10))
	markApplied(t, s, "", "a", win(1, 2), clock(11))
	markApplied(t, s, "", "a", win(3, 4), clock(13))
	markApplied(t, s, "", "a", win(5, 6), clock(15))
	claim(t, s, "", "a", 1, clock(20)) // [2h,3h) running: not applied

	rows, err := s.Applied(ctx, "", "a", state.Window{})
	must(t, "Applied", err)
	eq(t, "all applied rows", appliedBriefs(rows), []string{"[0h,1h)@10", "[1h,2h)@11", "[3h,4h)@13", "[5h,6h)@15"})
	rows, err = s.Applied(ctx, "", "a", winD(90*time.Minute, 4*time.Hour))
	must(t, "Applied", err)
	// [3h,4h) overlaps; [0h,1h) and [5h,6h) do not; [4h,5h) is pending.
	eq(t, "applied rows touching [90m,4h)", appliedBriefs(rows), []string{"[1h,2h)@11", "[3h,4h)@13"})
	rows, err = s.Applied(ctx, "", "a", win(4, 5))
	must(t, "Applied", err)
	eq(t, "applied rows touching [4h,5h)", appliedBriefs(rows), []string{})

	eq(t, "coverage", coverage(t, s, "", "a", state.Window{}), "[0h,2h) [3h,4h) [5h,6h)")
	eq(t, "coverage clipped to [90m,330m)", coverage(t, s, "", "a", winD(90*time.Minute, 330*time.Minute)), "[90m,2h) [3h,4h) [5h,330m)")
	set, err := s.Coverage(ctx, "", "a", win(0, 6))
	must(t, "Coverage", err)
	eq(t, "holes before 6h", hws(set.Gaps(win(0, 6))), "[2h,3h) [4h,5h)")
}

func appliedBriefs(rows []state.AppliedRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = hw(r.Window) + "@" + offsetMinutes(r.AppliedAt)
	}
	return out
}

// offsetMinutes prints a clock() instant as its minute number.
func offsetMinutes(t time.Time) string {
	return strconv.Itoa(int(t.Sub(clock(0)) / time.Minute))
}
