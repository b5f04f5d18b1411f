package state

import "context"

// RegionReader is a Store that reads the units of many windows of many
// models in one round trip: what a live gate index reads back after a
// batch of changes from the feed, where a query per changed window would
// cost more than judging what changed. Both backends implement it; a
// caller falls back to ScanUnits for a Store that does not.
type RegionReader interface {
	// SweepRegions calls fn once for each region, in order, with the units
	// of env's region.Model overlapping region.Window in window order
	// (none for a model that is not registered), as SweepUnits gives them.
	// Every Window must be non-zero: a whole model is ScanUnits' to read.
	SweepRegions(ctx context.Context, env string, regions []Region, fn func(i int, units []SweepUnit) error) error
}

// Region is one window of one model.
type Region struct {
	Model  string
	Window Window
}
