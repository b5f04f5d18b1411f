package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// TestFollowAcrossProcesses: a UI following the feed of one Store sees, in
// order and promptly, what a worker commits through another Store on the
// same file — by data_version polling, since the poll interval given to the
// follower is an hour.
func TestFollowAcrossProcesses(t *testing.T) {
	ctx := t.Context()
	ui := openTemp(t)
	worker, err := Open(ctx, ui.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	if _, err := worker.Register(ctx, "", []state.ModelRecord{model("a", "fix")}, nil, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: hours(0, 3), Now: t0}); err != nil {
		t.Fatal(err)
	}

	feed := state.Follow(ctx, ui, 0, time.Hour)
	next := func(want string) state.Change {
		t.Helper()
		select {
		case c := <-feed:
			if got := string(c.From) + "->" + string(c.To); got != want {
				t.Fatalf("change %d is %s %s, want %s", c.Seq, c.Model, got, want)
			}
			return c
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s change within 5s", want)
		}
		return state.Change{}
	}
	first := next("->pending")
	if first.Count != 3 {
		t.Errorf("prefill change counts %d units, want 3", first.Count)
	}

	cs, err := worker.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w", Lease: time.Minute, Limit: 1, Now: t0})
	if err != nil || len(cs) != 1 {
		t.Fatalf("Claim: %v, %v", cs, err)
	}
	claimed := next("pending->running")
	if err := worker.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: t0}); err != nil {
		t.Fatal(err)
	}
	applied := next("running->applied")
	if !(first.Seq < claimed.Seq && claimed.Seq < applied.Seq) {
		t.Errorf("seqs %d, %d, %d are not increasing", first.Seq, claimed.Seq, applied.Seq)
	}
}

// TestFollowSurvivesClose: when the store under a follower closes, the
// follower keeps retrying (with backoff) instead of spinning or crashing,
// and ends with its context.
func TestFollowSurvivesClose(t *testing.T) {
	s, err := Open(t.Context(), t.TempDir()+"/state.db")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 100)
	feed := state.Follower{Store: s, Poll: 10 * time.Millisecond, OnError: func(err error) {
		select {
		case errs <- err:
		default:
		}
	}}.Follow(ctx)
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-errs:
		if err == nil {
			t.Error("OnError(nil) before any failure")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no error reported after the store closed")
	}
	cancel()
	select {
	case _, ok := <-feed:
		if ok {
			t.Error("a change from a closed store")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the feed did not close with its context")
	}
}
