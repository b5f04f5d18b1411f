package sqlite

import (
	"testing"

	"github.com/bollhav/bollhav/state/storetest"
)

// SweepUnits must return exactly what ScanUnits holds, model by model in
// window order, also when it reads the table as several rowid ranges and a
// model's rows are spread over them (prefilled in two batches, the second
// before the first in time).
func TestSweepUnitsMatchesScanUnits(t *testing.T) {
	// One row per read range: every model's rows are spread over many
	// ranges, which the read must stitch back together in window order.
	defer func(n int64) { sweepSplit = n }(sweepSplit)
	sweepSplit = 1
	storetest.SweepMatchesScan(t, openTemp(t), 100)
}

// SweepGate must equal state.ReduceSweep over SweepUnits for every need.
func TestSweepGateMatchesReduce(t *testing.T) {
	storetest.SweepGateMatchesReduce(t, openTemp(t))
}
