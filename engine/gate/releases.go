package gate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/bollhav/bollhav/state"
)

// Releases counts the blocked units a run of the given windows (runs:
// model → windows, as a plan runs them) would supply with everything their
// last gate found lacking, each unit once: what a run dialog shows before it
// is confirmed ("releases 4 blocked units"). A unit counts when every
// upstream its stored blocked_reason names is one the run loads and, where
// the reason lists missing ranges, the run's windows of that upstream cover
// them all; a stale or not-applied upstream counts as supplied by any run of
// it. So a run of one failed hour releases the days waiting on that hour
// alone, not a day that also misses another hour, and not the months
// waiting on those days unless the run loads the days too (with
// downstream). It reads the blocked units of the models downstream of the
// run only; a reason it cannot read back counts as not released.
func (g *Reader) Releases(ctx context.Context, runs map[string][]state.Window) (int, error) {
	if len(runs) == 0 {
		return 0, nil
	}
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return 0, err
	}
	loaded := map[string]state.IntervalSet{}
	for model, ws := range runs {
		loaded[model] = state.NewIntervalSet(ws...) // drops a timeless row's zero window
	}
	downstream := map[string]bool{}
	for model := range runs {
		for down := range lin.downstreamReach(model, reachAll) {
			downstream[down] = true
		}
	}
	n := 0
	for _, model := range slices.Sorted(maps.Keys(downstream)) {
		err := g.Store.ScanUnits(ctx, state.UnitQuery{Env: g.Env.Suffix, Model: model, Statuses: []state.UnitStatus{state.Blocked}}, func(u state.Unit) error {
			if supplied(ReasonParts(u.BlockedReason), runs, loaded) {
				n++
			}
			return nil
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return 0, fmt.Errorf("reading the blocked units of %s: %w", model, err)
		}
	}
	return n, nil
}

// supplied reports whether a run loading runs (merged per model in loaded)
// answers every part of a blocked unit's reason.
func supplied(parts []ReasonPart, runs map[string][]state.Window, loaded map[string]state.IntervalSet) bool {
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if _, ok := runs[p.Upstream]; !ok || p.Upstream == "" {
			return false
		}
		for _, m := range p.Missing {
			if !loaded[p.Upstream].Covers(m) {
				return false
			}
		}
	}
	return true
}
