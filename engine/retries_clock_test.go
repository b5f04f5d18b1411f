package engine

import (
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// retryClockWorld is raw.orders, daily, with three tries 1m apart (up to
// 10m), registered, on a lease clock the test moves by hand from
// 2026-01-05T12:00Z.
func retryClockWorld(t *testing.T, s state.Store) (*Engine, *fakeClock) {
	t.Helper()
	e := runEngine(t, s, `models:
  - name: raw.orders
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    retry: {attempts: 3, delay: 1m, max_delay: 10m}
    run: {command: ["true"]}
`)
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)}
	e.opts.LeaseClock = clock.Now
	return e, clock
}

// fakeClock is a lease clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// TestRetryBackoffFollowsTheEnginesClock: the backoff is judged on the
// engine's lease clock, not by sleeping. With delay 1m and max_delay 10m,
// the first retry waits between 30 s and 1 m, the second between 1 m and
// 2 m (doubled, jittered into the upper half); the unit is not tried again
// while the clock stands before its time, and is once the clock passes it.
func TestRetryBackoffFollowsTheEnginesClock(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, clock := retryClockWorld(t, s)
		exec := &flakyExec{fails: 2}
		done := make(chan *RunResult, 1)
		go func() {
			res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		for try, bounds := range [][2]time.Duration{{30 * time.Second, time.Minute}, {time.Minute, 2 * time.Minute}} {
			var waiting state.Unit
			deadline := time.Now().Add(20 * time.Second)
			for {
				waiting = unit(t, s, "raw.orders", days(0, 1))
				if waiting.Status == state.Pending && waiting.NotBefore != nil && waiting.Attempts == try+1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("try %d: the unit never went back to pending with a retry time: %+v", try+1, waiting)
				}
				time.Sleep(10 * time.Millisecond)
			}
			wait := waiting.NotBefore.Sub(clock.Now())
			if wait < bounds[0] || wait > bounds[1] {
				t.Errorf("after failure %d the unit waits %s, want between %s and %s", try+1, wait, bounds[0], bounds[1])
			}
			// The loop looks again at least once a second: give it two, and
			// it must not have run the unit before its time.
			time.Sleep(2 * time.Second)
			exec.mu.Lock()
			ran := len(exec.at)
			exec.mu.Unlock()
			if ran != try+1 {
				t.Fatalf("try %d: %d executions while the clock stood before the retry time", try+1, ran)
			}
			clock.set(*waiting.NotBefore)
		}
		select {
		case res := <-done:
			if res == nil || taskStatus(res, "raw.orders") != "SUCCESS" {
				t.Fatalf("run %+v, want raw.orders SUCCESS on its third try", res)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the run did not end after the clock passed the last retry time")
		}
		if u := unit(t, s, "raw.orders", days(0, 1)); u.Status != state.Applied || u.Attempts != 3 {
			t.Errorf("unit %s after %d attempts, want applied after 3", u.Status, u.Attempts)
		}
	})
}
