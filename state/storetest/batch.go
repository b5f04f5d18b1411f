package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// batchTests hold CompleteBatch to being Complete for many claims in one
// transaction: every item must come out exactly as Complete would have made
// it, fenced on its own.
var batchTests = []test{
	{"RecordsEveryOutcome", testBatchRecordsEveryOutcome},
	{"StaleClaimRefusedAlone", testBatchStaleClaimRefusedAlone},
	{"RetryIsNoOp", testBatchRetryIsNoOp},
	{"InvalidOutcomeRefusedAlone", testBatchInvalidOutcome},
	{"SameUnitTwice", testBatchSameUnitTwice},
	{"Empty", testBatchEmpty},
	{"CoverageAndFlexible", testBatchCoverageAndFlexible},
	{"HundredsOfUnits", testBatchHundreds},
}

// claimedAt picks the claim of window w out of cs.
func claimedAt(t testing.TB, cs []state.Claim, w state.Window) state.Claim {
	t.Helper()
	for _, c := range cs {
		if c.Unit.Window.Equal(w) {
			return c
		}
	}
	t.Fatalf("no claim of %s among %v", hw(w), claimBriefs(cs))
	return state.Claim{}
}

// completeBatch calls CompleteBatch, fails t on a whole-batch error or an
// answer of the wrong length, and returns the per-item errors.
func completeBatch(t testing.TB, s state.Store, items []state.Completion) []error {
	t.Helper()
	errs, err := s.CompleteBatch(t.Context(), items)
	if err != nil {
		t.Fatalf("CompleteBatch(%d items): %v", len(items), err)
	}
	if len(errs) != len(items) {
		t.Fatalf("CompleteBatch(%d items) answered for %d", len(items), len(errs))
	}
	return errs
}

// wantNil fails t for each non-nil per-item error.
func wantNil(t testing.TB, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: item %d: %v, want it recorded", what, i, err)
		}
	}
}

// testBatchRecordsEveryOutcome: applied, failed, blocked and released in
// one batch, under one run; each unit row carries exactly what Complete
// would have written, and the feed has one change per unit.
func testBatchRecordsEveryOutcome(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 5, clock(1))
	runID, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(1)})
	must(t, "CreateRun", err)
	cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w1", Lease: 5 * time.Minute, Limit: 4, RunID: runID, Now: clock(2)})
	must(t, "Claim", err)
	eq(t, "claimed", claimBriefs(cs), []string{"a [0h,1h) running", "a [1h,2h) running", "a [2h,3h) running", "a [3h,4h) running"})
	seq := lastSeq(t, s)

	reason := "up (WHOLE): not applied"
	errs := completeBatch(t, s, []state.Completion{
		{Claim: claimedAt(t, cs, win(0, 1)), Outcome: state.Outcome{Status: state.Applied, At: clock(3), RowsWritten: ptr(int64(42))}},
		{Claim: claimedAt(t, cs, win(1, 2)), Outcome: state.Outcome{Status: state.Failed, At: clock(4), Error: "exit status 3"}},
		{Claim: claimedAt(t, cs, win(2, 3)), Outcome: state.Outcome{Status: state.Blocked, At: clock(5), BlockedReason: reason}},
		{Claim: claimedAt(t, cs, win(3, 4)), Outcome: state.Outcome{Status: state.Pending, At: clock(6)}},
	})
	wantNil(t, "batch", errs)
	eq(t, "units", briefs(scan(t, s, "", "a")),
		[]string{"a [0h,1h) applied", "a [1h,2h) failed", "a [2h,3h) blocked", "a [3h,4h) pending", "a [4h,5h) pending"})

	u := unit(t, s, "", "a", win(0, 1))
	eqTimePtr(t, "applied AppliedAt", u.AppliedAt, ptr(clock(3)))
	eq(t, "applied RowsWritten", fmtPtr(u.RowsWritten), "42")
	eq(t, "applied Attempts", u.Attempts, 1)
	eq(t, "applied LeaseOwner", u.LeaseOwner, "")
	eqTimePtr(t, "applied LeaseUntil", u.LeaseUntil, nil)
	eqTime(t, "applied UpdatedAt", u.UpdatedAt, clock(3))
	eq(t, "applied RunID", u.RunID, runID)

	u = unit(t, s, "", "a", win(1, 2))
	eq(t, "failed Error", u.Error, "exit status 3")
	eqTimePtr(t, "failed AppliedAt", u.AppliedAt, nil)
	eq(t, "failed RowsWritten", fmtPtr(u.RowsWritten), "nil")
	eq(t, "failed Attempts", u.Attempts, 1)
	eqTime(t, "failed UpdatedAt", u.UpdatedAt, clock(4))

	u = unit(t, s, "", "a", win(2, 3))
	eq(t, "blocked BlockedReason", u.BlockedReason, reason)
	eq(t, "blocked Error", u.Error, "")
	eq(t, "blocked Attempts", u.Attempts, 1)

	u = unit(t, s, "", "a", win(3, 4))
	eq(t, "released Attempts", u.Attempts, 0)
	eq(t, "released LeaseOwner", u.LeaseOwner, "")
	eqTimePtr(t, "released LeaseUntil", u.LeaseUntil, nil)
	eqTime(t, "released UpdatedAt", u.UpdatedAt, clock(6))

	got := changes(t, s, seq)
	eq(t, "changes", sortedChangeBriefs(got), []string{
		fmt.Sprintf("a [0h,1h) running->applied x1 run=%d", runID),
		fmt.Sprintf("a [1h,2h) running->failed x1 run=%d", runID),
		fmt.Sprintf("a [2h,3h) running->blocked x1 run=%d", runID),
		fmt.Sprintf("a [3h,4h) running->pending x1 run=%d", runID),
	})
	// Each change carries its own outcome's time, as four Completes would.
	ats := map[state.UnitStatus]time.Time{}
	for _, c := range got {
		ats[c.To] = c.At
	}
	eqTime(t, "applied change At", ats[state.Applied], clock(3))
	eqTime(t, "failed change At", ats[state.Failed], clock(4))
	eqTime(t, "blocked change At", ats[state.Blocked], clock(5))
	eqTime(t, "released change At", ats[state.Pending], clock(6))
	eq(t, "coverage", coverage(t, s, "", "a", state.Window{}), "[0h,1h)")

	// The released unit is claimable again, under a new fence.
	again := claim(t, s, "", "a", 1, clock(7))
	eq(t, "reclaimed", claimBriefs(again), []string{"a [3h,4h) running"})
	if again[0].Fence <= claimedAt(t, cs, win(3, 4)).Fence {
		t.Errorf("new fence %d is not above the released claim's %d", again[0].Fence, claimedAt(t, cs, win(3, 4)).Fence)
	}
}

// testBatchStaleClaimRefusedAlone: one claim of the batch lost its unit to
// another worker; that item is ErrLeaseLost and changes nothing, the others
// commit.
func testBatchStaleClaimRefusedAlone(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 3, clock(1))
	cs := claimExactly(t, s, "", "a", 3, clock(0)) // leases end at clock(10)
	// [1h,2h)'s worker went quiet: its lease ends, another worker takes it.
	must(t, "Heartbeat", s.Heartbeat(ctx, claimedAt(t, cs, win(0, 1)), clock(30)))
	must(t, "Heartbeat", s.Heartbeat(ctx, claimedAt(t, cs, win(2, 3)), clock(30)))
	n, err := s.ReleaseExpired(ctx, clock(11))
	must(t, "ReleaseExpired", err)
	eq(t, "released", n, 1)
	cur, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w2", Lease: 10 * time.Minute, Limit: 1, Now: clock(12)})
	must(t, "Claim by w2", err)
	eq(t, "w2 claimed", claimBriefs(cur), []string{"a [1h,2h) running"})
	before := unit(t, s, "", "a", win(1, 2))
	seq := lastSeq(t, s)

	errs := completeBatch(t, s, []state.Completion{
		{Claim: claimedAt(t, cs, win(0, 1)), Outcome: state.Outcome{Status: state.Applied, At: clock(13)}},
		{Claim: claimedAt(t, cs, win(1, 2)), Outcome: state.Outcome{Status: state.Applied, At: clock(13)}},
		{Claim: claimedAt(t, cs, win(2, 3)), Outcome: state.Outcome{Status: state.Failed, At: clock(13), Error: "boom"}},
	})
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("live claims in the batch: errs %v, want both recorded", errs)
	}
	wantLeaseLost(t, "the stale claim in the batch", errs[1])
	eq(t, "the stale claim's unit", unit(t, s, "", "a", win(1, 2)), before)
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) applied", "a [1h,2h) running", "a [2h,3h) failed"})
	eq(t, "changes", sortedChangeBriefs(changes(t, s, seq)), []string{
		"a [0h,1h) running->applied x1 run=0",
		"a [2h,3h) running->failed x1 run=0",
	})
	// w2 still holds its unit.
	must(t, "Complete by w2", s.Complete(ctx, cur[0], state.Outcome{Status: state.Applied, At: clock(14)}))

	// A batch of nothing but a claim on a deleted unit: refused, nothing else.
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "a", Window: win(0, 3), Now: clock(15)})
	must(t, "Delete", err)
	seq = lastSeq(t, s)
	errs = completeBatch(t, s, []state.Completion{{Claim: cur[0], Outcome: state.Outcome{Status: state.Failed, At: clock(16), Error: "late"}}})
	wantLeaseLost(t, "a claim on a deleted unit", errs[0])
	eq(t, "changes after the refused batch", changeBriefs(changes(t, s, seq)), []string{})
}

// testBatchRetryIsNoOp: a worker that lost the batch's acknowledgement sends
// it again; the units it recorded stay exactly as they were and the feed
// records nothing, while an item asking for another status than the one
// recorded is ErrLeaseLost.
func testBatchRetryIsNoOp(t *testing.T, s state.Store, _ *config) {
	modelA(t, s, 3, clock(1))
	cs := claimExactly(t, s, "", "a", 3, clock(2))
	first := []state.Completion{
		{Claim: claimedAt(t, cs, win(0, 1)), Outcome: state.Outcome{Status: state.Applied, At: clock(3), RowsWritten: ptr(int64(7))}},
		{Claim: claimedAt(t, cs, win(1, 2)), Outcome: state.Outcome{Status: state.Failed, At: clock(3), Error: "boom"}},
		{Claim: claimedAt(t, cs, win(2, 3)), Outcome: state.Outcome{Status: state.Pending, At: clock(3)}},
	}
	wantNil(t, "first batch", completeBatch(t, s, first))
	before := scan(t, s, "", "a")
	seq := lastSeq(t, s)

	// The retry carries a later time: were it applied again, AppliedAt and
	// UpdatedAt would move.
	retry := make([]state.Completion, len(first))
	copy(retry, first)
	for i := range retry {
		retry[i].Outcome.At = clock(9)
	}
	wantNil(t, "the retried batch", completeBatch(t, s, retry))
	eq(t, "units after the retry", scan(t, s, "", "a"), before)
	eq(t, "changes after the retry", changeBriefs(changes(t, s, seq)), []string{})

	// Same fence, another status: not a repeat.
	errs := completeBatch(t, s, []state.Completion{
		{Claim: claimedAt(t, cs, win(0, 1)), Outcome: state.Outcome{Status: state.Failed, At: clock(10), Error: "x"}},
		{Claim: claimedAt(t, cs, win(1, 2)), Outcome: state.Outcome{Status: state.Failed, At: clock(10), Error: "boom"}},
	})
	wantLeaseLost(t, "applied unit completed again as failed", errs[0])
	if errs[1] != nil {
		t.Errorf("failed unit completed again as failed: %v, want a no-op", errs[1])
	}
	eq(t, "units after the mismatched retry", scan(t, s, "", "a"), before)
	eq(t, "changes after the mismatched retry", changeBriefs(changes(t, s, seq)), []string{})
}

// testBatchInvalidOutcome: "running" is not an outcome; that item is
// refused (not as a lost lease) and the rest of the batch commits.
func testBatchInvalidOutcome(t *testing.T, s state.Store, _ *config) {
	modelA(t, s, 2, clock(1))
	cs := claimExactly(t, s, "", "a", 2, clock(2))
	errs := completeBatch(t, s, []state.Completion{
		{Claim: claimedAt(t, cs, win(0, 1)), Outcome: state.Outcome{Status: state.Running, At: clock(3)}},
		{Claim: claimedAt(t, cs, win(1, 2)), Outcome: state.Outcome{Status: state.Applied, At: clock(3)}},
	})
	if errs[0] == nil || errors.Is(errs[0], state.ErrLeaseLost) {
		t.Errorf("outcome running: err = %v, want a refusal that is not a lost lease", errs[0])
	}
	if errs[1] != nil {
		t.Errorf("the valid item: %v, want it recorded", errs[1])
	}
	u := unit(t, s, "", "a", win(0, 1))
	eq(t, "the refused item's unit", brief(u), "a [0h,1h) running")
	eqTime(t, "its UpdatedAt", u.UpdatedAt, clock(2))
	eq(t, "the other unit", brief(unit(t, s, "", "a", win(1, 2))), "a [1h,2h) applied")
}

// testBatchSameUnitTwice: items are taken in order, so the first outcome
// of a unit wins, the same one again is a repeat and another one is
// ErrLeaseLost.
func testBatchSameUnitTwice(t *testing.T, s state.Store, _ *config) {
	modelA(t, s, 2, clock(1))
	cs := claimExactly(t, s, "", "a", 2, clock(2))
	c0, c1 := claimedAt(t, cs, win(0, 1)), claimedAt(t, cs, win(1, 2))
	seq := lastSeq(t, s)
	errs := completeBatch(t, s, []state.Completion{
		{Claim: c0, Outcome: state.Outcome{Status: state.Applied, At: clock(3)}},
		{Claim: c1, Outcome: state.Outcome{Status: state.Blocked, At: clock(3), BlockedReason: "up (WHOLE): not applied"}},
		{Claim: c0, Outcome: state.Outcome{Status: state.Applied, At: clock(4)}},
		{Claim: c1, Outcome: state.Outcome{Status: state.Failed, At: clock(4), Error: "x"}},
	})
	for i, want := range []bool{false, false, false, true} {
		if lost := errors.Is(errs[i], state.ErrLeaseLost); lost != want || !lost && errs[i] != nil {
			t.Errorf("item %d: err = %v, want lease lost %v", i, errs[i], want)
		}
	}
	u := unit(t, s, "", "a", win(0, 1))
	eq(t, "first unit", brief(u), "a [0h,1h) applied")
	eqTimePtr(t, "its AppliedAt, from the first item", u.AppliedAt, ptr(clock(3)))
	eq(t, "second unit", brief(unit(t, s, "", "a", win(1, 2))), "a [1h,2h) blocked")
	eq(t, "changes", sortedChangeBriefs(changes(t, s, seq)), []string{
		"a [0h,1h) running->applied x1 run=0",
		"a [1h,2h) running->blocked x1 run=0",
	})
}

// testBatchEmpty: an empty batch answers with no errors and records nothing.
func testBatchEmpty(t *testing.T, s state.Store, _ *config) {
	seq := lastSeq(t, s)
	errs, err := s.CompleteBatch(t.Context(), nil)
	must(t, "CompleteBatch(nil)", err)
	eq(t, "errors", len(errs), 0)
	eq(t, "changes", changeBriefs(changes(t, s, seq)), []string{})
}

// testBatchCoverageAndFlexible: a batch applying a flexible model's
// disjoint units and a fixed model's adjacent ones, across models and a
// timeless existence row, leaves coverage the union of the applied
// windows, and a released flexible unit lets its overlapping neighbour be
// claimed.
func testBatchCoverageAndFlexible(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("a"), flexModel("f"), timelessModel("t"))
	prefill(t, s, "", "a", hourly(0, 6), clock(1))
	// [0h,2h) [1h,3h) [3h,5h) [4h,6h): each overlaps one neighbour.
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(1, 3), win(3, 5), win(4, 6)}, clock(1))
	prefill(t, s, "", "t", []state.Window{{}}, clock(1))
	fixed := claim(t, s, "", "a", 6, clock(2))
	flex := claim(t, s, "", "f", 4, clock(2))
	eq(t, "flexible claimed", claimBriefs(flex), []string{"f [0h,2h) running", "f [3h,5h) running"})
	timeless := claim(t, s, "", "t", 1, clock(2))
	if len(fixed) != 6 || len(timeless) != 1 {
		t.Fatalf("claimed %v and %v", claimBriefs(fixed), claimBriefs(timeless))
	}
	var items []state.Completion
	for _, h := range []int{0, 1, 2, 4} { // [3h,4h) and [5h,6h) fail
		items = append(items, state.Completion{Claim: claimedAt(t, fixed, win(h, h+1)), Outcome: state.Outcome{Status: state.Applied, At: clock(3)}})
	}
	for _, h := range []int{3, 5} {
		items = append(items, state.Completion{Claim: claimedAt(t, fixed, win(h, h+1)), Outcome: state.Outcome{Status: state.Failed, At: clock(3), Error: "x"}})
	}
	items = append(items,
		state.Completion{Claim: claimedAt(t, flex, win(0, 2)), Outcome: state.Outcome{Status: state.Applied, At: clock(3)}},
		state.Completion{Claim: claimedAt(t, flex, win(3, 5)), Outcome: state.Outcome{Status: state.Pending, At: clock(3)}},
		state.Completion{Claim: timeless[0], Outcome: state.Outcome{Status: state.Applied, At: clock(3)}},
	)
	wantNil(t, "batch", completeBatch(t, s, items))
	eq(t, "fixed coverage", coverage(t, s, "", "a", state.Window{}), "[0h,3h) [4h,5h)")
	eq(t, "fixed coverage within [2h,5h)", coverage(t, s, "", "a", win(2, 5)), "[2h,3h) [4h,5h)")
	eq(t, "flexible coverage", coverage(t, s, "", "f", state.Window{}), "[0h,2h)")
	eq(t, "timeless unit", brief(unit(t, s, "", "t", state.Window{})), "t timeless applied")
	// [1h,3h) no longer overlaps a running unit; [3h,5h) is pending again,
	// and [4h,6h) waits behind it.
	eq(t, "flexible claimable after the batch", claimBriefs(claim(t, s, "", "f", 1, clock(4))), []string{"f [1h,3h) running"})
	eq(t, "then", claimBriefs(claim(t, s, "", "f", 2, clock(4))), []string{"f [3h,5h) running"})
}

// testBatchHundreds: one batch of 300 units, the size a busy worker sends,
// records every one of them with one change each.
func testBatchHundreds(t *testing.T, s state.Store, _ *config) {
	modelA(t, s, 300, clock(1))
	cs := claim(t, s, "", "a", 300, clock(2))
	if len(cs) != 300 {
		t.Fatalf("claimed %d units, want 300", len(cs))
	}
	seq := lastSeq(t, s)
	items := make([]state.Completion, len(cs))
	for i, c := range cs {
		o := state.Outcome{Status: state.Applied, At: clock(3), RowsWritten: ptr(int64(i))}
		if c.Unit.Window.Equal(win(150, 151)) {
			o = state.Outcome{Status: state.Failed, At: clock(3), Error: "x"}
		}
		items[i] = state.Completion{Claim: c, Outcome: o}
	}
	wantNil(t, "batch", completeBatch(t, s, items))
	st, err := s.Stats(t.Context(), "", "a")
	must(t, "Stats", err)
	eq(t, "applied", st.Counts[state.Applied], 299)
	eq(t, "failed", st.Counts[state.Failed], 1)
	eq(t, "running", st.Counts[state.Running], 0)
	eq(t, "changes", len(changes(t, s, seq)), 300)
	eq(t, "coverage", coverage(t, s, "", "a", state.Window{}), "[0h,150h) [151h,300h)")
	rows := map[string]string{}
	for _, u := range scan(t, s, "", "a") {
		rows[hw(u.Window)] = fmtPtr(u.RowsWritten)
	}
	for i, c := range cs {
		want := fmt.Sprint(i)
		if c.Unit.Window.Equal(win(150, 151)) {
			want = "nil"
		}
		if got := rows[hw(c.Unit.Window)]; got != want {
			t.Fatalf("unit %s RowsWritten %s, want %s", hw(c.Unit.Window), got, want)
		}
	}
}
