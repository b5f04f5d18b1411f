package gate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/bollhav/bollhav/state"
)

// Releases counts the blocked units downstream of the given windows of
// their models (runs: model → windows, as a plan runs them): the units a
// run of those windows can release, each counted once however many of the
// windows reach it. It is what a run dialog shows before it is confirmed
// ("releases 4 blocked units") — an upper bound, since a released unit may
// still wait on another upstream. A window reaches a downstream model as
// the impact of a blocked unit does: EXACT and ENCAPSULATE the overlapping
// windows, THROUGH every window ending after it begins, WHOLE and a
// timeless downstream every unit. A blocked unit of a model in runs counts
// when another model's windows reach it.
func (g *Reader) Releases(ctx context.Context, runs map[string][]state.Window) (int, error) {
	if len(runs) == 0 {
		return 0, nil
	}
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return 0, err
	}
	blocked := map[string][]state.Window{}
	reached := map[string][]bool{}
	load := func(model string) ([]state.Window, error) {
		if ws, ok := blocked[model]; ok {
			return ws, nil
		}
		var ws []state.Window
		err := g.Store.ScanUnits(ctx, state.UnitQuery{Env: g.Env.Suffix, Model: model, Statuses: []state.UnitStatus{state.Blocked}}, func(u state.Unit) error {
			ws = append(ws, u.Window)
			return nil
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, fmt.Errorf("reading the blocked units of %s: %w", model, err)
		}
		blocked[model], reached[model] = ws, make([]bool, len(ws))
		return ws, nil
	}
	for _, model := range slices.Sorted(maps.Keys(runs)) {
		// Merged, a run of a thousand consecutive windows is one range.
		islands := state.NewIntervalSet(nonZero(runs[model])...).Windows()
		timeless := len(islands) == 0 && len(runs[model]) > 0
		if len(islands) == 0 && !timeless {
			continue
		}
		start := reachSame
		if timeless {
			start = reachAll
		}
		for down, k := range lin.downstreamReach(model, start) {
			ws, err := load(down)
			if err != nil {
				return 0, err
			}
			for i, w := range ws {
				if reached[down][i] {
					continue
				}
				for _, r := range islands {
					if reaches(k, r, w) {
						reached[down][i] = true
						break
					}
				}
				if k == reachAll {
					reached[down][i] = true
				}
			}
		}
	}
	n := 0
	for _, rs := range reached {
		for _, r := range rs {
			if r {
				n++
			}
		}
	}
	return n, nil
}

// reaches reports whether range r of an upstream reaches a downstream unit
// of window w at reach k; see windowIndex.count.
func reaches(k reachKind, r, w state.Window) bool {
	switch k {
	case reachAll:
		return true
	case reachFrom:
		return w.IsZero() || w.Until.After(r.Since)
	case reachSame:
		return w.IsZero() || w.Overlaps(r)
	}
	return false
}

// nonZero drops zero windows (a timeless model's existence row).
func nonZero(ws []state.Window) []state.Window {
	out := make([]state.Window, 0, len(ws))
	for _, w := range ws {
		if !w.IsZero() {
			out = append(out, w)
		}
	}
	return out
}
