package sqlite

import (
	"testing"

	"github.com/bollhav/bollhav/state/storetest"
)

// SweepRegions must read what ScanUnits reads for each window, a
// statement's worth of regions at a time.
func TestSweepRegionsMatchesScanUnits(t *testing.T) {
	storetest.RegionsMatchScan(t, openTemp(t))
}
