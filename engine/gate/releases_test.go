package gate_test

import (
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// TestReleasesCountsWhatARunSupplies: in the why world (raw.orders 05 and
// 07 failed, eight units blocked behind them), a held unit counts as
// released when the run loads every root it has (as incidents and why
// trace them) — each unit once, however many windows reach it.
func TestReleasesCountsWhatARunSupplies(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		ctx := t.Context()
		for _, tc := range []struct {
			name string
			runs map[string][]state.Window
			want int
		}{
			// mart.hourly 05 and mart.flex 05 miss raw.orders 05 alone;
			// mart.daily's day 0 misses 05 and 07, so one hour is not
			// enough for it.
			{"raw.orders 05", map[string][]state.Window{"raw.orders": {hours(5, 6)}}, 2},
			// Both hours: mart.daily day 0, mart.hourly 05 and 07,
			// mart.flex 05 and 07, and the reports whose every root is one
			// of the two hours: report.running day 0 (through mart.daily)
			// and report.hourly_rollup (through mart.hourly): 7. They run,
			// in order, once the hours are fixed. report.snapshot is WHOLE
			// over mart.daily's two days: it also waits on day 1, which no
			// one loads.
			{"raw.orders 05 and 07", map[string][]state.Window{"raw.orders": {hours(5, 6), hours(7, 8)}}, 7},
			// With the marts' windows too (a run with downstream), the same
			// 7: the marts' windows are no root.
			{"raw.orders and the marts", map[string][]state.Window{
				"raw.orders":  {hours(5, 6), hours(7, 8)},
				"mart.daily":  {days(0, 1)},
				"mart.hourly": {hours(5, 6), hours(7, 8)},
				"mart.flex":   {hours(5, 6), hours(7, 8)},
			}, 7},
			// report.hourly_rollup's day misses mart.hourly 05 and 07.
			{"mart.hourly 05", map[string][]state.Window{"mart.hourly": {hours(5, 6)}}, 0},
			// Hours nobody waits on release nothing, though every
			// report is downstream of them.
			{"raw.orders 00–05", map[string][]state.Window{"raw.orders": {hours(0, 5)}}, 0},
			{"nothing", nil, 0},
		} {
			got, err := g.Releases(ctx, tc.runs)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got != tc.want {
				t.Errorf("%s releases %d blocked units, want %d", tc.name, got, tc.want)
			}
		}
	})
}
