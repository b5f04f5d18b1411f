package postgres

import (
	"testing"

	"github.com/bollhav/bollhav/state/storetest"
)

// SweepUnits must return exactly what ScanUnits holds, model by model in
// window order, also when prefills out of window order and updates have
// moved a model's rows around the heap.
func TestSweepUnitsMatchesScanUnits(t *testing.T) {
	s, _ := openTest(t, Options{})
	// 800 hours a model: enough rows that the updates move them around
	// the heap, so the read cannot lean on insertion order.
	storetest.SweepMatchesScan(t, s, 800)
}

// SweepGate must equal state.ReduceSweep over SweepUnits for every need.
func TestSweepGateMatchesReduce(t *testing.T) {
	s, _ := openTest(t, Options{})
	storetest.SweepGateMatchesReduce(t, s)
}
