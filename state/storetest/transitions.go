package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var transitionTests = []test{
	{"ClaimThenComplete", testClaimThenComplete},
	{"CompleteRefusesRunning", testCompleteRefusesRunning},
	{"SetStatusWindowOnly", testSetStatusWindowOnly},
	{"SetStatusBreaksLease", testSetStatusBreaksLease},
	{"SetStatusNeedsFromStatuses", testSetStatusNeedsFromStatuses},
	{"SetStatusRewritesABlockedReason", testSetStatusRewritesABlockedReason},
	{"Delete", testDelete},
	{"UncoverTrims", testUncoverTrims},
	{"UncoverSplits", testUncoverSplits},
	{"UncoverEverything", testUncoverEverything},
	{"UncoverOntoAnotherUnitIsRefused", testUncoverOntoAnotherUnit},
	{"UncoverOverARunningUnitIsRefused", testUncoverRunning},
}

// testClaimThenComplete walks pending → running → applied / failed /
// blocked / pending and checks every field a unit row shows.
func testClaimThenComplete(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 4, clock(1))
	runID, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(1)})
	must(t, "CreateRun", err)

	next := func(now time.Time) state.Claim {
		t.Helper()
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w1", Lease: 5 * time.Minute, Limit: 1, RunID: runID, Now: now})
		must(t, "Claim", err)
		if len(cs) != 1 {
			t.Fatalf("Claim returned %d units, want 1", len(cs))
		}
		return cs[0]
	}

	c := next(clock(2))
	eq(t, "claimed", brief(c.Unit), "a [0h,1h) running")
	if c.Fence <= 0 || c.Unit.Fence != c.Fence {
		t.Errorf("claim fence = %d, unit fence = %d; want one positive fence", c.Fence, c.Unit.Fence)
	}
	u := unit(t, s, "", "a", win(0, 1))
	eq(t, "running status", u.Status, state.Running)
	eq(t, "running LeaseOwner", u.LeaseOwner, "w1")
	eqTimePtr(t, "running LeaseUntil", u.LeaseUntil, ptr(clock(7)))
	eq(t, "running RunID", u.RunID, runID)
	eq(t, "running Fence", u.Fence, c.Fence)
	eq(t, "running Attempts", u.Attempts, 0)
	eqTime(t, "running UpdatedAt", u.UpdatedAt, clock(2))

	must(t, "Complete applied", s.Complete(ctx, c, state.Outcome{Status: state.Applied, At: clock(3), RowsWritten: ptr(int64(42))}))
	u = unit(t, s, "", "a", win(0, 1))
	eq(t, "applied", brief(u), "a [0h,1h) applied")
	eqTimePtr(t, "AppliedAt", u.AppliedAt, ptr(clock(3)))
	eq(t, "RowsWritten", fmtPtr(u.RowsWritten), "42")
	eq(t, "LeaseOwner after Complete", u.LeaseOwner, "")
	eqTimePtr(t, "LeaseUntil after Complete", u.LeaseUntil, nil)
	eq(t, "Attempts after Complete", u.Attempts, 1)
	eqTime(t, "UpdatedAt after Complete", u.UpdatedAt, clock(3))

	c = next(clock(4))
	must(t, "Complete failed", s.Complete(ctx, c, state.Outcome{Status: state.Failed, At: clock(5), Error: "exit status 3: no such table"}))
	u = unit(t, s, "", "a", win(1, 2))
	eq(t, "failed", brief(u), "a [1h,2h) failed")
	eq(t, "Error", u.Error, "exit status 3: no such table")
	eqTimePtr(t, "failed AppliedAt", u.AppliedAt, nil)
	eq(t, "failed Attempts", u.Attempts, 1)

	c = next(clock(6))
	reason := "raw.orders (ENCAPSULATE): missing [2026-01-01T02:00:00Z, 2026-01-01T03:00:00Z)"
	must(t, "Complete blocked", s.Complete(ctx, c, state.Outcome{Status: state.Blocked, At: clock(7), BlockedReason: reason}))
	u = unit(t, s, "", "a", win(2, 3))
	eq(t, "blocked", brief(u), "a [2h,3h) blocked")
	eq(t, "BlockedReason", u.BlockedReason, reason)
	eq(t, "blocked Error", u.Error, "")

	c = next(clock(8))
	must(t, "Complete pending (released unrun)", s.Complete(ctx, c, state.Outcome{Status: state.Pending, At: clock(9)}))
	u = unit(t, s, "", "a", win(3, 4))
	eq(t, "released", brief(u), "a [3h,4h) pending")
	eq(t, "released Attempts", u.Attempts, 0)
	eq(t, "released LeaseOwner", u.LeaseOwner, "")
	eqTimePtr(t, "released LeaseUntil", u.LeaseUntil, nil)

	// Released units are claimable again, under a new fence.
	c2 := next(clock(10))
	eq(t, "reclaimed", brief(c2.Unit), "a [3h,4h) running")
	if c2.Fence <= c.Fence {
		t.Errorf("second claim of [3h,4h) has fence %d, want more than %d", c2.Fence, c.Fence)
	}
}

// testCompleteRefusesRunning: an outcome must be a final status or a
// release; "running" is not an outcome and changes nothing.
func testCompleteRefusesRunning(t *testing.T, s state.Store, _ *config) {
	modelA(t, s, 1, clock(1))
	cs := claimExactly(t, s, "", "a", 1, clock(2))
	if err := s.Complete(t.Context(), cs[0], state.Outcome{Status: state.Running, At: clock(3)}); err == nil {
		t.Errorf("Complete with status running succeeded, want an error")
	}
	u := unit(t, s, "", "a", win(0, 1))
	eq(t, "unit", brief(u), "a [0h,1h) running")
	eqTime(t, "UpdatedAt", u.UpdatedAt, clock(2))
}

// testSetStatusWindowOnly: bulldozer re-pends exactly the window's units,
// not a neighbour crossing its edge, and clears what the old status carried.
func testSetStatusWindowOnly(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 3, clock(1))
	eq(t, "marked", markApplied(t, s, "", "a", state.Window{}, clock(2)), 3)
	u := unit(t, s, "", "a", win(1, 2))
	eqTimePtr(t, "marked AppliedAt", u.AppliedAt, ptr(clock(2)))
	eqTime(t, "marked UpdatedAt", u.UpdatedAt, clock(2))

	set := func(w state.Window, from []state.UnitStatus, to state.UnitStatus, now time.Time) int {
		t.Helper()
		n, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: w, From: from, To: to, RunID: 7, Now: now})
		must(t, "SetStatus", err)
		return n
	}
	applied := []state.UnitStatus{state.Applied}
	eq(t, "re-pend [1h,2h)", set(win(1, 2), applied, state.Pending, clock(3)), 1)
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) applied", "a [1h,2h) pending", "a [2h,3h) applied"})
	u = unit(t, s, "", "a", win(1, 2))
	eqTimePtr(t, "re-pended AppliedAt", u.AppliedAt, nil)
	eq(t, "re-pended RunID", u.RunID, int64(7))
	eqTime(t, "re-pended UpdatedAt", u.UpdatedAt, clock(3))

	// [0h,1h) crosses the edge at 30m: not inside, left alone. [1h,2h) is
	// pending, not in From.
	eq(t, "re-pend [30m,3h)", set(winD(30*time.Minute, 3*time.Hour), applied, state.Pending, clock(4)), 1)
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) applied", "a [1h,2h) pending", "a [2h,3h) pending"})

	// Units already in the target status are not moved or counted.
	eq(t, "pending|applied → pending", set(state.Window{}, []state.UnitStatus{state.Pending, state.Applied}, state.Pending, clock(5)), 1)
	eqTime(t, "untouched unit keeps UpdatedAt", unit(t, s, "", "a", win(2, 3)).UpdatedAt, clock(4))

	// An operator mark without AppliedAt uses Now.
	eq(t, "mark [0h,1h) applied", set(win(0, 1), []state.UnitStatus{state.Pending}, state.Applied, clock(6)), 1)
	eqTimePtr(t, "AppliedAt defaults to Now", unit(t, s, "", "a", win(0, 1)).AppliedAt, ptr(clock(6)))

	// A failed unit re-pended loses its error but keeps its attempts.
	cs := claimExactly(t, s, "", "a", 1, clock(7)) // [1h,2h)
	must(t, "Complete failed", s.Complete(ctx, cs[0], state.Outcome{Status: state.Failed, At: clock(8), Error: "boom"}))
	eq(t, "re-pend failed", set(state.Window{}, []state.UnitStatus{state.Failed}, state.Pending, clock(9)), 1)
	u = unit(t, s, "", "a", win(1, 2))
	eq(t, "re-pended", brief(u), "a [1h,2h) pending")
	eq(t, "re-pended Error", u.Error, "")
	eq(t, "re-pended Attempts", u.Attempts, 1)

	// A blocked unit re-pended (re-evaluated on the next run) loses its
	// blocked_reason.
	cs = claimExactly(t, s, "", "a", 1, clock(10)) // [1h,2h)
	must(t, "Complete blocked", s.Complete(ctx, cs[0], state.Outcome{Status: state.Blocked, At: clock(11), BlockedReason: "up (WHOLE): not applied"}))
	eq(t, "blocked reason kept", unit(t, s, "", "a", win(1, 2)).BlockedReason, "up (WHOLE): not applied")
	eq(t, "re-pend blocked", set(state.Window{}, []state.UnitStatus{state.Blocked}, state.Pending, clock(12)), 1)
	u = unit(t, s, "", "a", win(1, 2))
	eq(t, "re-pended", brief(u), "a [1h,2h) pending")
	eq(t, "re-pended BlockedReason", u.BlockedReason, "")
}

// testSetStatusBreaksLease: an operator re-pending a running unit takes it
// away from its worker, whose late outcome is refused.
func testSetStatusBreaksLease(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(1))
	cs := claimExactly(t, s, "", "a", 1, clock(2))
	n, err := s.SetStatus(ctx, state.StatusChange{Model: "a", From: []state.UnitStatus{state.Running}, To: state.Pending, Now: clock(3)})
	must(t, "SetStatus", err)
	eq(t, "moved", n, 1)
	u := unit(t, s, "", "a", win(0, 1))
	eq(t, "LeaseOwner", u.LeaseOwner, "")
	eqTimePtr(t, "LeaseUntil", u.LeaseUntil, nil)
	wantLeaseLost(t, "Heartbeat after re-pend", s.Heartbeat(ctx, cs[0], clock(20)))
	wantLeaseLost(t, "Complete after re-pend", s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: clock(4)}))
	eq(t, "unit", brief(unit(t, s, "", "a", win(0, 1))), "a [0h,1h) pending")
}

// testDelete: torch on a fixed grid removes the units inside the window,
// whatever their status except running (refused, nothing changed: a worker
// holds it), and prefill then recreates them.
func testDelete(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 4, clock(1))
	markApplied(t, s, "", "a", win(0, 1), clock(2))
	cs := claim(t, s, "", "a", 1, clock(3)) // [1h,2h) running
	before := briefs(scan(t, s, "", "a"))
	if _, err := s.Delete(ctx, state.RemoveRequest{Model: "a", Window: winD(30*time.Minute, 3*time.Hour), Now: clock(4)}); !errors.Is(err, state.ErrUnitsRunning) {
		t.Fatalf("Delete over a running unit = %v, want ErrUnitsRunning", err)
	}
	eq(t, "units after the refused delete", briefs(scan(t, s, "", "a")), before)
	complete(t, s, cs[0], state.Pending, clock(4)) // the worker lets go
	n, err := s.Delete(ctx, state.RemoveRequest{Model: "a", Window: winD(30*time.Minute, 3*time.Hour), Now: clock(4)})
	must(t, "Delete", err)
	eq(t, "deleted inside [30m,3h)", n, 2)
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) applied", "a [3h,4h) pending"})
	wantLeaseLost(t, "Complete of a deleted unit", s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: clock(5)}))
	eq(t, "coverage after delete", coverage(t, s, "", "a", state.Window{}), "[0h,1h)")
	eq(t, "re-prefill", prefill(t, s, "", "a", hourly(0, 4), clock(6)), 2)

	n, err = s.Delete(ctx, state.RemoveRequest{Model: "a", Now: clock(7)})
	must(t, "Delete all", err)
	eq(t, "deleted all", n, 4)
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{})
	eq(t, "coverage after delete all", coverage(t, s, "", "a", state.Window{}), "")
}

// testUncoverTrims: uncovering [1h,5h) from units [0,2) [2,4) [4,6) deletes
// the middle one and trims the others to [0,1) and [5,6); re-covering the
// gap restores one island.
func testUncoverTrims(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(2, 4), win(4, 6)}, clock(1))
	markApplied(t, s, "", "f", state.Window{}, clock(2))
	eq(t, "coverage before", coverage(t, s, "", "f", state.Window{}), "[0h,6h)")

	n, err := s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: win(1, 5), Now: clock(3)})
	must(t, "Uncover", err)
	eq(t, "uncovered units", n, 3)
	eq(t, "units", briefs(scan(t, s, "", "f")), []string{"f [0h,1h) applied", "f [5h,6h) applied"})
	u := unit(t, s, "", "f", win(5, 6))
	eqTimePtr(t, "trimmed unit keeps AppliedAt", u.AppliedAt, ptr(clock(2)))
	eq(t, "coverage after uncover", coverage(t, s, "", "f", state.Window{}), "[0h,1h) [5h,6h)")
	rows, err := s.Applied(ctx, "", "f", win(1, 5))
	must(t, "Applied", err)
	eq(t, "applied rows touching the uncovered window", appliedBriefs(rows), []string{})

	set, err := s.Coverage(ctx, "", "f", win(0, 6))
	must(t, "Coverage", err)
	gaps := set.Gaps(win(0, 6))
	eq(t, "gaps", hws(gaps), "[1h,5h)")
	eq(t, "re-cover at a 2h grain", prefill(t, s, "", "f", []state.Window{win(1, 3), win(3, 5)}, clock(4)), 2)
	cs := claim(t, s, "", "f", 10, clock(5))
	eq(t, "claims", claimBriefs(cs), []string{"f [1h,3h) running", "f [3h,5h) running"})
	for _, c := range cs {
		complete(t, s, c, state.Applied, clock(6))
	}
	eq(t, "coverage after re-cover", coverage(t, s, "", "f", state.Window{}), "[0h,6h)")
	rows, err = s.Applied(ctx, "", "f", state.Window{})
	must(t, "Applied", err)
	eq(t, "applied rows", appliedBriefs(rows), []string{"[0h,1h)@2", "[1h,3h)@6", "[3h,5h)@6", "[5h,6h)@2"})
}

// testUncoverSplits: uncovering [3h,4h) from one unit [0h,10h) leaves two,
// [0h,3h) and [4h,10h), both still applied.
func testUncoverSplits(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 10)}, clock(1))
	markApplied(t, s, "", "f", state.Window{}, clock(2))

	n, err := s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: win(3, 4), Now: clock(3)})
	must(t, "Uncover", err)
	eq(t, "uncovered units", n, 1)
	us := scan(t, s, "", "f")
	eq(t, "units", briefs(us), []string{"f [0h,3h) applied", "f [4h,10h) applied"})
	if len(us) == 2 {
		if us[0].ID == us[1].ID {
			t.Errorf("both halves have id %d", us[0].ID)
		}
		for _, u := range us {
			eqTimePtr(t, hw(u.Window)+" AppliedAt", u.AppliedAt, ptr(clock(2)))
		}
	}
	eq(t, "coverage after split", coverage(t, s, "", "f", state.Window{}), "[0h,3h) [4h,10h)")

	eq(t, "re-cover the hole", prefill(t, s, "", "f", []state.Window{win(3, 4)}, clock(4)), 1)
	markApplied(t, s, "", "f", win(3, 4), clock(5))
	eq(t, "coverage after re-cover", coverage(t, s, "", "f", state.Window{}), "[0h,10h)")
	eq(t, "coverage of [2h,5h)", coverage(t, s, "", "f", win(2, 5)), "[2h,5h)")
}

// testUncoverEverything: pending units inside the window go too, a window
// that only touches a unit leaves it alone, and the zero window uncovers all.
func testUncoverEverything(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(2, 4), win(4, 6)}, clock(1))
	markApplied(t, s, "", "f", win(0, 4), clock(2))

	n, err := s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: win(6, 8), Now: clock(3)})
	must(t, "Uncover touching", err)
	eq(t, "uncovered by a touching window", n, 0)
	n, err = s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: win(3, 5), Now: clock(4)})
	must(t, "Uncover [3h,5h)", err)
	eq(t, "uncovered", n, 2)
	eq(t, "units", briefs(scan(t, s, "", "f")), []string{"f [0h,2h) applied", "f [2h,3h) applied", "f [5h,6h) pending"})
	n, err = s.Uncover(ctx, state.RemoveRequest{Model: "f", Now: clock(5)})
	must(t, "Uncover all", err)
	eq(t, "uncovered all", n, 3)
	eq(t, "units", briefs(scan(t, s, "", "f")), []string{})
	eq(t, "coverage", coverage(t, s, "", "f", state.Window{}), "")
}

// testUncoverOntoAnotherUnit: overlapping flexible units [1,2) applied and
// [1,3) pending; uncovering [2,3) would trim [1,3) onto [1,2). Found by the
// state-machine test: the store refuses and changes nothing (SQLite used to
// replace the applied unit silently, leaving coverage and the feed wrong).
func testUncoverOntoAnotherUnit(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(1, 2), win(1, 3)}, clock(0))
	markApplied(t, s, "", "f", win(1, 2), clock(1))
	before := briefs(scan(t, s, "", "f"))
	seq := lastSeq(t, s)
	if _, err := s.Uncover(t.Context(), state.RemoveRequest{Model: "f", Window: win(2, 3), Now: clock(2)}); err == nil {
		t.Fatal("Uncover trimmed a unit onto another unit's window")
	}
	eq(t, "units", briefs(scan(t, s, "", "f")), before)
	eq(t, "coverage", coverage(t, s, "", "f", state.Window{}), "[1h,2h)")
	eq(t, "changes", len(changes(t, s, seq)), 0)
}

// testUncoverRunning: cutting a running unit is refused and changes
// nothing; once its worker lets go, the same uncover goes through.
func testUncoverRunning(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 4)}, clock(0))
	cs := claim(t, s, "", "f", 1, clock(1))
	before := briefs(scan(t, s, "", "f"))
	if _, err := s.Uncover(t.Context(), state.RemoveRequest{Model: "f", Window: win(2, 3), Now: clock(2)}); !errors.Is(err, state.ErrUnitsRunning) {
		t.Fatalf("Uncover over a running unit = %v, want ErrUnitsRunning", err)
	}
	eq(t, "units", briefs(scan(t, s, "", "f")), before)
	complete(t, s, cs[0], state.Pending, clock(3))
	n, err := s.Uncover(t.Context(), state.RemoveRequest{Model: "f", Window: win(2, 3), Now: clock(4)})
	must(t, "Uncover once released", err)
	eq(t, "split", n, 1)
	eq(t, "units", briefs(scan(t, s, "", "f")), []string{"f [0h,2h) pending", "f [3h,4h) pending"})
}

// testSetStatusNeedsFromStatuses: a change naming no status to move from is
// refused and moves nothing — not read as "every status", which would
// re-pend applied history — and so is an unknown from-status.
func testSetStatusNeedsFromStatuses(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 2, clock(1))
	markApplied(t, s, "", "a", win(0, 1), clock(2))
	for _, from := range [][]state.UnitStatus{nil, {"done"}} {
		if n, err := s.SetStatus(ctx, state.StatusChange{Model: "a", From: from, To: state.Pending, Now: clock(3)}); err == nil {
			t.Errorf("SetStatus from %v moved %d units, want a refusal", from, n)
		}
	}
	eq(t, "unit", brief(unit(t, s, "", "a", win(0, 1))), "a [0h,1h) applied")
	eq(t, "unit", brief(unit(t, s, "", "a", win(1, 2))), "a [1h,2h) pending")
}

// testSetStatusRewritesABlockedReason: a blocked unit whose reason no longer
// holds gets the true one (blocked to blocked, with Reason): the units in
// the window move, the others keep theirs, the kept counts do not change,
// and a reason on any other move is refused, changing nothing.
func testSetStatusRewritesABlockedReason(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"))
	prefill(t, s, "", "a", hourly(0, 3), clock(0))
	for _, c := range claim(t, s, "", "a", 3, clock(1)) {
		must(t, "Complete", s.Complete(ctx, c, state.Outcome{Status: state.Blocked, BlockedReason: "up (EXACT): missing", At: clock(2)}))
	}
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "a", From: []state.UnitStatus{state.Blocked}, To: state.Pending, Reason: "x", Now: clock(3)}); err == nil {
		t.Fatal("a reason on a move to pending was accepted")
	}
	before, err := s.StatusCounts(ctx, "")
	must(t, "StatusCounts", err)
	released := "released: its upstreams caught up in run 7, so the next run applies it"
	n, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: win(1, 3), From: []state.UnitStatus{state.Blocked}, To: state.Blocked,
		Reason: released, RunID: 7, Now: clock(4)})
	must(t, "SetStatus", err)
	if n != 2 {
		t.Fatalf("rewrote %d units' reason, want the window's 2", n)
	}
	for i, want := range []string{"up (EXACT): missing", released, released} {
		if u := unit(t, s, "", "a", win(i, i+1)); u.Status != state.Blocked || u.BlockedReason != want {
			t.Errorf("unit %d: %s %q, want blocked %q", i, u.Status, u.BlockedReason, want)
		}
	}
	after, err := s.StatusCounts(ctx, "")
	must(t, "StatusCounts", err)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("kept counts moved on a reason rewrite: %v -> %v", before, after)
	}
}
