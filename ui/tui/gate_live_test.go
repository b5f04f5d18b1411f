package tui

import (
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
)

// The clock flips verdicts by itself, and the feed's timer (armed for the
// index's NextChange, nothing polls) catches it: with no change in the
// store, mart.fresh's blocked hours go from ready (raw.orders applied
// 59m57s ago, within its 1h limit) to stale once the hour is up, and
// every subscriber hears that verdicts changed.
func TestLiveGateTimerFlipsVerdictsWhenFreshnessRunsOut(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	// The engine's clock stands 3s before the limit (raw.orders was
	// applied at rawClock) until the test moves it past, well before the
	// timer, armed for 3s of wall time, fires and finds the flip.
	var mu sync.Mutex
	clock := rawClock.Add(time.Hour - 3*time.Second)
	opts := w.opts
	opts.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	e := engine.New(w.s, w.e.Spec(), opts)
	feed, err := NewFeed(ctx, e, 20*time.Millisecond)
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
	waitVerdicts := func(what string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case <-deadline:
				t.Fatalf("no subscriber heard of %s in 20s", what)
			case <-sub.poke:
				sub.poke <- struct{}{} // next waits on it
				if msg := sub.next(ctx)().(feedMsg); msg.verdicts {
					return
				}
			}
		}
	}
	all := func(when string, want gate.Readiness) {
		t.Helper()
		got := fresh()
		if len(got) != 5 {
			t.Fatalf("mart.fresh has %d blocked hours, want 5", len(got))
		}
		for _, r := range got {
			if r != want {
				t.Fatalf("%s mart.fresh's hours are %v, want all %q", when, got, want)
			}
		}
	}
	// The first load builds the index.
	all("before the limit", gate.Ready)

	mu.Lock()
	clock = clock.Add(4 * time.Second)
	mu.Unlock()
	waitVerdicts("the flip")
	all("after the limit", gate.Stale)
}
