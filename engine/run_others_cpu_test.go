//go:build linux

package engine

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWaitingForOtherWorkersDoesNotSpin: a run whose units a dead worker
// still holds waits for their leases to expire without burning a core. On
// SQLite the store used to wake its own waiter after every write
// transaction — including the no-op lease release the waiter itself runs
// on each wake — so it spun at 70–100 % of a core for the two minutes of a
// lease. Over a five-second wait the process must use less than a tenth of
// that time.
func TestWaitingForOtherWorkersDoesNotSpin(t *testing.T) {
	if testing.Short() {
		t.Skip("a five-second wait per store")
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := repended(t, s, 1)
		if cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.orders"}, Worker: "dead", Lease: time.Minute, Limit: 1, Now: leaseClock()}); err != nil || len(cs) != 1 {
			t.Fatalf("claim = %v, %v", cs, err)
		}
		const wait = 5 * time.Second
		runCtx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		start, cpu0 := time.Now(), cpuTime(t)
		_, _ = e.Run(runCtx, RunRequest{Window: firstDay(), Mode: spec.Discover}, &fakeExec{}, nil)
		wall, cpu := time.Since(start), cpuTime(t)-cpu0
		t.Logf("waited %s, used %s of CPU", wall.Round(time.Millisecond), cpu.Round(time.Millisecond))
		if wall < wait-time.Second {
			t.Fatalf("the run ended after %s: it did not wait for the held unit", wall)
		}
		if cpu > wall/10 {
			t.Errorf("waiting for another worker's unit used %s of CPU in %s (over 10%%): it spins", cpu, wall)
		}
	})
}
