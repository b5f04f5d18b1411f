package storetest

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// testRetryOutcome: a failed attempt sent back for another try (pending,
// with its error and a not-before time) counts the attempt, keeps the
// error, and is claimed by nobody before its time — through Complete and
// through CompleteBatch alike. A claim at the time takes it and clears the
// wait.
func testRetryOutcome(t *testing.T, s state.Store, _ *config) {
	modelM(t, s, 0, 2)
	cs := claimExactly(t, s, "", "m", 2, clock(1))
	wait := clock(30)
	retry := state.Outcome{Status: state.Pending, Error: "exit status 1: source down", At: clock(2), NotBefore: wait}
	must(t, "Complete", s.Complete(t.Context(), cs[0], retry))
	errs, err := s.CompleteBatch(t.Context(), []state.Completion{{Claim: cs[1], Outcome: retry}})
	must(t, "CompleteBatch", err)
	must(t, "CompleteBatch item", errs[0])
	for _, c := range cs {
		u := unit(t, s, "", "m", c.Unit.Window)
		if u.Status != state.Pending || u.Attempts != 1 || u.Error != retry.Error || u.NotBefore == nil || !u.NotBefore.Equal(wait) {
			t.Errorf("unit %s after a retry outcome: %s, attempts %d, error %q, not before %v; want pending, 1, the error, %v",
				c.Unit.Window, u.Status, u.Attempts, u.Error, u.NotBefore, wait)
		}
	}
	if got := claim(t, s, "", "m", 2, wait.Add(-time.Second)); len(got) != 0 {
		t.Fatalf("claimed %d units a second before their retry time", len(got))
	}
	// Without a model filter too (the other claim path).
	if got, err := s.Claim(t.Context(), state.ClaimRequest{Worker: "w2", Lease: time.Minute, Limit: 5, Now: wait.Add(-time.Second)}); err != nil || len(got) != 0 {
		t.Fatalf("claim of any model before the retry time = %d units, %v", len(got), err)
	}
	got := claim(t, s, "", "m", 1, wait)
	if len(got) != 1 || got[0].Unit.NotBefore != nil {
		t.Fatalf("claim at the retry time = %+v; want one unit, its wait cleared", got)
	}
	// Running again, the unit no longer shows the last try's error (the
	// attempt history keeps it), on the claim and in the store alike.
	if got[0].Unit.Error != "" {
		t.Errorf("the claimed unit still carries the error %q", got[0].Unit.Error)
	}
	if u := unit(t, s, "", "m", got[0].Unit.Window); u.Status != state.Running || u.Error != "" {
		t.Errorf("the running unit: %s, error %q; want running with no error", u.Status, u.Error)
	}
}

// testWaitOutcome: a unit released unrun to wait for upstream work under way
// (pending, no error, a not-before time and the reason it waits) counts no
// attempt, keeps its reason for the surfaces to show, and is claimed by
// nobody before its time — through Complete and CompleteBatch alike. A claim
// at the time takes it and clears both.
func testWaitOutcome(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("m"))
	prefill(t, s, "", "m", hourly(0, 2), clock(0))
	cs := claim(t, s, "", "m", 2, clock(1))
	if len(cs) != 2 {
		t.Fatalf("claimed %d units, want 2", len(cs))
	}
	wait := clock(30)
	out := state.Outcome{Status: state.Pending, BlockedReason: "up (EXACT): waiting on 1 running unit", At: clock(2), NotBefore: wait}
	if !out.IsWait() || out.Retry() {
		t.Fatalf("the outcome reads as wait %v, retry %v; want a wait and no retry", out.IsWait(), out.Retry())
	}
	must(t, "Complete", s.Complete(t.Context(), cs[0], out))
	errs, err := s.CompleteBatch(t.Context(), []state.Completion{{Claim: cs[1], Outcome: out}})
	must(t, "CompleteBatch", err)
	must(t, "CompleteBatch item", errs[0])
	for _, c := range cs {
		u := unit(t, s, "", "m", c.Unit.Window)
		if u.Status != state.Pending || u.Attempts != 0 || u.Error != "" || u.BlockedReason != out.BlockedReason ||
			u.NotBefore == nil || !u.NotBefore.Equal(wait) {
			t.Errorf("unit %s after a wait: %s, attempts %d, error %q, reason %q, not before %v; want pending, 0, no error, %q, %v",
				c.Unit.Window, u.Status, u.Attempts, u.Error, u.BlockedReason, u.NotBefore, out.BlockedReason, wait)
		}
	}
	if got := claim(t, s, "", "m", 2, wait.Add(-time.Second)); len(got) != 0 {
		t.Fatalf("claimed %d waiting units a second before their time", len(got))
	}
	got := claim(t, s, "", "m", 2, wait)
	if len(got) != 2 {
		t.Fatalf("claim at the wait's end took %d units, want 2", len(got))
	}
	for _, c := range got {
		if u := unit(t, s, "", "m", c.Unit.Window); u.Status != state.Running || u.BlockedReason != "" || u.NotBefore != nil {
			t.Errorf("the claimed unit %s: %s, reason %q, not before %v; want running with neither", c.Unit.Window, u.Status, u.BlockedReason, u.NotBefore)
		}
	}
}
