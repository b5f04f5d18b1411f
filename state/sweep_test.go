package state

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// SortSweepUnits must order any input like a plain sort by (since, until):
// a store's rows come as a few sorted runs, but nothing guarantees it.
func TestSortSweepUnitsMatchesASort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var us []SweepUnit
		for range rapid.IntRange(0, 8).Draw(t, "runs") {
			// A run: ascending windows, like one batch of rows.
			since := rapid.Int64Range(0, 1000).Draw(t, "start")
			for range rapid.IntRange(0, 20).Draw(t, "len") {
				since += rapid.Int64Range(0, 5).Draw(t, "step")
				us = append(us, SweepUnit{Since: since, Until: since + rapid.Int64Range(1, 5).Draw(t, "width"),
					AppliedAt: int64(len(us)), Status: StatusCode(rapid.IntRange(1, 5).Draw(t, "status"))})
			}
		}
		want := slices.Clone(us)
		slices.SortStableFunc(want, func(a, b SweepUnit) int {
			switch {
			case sweepLess(a, b):
				return -1
			case sweepLess(b, a):
				return 1
			}
			return 0
		})
		got := slices.Clone(us)
		SortSweepUnits(got)
		for i := range want {
			// Ties (equal windows) may come in either order; the window
			// sequence may not.
			if got[i].Since != want[i].Since || got[i].Until != want[i].Until {
				t.Fatalf("position %d: got %+v, want %+v\ninput %+v", i, got[i], want[i], us)
			}
		}
		slices.SortFunc(got, func(a, b SweepUnit) int { return int(a.AppliedAt - b.AppliedAt) })
		if !slices.Equal(got, us) {
			t.Fatalf("the sort lost or changed rows")
		}
	})
}

func TestStatusCodesRoundTrip(t *testing.T) {
	for _, st := range Statuses {
		c := CodeOf(st)
		if c == 0 || c.Status() != st || CodeOf([]byte(st)) != c {
			t.Errorf("%s: code %d reads back as %q", st, c, c.Status())
		}
	}
	if CodeOf("done") != 0 || StatusCode(0).Status() != "" || StatusCode(200).Status() != "" {
		t.Error("an unknown status has a code")
	}
}
