package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var feedTests = []test{
	{"ChangesInOrder", testChangesInOrder},
	{"LatestSeq", testLatestSeq},
	{"ChangesOfBulkOperations", testChangesOfBulkOperations},
	{"WakeOnLocalCommit", testWakeOnLocalCommit},
	{"WakeOnOtherStoreCommit", testWakeOnOtherStoreCommit},
	{"WakeClosesWithContext", testWakeClosesWithContext},
}

// testChangesInOrder: every transition is in the feed, in the order it
// happened, and a reader resuming from a seq gets exactly the rest.
func testChangesInOrder(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"))
	eq(t, "changes after registering", changeBriefs(changes(t, s, 0)), []string{})

	prefill(t, s, "", "a", hourly(0, 3), clock(1))
	cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w", Lease: time.Minute, Limit: 1, RunID: 7, Now: clock(2)})
	must(t, "Claim", err)
	if len(cs) != 1 {
		t.Fatalf("claimed %v", claimBriefs(cs))
	}
	complete(t, s, cs[0], state.Applied, clock(3))
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "a", Window: win(1, 3), From: []state.UnitStatus{state.Pending}, To: state.Blocked, RunID: 8, Now: clock(4)})
	must(t, "SetStatus", err)
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "a", Window: win(2, 3), RunID: 9, Now: clock(5)})
	must(t, "Delete", err)

	all := changes(t, s, 0)
	eq(t, "changes", changeBriefs(all), []string{
		"a [0h,3h) ->pending x3 run=0",
		"a [0h,1h) pending->running x1 run=7",
		"a [0h,1h) running->applied x1 run=7",
		"a [1h,3h) pending->blocked x2 run=8",
		"a [2h,3h) blocked-> x1 run=9",
	})
	if len(all) != 5 {
		t.FailNow()
	}
	for i, want := range []time.Time{clock(1), clock(2), clock(3), clock(4), clock(5)} {
		eqTime(t, "change At", all[i].At, want)
		if i > 0 && all[i].Seq <= all[i-1].Seq {
			t.Errorf("seq %d follows %d", all[i].Seq, all[i-1].Seq)
		}
	}
	rest, err := s.Changes(ctx, all[1].Seq, 2)
	must(t, "Changes after the claim, limit 2", err)
	eq(t, "resumed changes", changeBriefs(rest), changeBriefs(all[2:4]))
	eq(t, "nothing after the last", changeBriefs(changes(t, s, all[4].Seq)), []string{})
}

// testLatestSeq: LatestSeq is 0 on an empty feed and then the seq of the
// newest change, which a follower starting there does not see again.
func testLatestSeq(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	latest, err := s.LatestSeq(ctx)
	must(t, "LatestSeq of an empty feed", err)
	if latest != 0 {
		t.Errorf("LatestSeq of an empty feed: %d, want 0", latest)
	}
	modelA(t, s, 3, clock(1))
	cs := claimExactly(t, s, "", "a", 2, clock(2))
	all := changes(t, s, 0)
	latest, err = s.LatestSeq(ctx)
	must(t, "LatestSeq", err)
	if len(all) == 0 || latest != all[len(all)-1].Seq {
		t.Fatalf("LatestSeq: %d, want the last of %d changes", latest, len(all))
	}
	complete(t, s, cs[0], state.Applied, clock(3))
	eq(t, "changes after LatestSeq", changeBriefs(changes(t, s, latest)), []string{"a [0h,1h) running->applied x1 run=0"})
}

// testChangesOfBulkOperations: a bulk operation is a handful of rows, one
// per model and previous status, never one per unit — and a prefill that
// created nothing is no change at all.
func testChangesOfBulkOperations(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"), fixModel("b"))
	prefill(t, s, "", "a", hourly(0, 4), clock(1))
	seq := lastSeq(t, s)
	prefill(t, s, "", "a", hourly(0, 4), clock(2))
	prefill(t, s, "", "a", hourly(2, 6), clock(2))
	eq(t, "overlapping prefill: the hull of what it created", changeBriefs(changes(t, s, seq)), []string{"a [4h,6h) ->pending x2 run=0"})

	markApplied(t, s, "", "a", win(0, 2), clock(3))
	cs := claimExactly(t, s, "", "a", 1, clock(4)) // [2h,3h)
	must(t, "Complete", s.Complete(ctx, cs[0], state.Outcome{Status: state.Failed, At: clock(5), Error: "x"}))
	seq = lastSeq(t, s)
	n, err := s.Delete(ctx, state.RemoveRequest{Model: "a", RunID: 3, Now: clock(6)})
	must(t, "Delete", err)
	eq(t, "deleted", n, 6)
	eq(t, "delete: one row per previous status", sortedChangeBriefs(changes(t, s, seq)), []string{
		"a [0h,2h) applied-> x2 run=3",
		"a [2h,3h) failed-> x1 run=3",
		"a [3h,6h) pending-> x3 run=3",
	})

	prefill(t, s, "", "a", hourly(0, 3), clock(7))
	prefill(t, s, "", "b", hourly(0, 2), clock(7))
	claim(t, s, "", "", 10, clock(8)) // five units, leases to clock(18)
	seq = lastSeq(t, s)
	n, err = s.ReleaseExpired(ctx, clock(20))
	must(t, "ReleaseExpired", err)
	eq(t, "released", n, 5)
	eq(t, "release: one row per model", sortedChangeBriefs(changes(t, s, seq)), []string{
		"a [0h,3h) running->pending x3 run=0",
		"b [0h,2h) running->pending x2 run=0",
	})

	seq = lastSeq(t, s)
	n, err = s.SetStatus(ctx, state.StatusChange{Model: "a", From: []state.UnitStatus{state.Failed}, To: state.Pending, Now: clock(21)})
	must(t, "SetStatus", err)
	eq(t, "nothing to move", n, 0)
	n, err = s.Uncover(ctx, state.RemoveRequest{Model: "b", Window: win(5, 6), Now: clock(22)})
	must(t, "Uncover", err)
	eq(t, "nothing to uncover", n, 0)
	eq(t, "no-ops record nothing", changeBriefs(changes(t, s, seq)), []string{})

	_, err = s.Uncover(ctx, state.RemoveRequest{Env: "pr0", Model: "b", Window: win(1, 2), RunID: 4, Now: clock(23)})
	wantNotFound(t, "Uncover in an environment without b", err)
	n, err = s.Uncover(ctx, state.RemoveRequest{Model: "b", Window: winD(30*time.Minute, 3*time.Hour), RunID: 4, Now: clock(23)})
	must(t, "Uncover", err)
	eq(t, "uncovered", n, 2)
	eq(t, "uncover: the removed part", changeBriefs(changes(t, s, seq)), []string{"b [30m,2h) pending-> x2 run=4"})
}

// WaitWake waits for a signal on ch, a store's wake channel, failing the
// test after a while; the backends' own wake tests share it.
func WaitWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the wake channel closed", what)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no wake-up within 5s", what)
	}
}

// drain empties a wake channel of signals for commits made before now.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

// testWakeOnLocalCommit: the UI of the process that runs the engine hears
// its own writes.
func testWakeOnLocalCommit(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("a"))
	ch, err := s.Wake(t.Context())
	must(t, "Wake", err)
	drain(ch)
	prefill(t, s, "", "a", hourly(0, 1), clock(1))
	WaitWake(t, ch, "after a local prefill")
	drain(ch)
	claim(t, s, "", "a", 1, clock(2))
	WaitWake(t, ch, "after a local claim")
}

// testWakeOnOtherStoreCommit: a UI hears what a worker in another process
// commits.
func testWakeOnOtherStoreCommit(t *testing.T, s state.Store, c *config) {
	if c.reopen == nil {
		t.Skip("the backend gave no reopen hook")
	}
	register(t, s, "", fixModel("a"))
	other := c.reopen(t, s)
	ch, err := s.Wake(t.Context())
	must(t, "Wake", err)
	drain(ch)
	prefill(t, other, "", "a", hourly(0, 1), clock(1))
	WaitWake(t, ch, "after another store's prefill")
	eq(t, "the change is readable", changeBriefs(changes(t, s, 0)), []string{"a [0h,1h) ->pending x1 run=0"})
	drain(ch)
	claim(t, other, "", "a", 1, clock(2))
	WaitWake(t, ch, "after another store's claim")
}

// testWakeClosesWithContext: a subscriber that goes away releases its
// channel, so an SSH session ending leaks nothing.
func testWakeClosesWithContext(t *testing.T, s state.Store, _ *config) {
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := s.Wake(ctx)
	must(t, "Wake", err)
	cancel()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the wake channel did not close within 5s of its context ending")
		}
	}
}
