package postgres

import (
	"testing"

	"github.com/bollhav/bollhav/state/storetest"
)

// SweepRegions must read what ScanUnits reads for each window, in one
// query however many regions there are.
func TestSweepRegionsMatchesScanUnits(t *testing.T) {
	s, _ := openTest(t, Options{})
	storetest.RegionsMatchScan(t, s)
}
