package ui

import (
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
)

// The clock flips verdicts by itself, and the feed's timer (armed for the
// index's NextChange, nothing polls) catches it: with no change in the
// store, mart.fresh's blocked hours go from ready (raw.orders applied
// 59m59.6s ago, within its 1h limit) to stale once the hour is up, and
// every subscriber hears that verdicts changed.
func TestLiveGateTimerFlipsVerdictsWhenFreshnessRunsOut(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	// The engine's clock stands 400ms before the limit (raw.orders was
	// applied at rawClock) until the test moves it past; the timer,
	// armed for 400ms of wall time, then finds the flip.
	var mu sync.Mutex
	clock := rawClock.Add(time.Hour - 400*time.Millisecond)
	e := *w.e
	e.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	feed, err := NewFeed(ctx, &e, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	sub, cancel := feed.subscribe()
	defer cancel()
	fresh := func() []gate.Readiness {
		t.Helper()
		units, err := feed.BlockedNow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []gate.Readiness
		for _, u := range units {
			if u.Model == "mart.fresh" {
				out = append(out, u.Readiness)
			}
		}
		return out
	}
	before := fresh()
	if len(before) != 5 {
		t.Fatalf("mart.fresh has %d blocked hours, want 5", len(before))
	}
	for _, r := range before {
		if r != gate.Ready {
			t.Fatalf("before the limit mart.fresh's hours are %v, want all ready", before)
		}
	}
	mu.Lock()
	clock = clock.Add(time.Second)
	mu.Unlock()
	deadline := time.After(10 * time.Second)
	for heard := false; !heard; {
		select {
		case <-deadline:
			t.Fatal("no subscriber heard of the flip in 10s")
		case <-sub.poke:
			sub.poke <- struct{}{} // next waits on it
			msg := sub.next(ctx)().(feedMsg)
			heard = msg.verdicts
		}
	}
	for _, r := range fresh() {
		if r != gate.Stale {
			t.Fatalf("after the limit mart.fresh's hours are %v, want all stale", fresh())
		}
	}
}
