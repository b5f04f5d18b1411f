package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var attemptTests = []test{
	{"KeptAcrossRetriesAndFinalFailure", testAttemptsKept},
	{"LeaseExpiryIsAnAttempt", testAttemptsLeaseExpiry},
	{"BoundedToTheNewest", testAttemptsBounded},
	{"RemovedWithTheUnit", testAttemptsRemovedWithUnit},
	{"RependedKeepsTheLastError", testAttemptsRependedKeepsTheLastError},
}

// attemptBrief is an attempt as "#2 try 2 at 5m run 1: source down", times
// as minutes after clock(0).
func attemptBrief(a state.Attempt) string {
	return fmt.Sprintf("#%d try %d at %s run %d: %s", a.Number, a.Try, a.At.Sub(clock(0)), a.RunID, a.Error)
}

func attemptBriefs(t testing.TB, s state.Store, unitID int64) []string {
	t.Helper()
	as, err := s.Attempts(t.Context(), unitID)
	must(t, "Attempts", err)
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = attemptBrief(a)
	}
	return out
}

// claimFor claims the one pending unit of model for run runID at now.
func claimFor(t testing.TB, s state.Store, model string, runID int64, now time.Time) state.Claim {
	t.Helper()
	cs, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{model}, Worker: "w1", Lease: 10 * time.Minute, Limit: 1, RunID: runID, Now: now})
	must(t, "Claim", err)
	if len(cs) != 1 {
		t.Fatalf("claimed %d units of %s at %s, want 1", len(cs), model, now)
	}
	return cs[0]
}

// testAttemptsKept: a unit that fails, is sent back for a retry twice
// (through Complete and through CompleteBatch) and then fails for good keeps
// all three failures, oldest first, each with its lifetime number, its try
// within the budget, its error, its time and the run that claimed it. An
// applied, a blocked or an unrun outcome logs nothing, and a repeat of a
// failure already recorded logs it once.
func testAttemptsKept(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("m"), fixModel("other"))
	prefill(t, s, "", "m", hourly(0, 1), clock(0))
	prefill(t, s, "", "other", hourly(0, 1), clock(0))
	run := discoverRun(t, s)

	// Released unrun: not an attempt.
	c := claimFor(t, s, "m", run, clock(1))
	must(t, "release unrun", s.Complete(ctx, c, state.Outcome{Status: state.Pending, At: clock(1)}))
	id := c.Unit.ID
	eq(t, "history after a release unrun", attemptBriefs(t, s, id), []string{})

	c = claimFor(t, s, "m", run, clock(2))
	must(t, "retry 1", s.Complete(ctx, c, state.Outcome{Status: state.Pending, Error: "source down", At: clock(3), NotBefore: clock(5), Try: 1}))
	c = claimFor(t, s, "m", run, clock(5))
	errs, err := s.CompleteBatch(ctx, []state.Completion{{Claim: c, Outcome: state.Outcome{Status: state.Pending, Error: "source still down", At: clock(6), NotBefore: clock(10), Try: 2}}})
	must(t, "CompleteBatch", err)
	must(t, "retry 2", errs[0])
	c = claimFor(t, s, "m", run, clock(10))
	final := state.Outcome{Status: state.Failed, Error: "exit status 1:\nstill down", At: clock(11), Try: 3}
	must(t, "final failure", s.Complete(ctx, c, final))
	must(t, "the final failure repeated", s.Complete(ctx, c, final))

	want := []string{
		fmt.Sprintf("#1 try 1 at 3m0s run %d: source down", run),
		fmt.Sprintf("#2 try 2 at 6m0s run %d: source still down", run),
		fmt.Sprintf("#3 try 3 at 11m0s run %d: exit status 1:\nstill down", run),
	}
	eq(t, "history", attemptBriefs(t, s, id), want)
	u := unit(t, s, "", "m", win(0, 1))
	eq(t, "attempts of the unit", u.Attempts, 3)

	// Re-pended by an operator, then applied and blocked: no new failures.
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "m", From: []state.UnitStatus{state.Failed}, To: state.Pending, Now: clock(12)})
	must(t, "SetStatus", err)
	c = claimFor(t, s, "m", 0, clock(13))
	must(t, "blocked", s.Complete(ctx, c, state.Outcome{Status: state.Blocked, BlockedReason: "up (EXACT): missing", At: clock(13)}))
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "m", From: []state.UnitStatus{state.Blocked}, To: state.Pending, Now: clock(14)})
	must(t, "SetStatus", err)
	complete(t, s, claimFor(t, s, "m", 0, clock(15)), state.Applied, clock(15))
	eq(t, "history after a blocked and an applied attempt", attemptBriefs(t, s, id), want)
	eq(t, "attempts counted", unit(t, s, "", "m", win(0, 1)).Attempts, 5)

	// Another unit's history is its own; a worker's failure has no run.
	o := claimFor(t, s, "other", 0, clock(20))
	must(t, "worker failure", s.Complete(ctx, o, state.Outcome{Status: state.Failed, Error: "boom", At: clock(21)}))
	eq(t, "a worker's failure (Try 0 read as 1)", attemptBriefs(t, s, o.Unit.ID), []string{"#1 try 1 at 21m0s run 0: boom"})
	eq(t, "history of m unchanged", len(attemptBriefs(t, s, id)), 3)
	eq(t, "history of a unit that does not exist", attemptBriefs(t, s, id+o.Unit.ID+1000), []string{})
}

// testAttemptsLeaseExpiry: a claim whose lease expired is a failed attempt:
// numbered like the attempt the release counts, try 0 (it counted in no
// budget), its error naming the lease owner, at the release's now, with
// the claim's run.
func testAttemptsLeaseExpiry(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelM(t, s, 0, 2)
	run := discoverRun(t, s)
	a := claimFor(t, s, "m", run, clock(1)) // lease ends at clock(11)
	b := claimFor(t, s, "m", 0, clock(1))
	must(t, "Heartbeat", s.Heartbeat(ctx, b, clock(40)))
	n, err := s.ReleaseExpired(ctx, clock(12))
	must(t, "ReleaseExpired", err)
	eq(t, "released", n, 1)
	wantErr := state.LeaseExpiredError("w1")
	eq(t, "the expired claim's history", attemptBriefs(t, s, a.Unit.ID), []string{fmt.Sprintf("#1 try 0 at 12m0s run %d: %s", run, wantErr)})
	eq(t, "the live claim's history", attemptBriefs(t, s, b.Unit.ID), []string{})
	if wantErr != "the lease expired: w1 stopped renewing it before recording an outcome (killed, or cut off from the store)" {
		t.Errorf("LeaseExpiredError reads %q", wantErr)
	}

	// The worker that held b dies too; a worker's claim has no run.
	n, err = s.ReleaseExpired(ctx, clock(41))
	must(t, "ReleaseExpired", err)
	eq(t, "released", n, 1)
	eq(t, "the worker's expired claim", attemptBriefs(t, s, b.Unit.ID), []string{"#1 try 0 at 41m0s run 0: " + wantErr})
}

// testAttemptsBounded: a unit that keeps failing keeps its newest
// MaxAttemptHistory failures, counted in rows, not in attempt numbers: a
// blocked attempt between them leaves a gap in the numbers and the history
// still holds 20 failures. Retries, final failures and expired leases are
// all trimmed.
func testAttemptsBounded(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelM(t, s, 0, 1)
	var id int64
	now := 0
	fail := func(i int) {
		t.Helper()
		now++
		c := claimFor(t, s, "m", 0, clock(now))
		id = c.Unit.ID
		msg := fmt.Sprintf("failure %d", i)
		switch i % 3 {
		case 0: // a retry, through CompleteBatch
			errs, err := s.CompleteBatch(ctx, []state.Completion{{Claim: c, Outcome: state.Outcome{Status: state.Pending, Error: msg, At: clock(now), NotBefore: clock(now), Try: i}}})
			must(t, "CompleteBatch", err)
			must(t, "CompleteBatch item", errs[0])
		case 1: // a final failure, re-pended by an operator
			must(t, "Complete", s.Complete(ctx, c, state.Outcome{Status: state.Failed, Error: msg, At: clock(now), Try: i}))
			_, err := s.SetStatus(ctx, state.StatusChange{Model: "m", From: []state.UnitStatus{state.Failed}, To: state.Pending, Now: clock(now)})
			must(t, "SetStatus", err)
		default: // an expired lease
			now += 11
			_, err := s.ReleaseExpired(ctx, clock(now))
			must(t, "ReleaseExpired", err)
		}
	}
	for i := 1; i <= 10; i++ {
		fail(i)
	}
	now++
	c := claimFor(t, s, "m", 0, clock(now)) // attempt 11 is blocked
	must(t, "blocked", s.Complete(ctx, c, state.Outcome{Status: state.Blocked, BlockedReason: "up: missing", At: clock(now)}))
	_, err := s.SetStatus(ctx, state.StatusChange{Model: "m", From: []state.UnitStatus{state.Blocked}, To: state.Pending, Now: clock(now)})
	must(t, "SetStatus", err)
	for i := 11; i <= 24; i++ {
		fail(i)
	}
	as, err := s.Attempts(ctx, id)
	must(t, "Attempts", err)
	eq(t, "history length", len(as), state.MaxAttemptHistory)
	var numbers []int
	for _, a := range as {
		numbers = append(numbers, a.Number)
	}
	// 24 failures in attempts 1-10 and 12-25: the newest 20 are attempts
	// 5-10 (failures 5-10) and 12-25 (failures 11-24).
	eq(t, "numbers kept", numbers, []int{5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})
	if len(as) == state.MaxAttemptHistory {
		eq(t, "oldest kept (failure 5, an expired lease)", as[0].Error, state.LeaseExpiredError("w1"))
		eq(t, "next (failure 6, a retry)", as[1].Error, "failure 6")
		eq(t, "newest", as[len(as)-1].Error, "failure 24")
		eq(t, "newest try", as[len(as)-1].Try, 24)
		eq(t, "an expired lease's try", as[len(as)-2].Try, 0) // failure 23
	}
	eq(t, "unit attempts", unit(t, s, "", "m", win(0, 1)).Attempts, 25)
}

// testAttemptsRemovedWithUnit: deleting a unit (a torch) or uncovering it
// removes its history; a unit trimmed by an uncover keeps its own, and a
// unit prefilled again in the deleted window starts with none.
func testAttemptsRemovedWithUnit(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("m"), flexModel("f"))
	prefill(t, s, "", "m", hourly(0, 2), clock(0))
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(2, 4)}, clock(0))
	ids := map[string]int64{}
	for _, model := range []string{"m", "f"} {
		cs := claim(t, s, "", model, 2, clock(1))
		for _, c := range cs {
			must(t, "Complete", s.Complete(ctx, c, state.Outcome{Status: state.Failed, Error: "boom", At: clock(2), Try: 1}))
			ids[model+" "+hw(c.Unit.Window)] = c.Unit.ID
		}
	}
	for k, id := range ids {
		eq(t, k+" history before", len(attemptBriefs(t, s, id)), 1)
	}

	n, err := s.Delete(ctx, state.RemoveRequest{Model: "m", Window: win(0, 1), Now: clock(3)})
	must(t, "Delete", err)
	eq(t, "deleted", n, 1)
	eq(t, "history of the deleted unit", attemptBriefs(t, s, ids["m [0h,1h)"]), []string{})
	eq(t, "history of the unit left", len(attemptBriefs(t, s, ids["m [1h,2h)"])), 1)
	prefill(t, s, "", "m", hourly(0, 1), clock(4))
	again := unit(t, s, "", "m", win(0, 1))
	eq(t, "history of the unit prefilled again", attemptBriefs(t, s, again.ID), []string{})

	// Uncover [1h,4h): f [2h,4h) goes, f [0h,2h) is trimmed to [0h,1h).
	n, err = s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: win(1, 4), Now: clock(5)})
	must(t, "Uncover", err)
	eq(t, "uncovered", n, 2)
	eq(t, "history of the uncovered unit", attemptBriefs(t, s, ids["f [2h,4h)"]), []string{})
	eq(t, "history of the trimmed unit", len(attemptBriefs(t, s, ids["f [0h,2h)"])), 1)

	// Delete of the whole model.
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "m", Now: clock(6)})
	must(t, "Delete all", err)
	eq(t, "history after deleting every unit", attemptBriefs(t, s, ids["m [1h,2h)"]), []string{})
}

// testAttemptsRependedKeepsTheLastError: an operator marks a failed unit
// pending (SetStatus, as engine.Mark does): the unit's error is cleared,
// and its history still holds the failure with that error — once, not
// logged again by the mark. Marking a blocked unit pending, or the pending
// unit applied, adds nothing.
func testAttemptsRependedKeepsTheLastError(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelM(t, s, 0, 2)
	run := discoverRun(t, s)
	c := claimFor(t, s, "m", run, clock(1))
	id := c.Unit.ID
	must(t, "failure", s.Complete(ctx, c, state.Outcome{Status: state.Failed, Error: "exit status 1: GET /settlements: 503\nthe provider is down", At: clock(2), Try: 1}))
	c = claimFor(t, s, "m", run, clock(3))
	must(t, "blocked", s.Complete(ctx, c, state.Outcome{Status: state.Blocked, BlockedReason: "up (EXACT): missing", At: clock(3)}))

	n, err := s.SetStatus(ctx, state.StatusChange{Model: "m", From: []state.UnitStatus{state.Failed, state.Blocked}, To: state.Pending, Now: clock(4)})
	must(t, "SetStatus pending", err)
	eq(t, "units re-pended", n, 2)
	u := unit(t, s, "", "m", win(0, 1))
	eq(t, "the re-pended unit's status and error", string(u.Status)+" "+u.Error, "pending ")
	want := []string{fmt.Sprintf("#1 try 1 at 2m0s run %d: exit status 1: GET /settlements: 503\nthe provider is down", run)}
	eq(t, "history after the mark", attemptBriefs(t, s, id), want)
	eq(t, "history of the re-pended blocked unit", attemptBriefs(t, s, c.Unit.ID), []string{})

	_, err = s.SetStatus(ctx, state.StatusChange{Model: "m", From: []state.UnitStatus{state.Pending}, To: state.Applied, Now: clock(5)})
	must(t, "SetStatus applied", err)
	eq(t, "history after marking it applied", attemptBriefs(t, s, id), want)
}
