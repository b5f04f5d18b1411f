package state

import (
	"slices"
	"testing"
)

// ReduceSweep keeps of a model's applied rows what each need reads: every
// row for EXACT, touching rows merged only when their applied_at agree for
// a freshness limit, islands without applied_at for coverage, nothing for
// EXISTS; the units that are not applied stay, in order, when judged.
func TestReduceSweepKeepsWhatEachNeedReads(t *testing.T) {
	a := func(since, until, at int64) SweepUnit {
		return SweepUnit{Since: since, Until: until, AppliedAt: at, Status: CodeApplied}
	}
	p := SweepUnit{Since: 5, Until: 6, Status: CodePending}
	units := []SweepUnit{a(0, 1, 10), a(1, 2, 10), a(2, 3, 20), a(3, 5, 20), p, a(6, 9, 30), a(7, 8, 30), a(9, 10, 30)}
	for _, tc := range []struct {
		need        SweepNeed
		outstanding bool
		want        []SweepUnit
	}{
		{NeedNone, true, []SweepUnit{p}},
		{NeedNone, false, nil},
		{NeedCoverage, true, []SweepUnit{a(0, 5, 0), p, a(6, 10, 0)}},
		// a(7, 8) overlaps a(6, 9) but does not start at its end: apart.
		{NeedFreshness, false, []SweepUnit{a(0, 2, 10), a(2, 5, 20), a(6, 9, 30), a(7, 8, 30), a(9, 10, 30)}},
		{NeedRows, false, []SweepUnit{a(0, 1, 10), a(1, 2, 10), a(2, 3, 20), a(3, 5, 20), a(6, 9, 30), a(7, 8, 30), a(9, 10, 30)}},
	} {
		got := ReduceSweep(slices.Clone(units), tc.outstanding, tc.need)
		if !slices.Equal(got, tc.want) {
			t.Errorf("need %d, outstanding %v: %v, want %v", tc.need, tc.outstanding, got, tc.want)
		}
	}
	exist := SweepUnit{AppliedAt: 40, Status: CodeApplied}
	if got := ReduceSweep([]SweepUnit{exist}, false, NeedCoverage); !slices.Equal(got, []SweepUnit{exist}) {
		t.Errorf("an existence row reduced to %v; its applied_at is what WHOLE on a timeless model reads", got)
	}
}
