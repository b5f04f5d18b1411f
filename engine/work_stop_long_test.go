package engine

import (
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
		e := workerWorld(t, s)
		x, cancel, done := startGatedWorker(t, e)
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
