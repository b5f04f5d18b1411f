package engine

import (
	"context"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// TestWorkStopGivesBackQueuedUnitsBehindALongOne: a worker stopped while its
// only slot runs a long unit gives back the units it claimed ahead at once,
// not when the long unit ends (a SIGKILL after a stop timeout would strand
// them for their leases).
func TestWorkStopGivesBackQueuedUnitsBehindALongOne(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, claimAheadSpec)
		_, err := e.Apply(t.Context())
		must(t, err)
		g, err := state.NewGrid(t0, state.MustInterval("15m"), time.UTC)
		must(t, err)
		_, err = s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.ticks", Windows: g.Windows(days(0, 2)), Now: e.now()})
		must(t, err)
		x := &gateExec{fast: 20, release: make(chan struct{}), blocked: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Work(ctx, x, WorkOptions{Workers: 1, Poll: 20 * time.Millisecond}) }()
		<-x.blocked
		time.Sleep(200 * time.Millisecond)
		cancel()
		time.Sleep(2 * time.Second)
		running := 0
		must(t, s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.ticks", Statuses: []state.UnitStatus{state.Running}},
			func(state.Unit) error { running++; return nil }))
		close(x.release)
		must(t, <-done)
		if running > 1 {
			t.Errorf("2 s after the stop, %d units are still running: only the long unit should be", running)
		}
	})
}
