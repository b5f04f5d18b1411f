package engine

import (
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// TestReleasesCountsEachBlockedUnitOnce: in the why world (raw.orders 05
// and 07 failed, eight units blocked behind them), a run of one failed hour
// releases the six blocked units its impact counts; both hours release all
// eight, the units both reach counted once; a model with nothing
// downstream releases none; the plan of a run of raw.orders 05 says six.
func TestReleasesCountsEachBlockedUnitOnce(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		ctx := t.Context()
		for _, tc := range []struct {
			name string
			runs map[string][]state.Window
			want int
		}{
			// By hand: mart.daily day 0, mart.hourly 05, mart.flex 05,
			// report.running day 0 (THROUGH), report.snapshot (timeless),
			// report.hourly_rollup day 0.
			{"raw.orders 05", map[string][]state.Window{"raw.orders": {hours(5, 6)}}, 6},
			// 07 adds mart.hourly 07 and mart.flex 07; the rest are shared.
			{"raw.orders 05 and 07", map[string][]state.Window{"raw.orders": {hours(5, 6), hours(7, 8)}}, 8},
			{"mart.hourly 05", map[string][]state.Window{"mart.hourly": {hours(5, 6)}}, 1},
			{"mart.flex 05 (nothing downstream)", map[string][]state.Window{"mart.flex": {hours(5, 6)}}, 0},
			// An upper bound, by reach alone: hours 00–05 overlap day 0, so
			// they reach mart.daily day 0 and, through it, report.running
			// and report.snapshot, and report.hourly_rollup day 0 through
			// mart.hourly's hours 00–05 — but not mart.hourly 05 or
			// mart.flex 05, which start where the range ends.
			{"raw.orders 00–05", map[string][]state.Window{"raw.orders": {hours(0, 5)}}, 4},
			{"nothing", nil, 0},
		} {
			got, err := e.gates().Releases(ctx, tc.runs)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got != tc.want {
				t.Errorf("%s releases %d blocked units, want %d", tc.name, got, tc.want)
			}
		}
		w := hours(5, 6)
		p, err := e.Plan(ctx, RunRequest{Models: []string{"raw.orders"}, Window: &w})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := e.Releases(ctx, p); err != nil || n != 6 {
			t.Errorf("the plan of a run of raw.orders 05 releases %d (%v), want 6", n, err)
		}
	})
}
