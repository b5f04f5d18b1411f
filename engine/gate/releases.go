package gate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/bollhav/bollhav/state"
)

// Releases counts the held units a run of the given windows (runs: model →
// windows, as a plan runs them) releases, each unit once: the blocked and
// pending units downstream whose gate holds them back now and whose every
// root (analysis.allRoots, as incidents and why trace them) the run loads. It is the one "releases" of every surface: what a run dialog
// shows before it is confirmed, the RELEASES of why's unblock frontier, and
// what an incident alone holds when the run fixes that incident's root. A
// run of one failed hour releases the days waiting on that hour alone and
// the months waiting on those days (they run, in order, once it is fixed:
// run --downstream applies them), not a day that also misses another hour.
// It reads the blocked units of the models downstream of the run only.
func (g *Reader) Releases(ctx context.Context, runs map[string][]state.Window) (int, error) {
	if len(runs) == 0 {
		return 0, nil
	}
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return 0, err
	}
	an := &analysis{g: g, env: g.Env.Suffix, now: g.now(), shapes: &RegistrationCache{}, models: map[string]analysisModel{}}
	return an.releases(ctx, lin, runs)
}

// releases is Releases within one analysis.
func (an *analysis) releases(ctx context.Context, lin *gatedLineage, runs map[string][]state.Window) (int, error) {
	loaded := map[string]state.IntervalSet{}
	for model, ws := range runs {
		loaded[model] = state.NewIntervalSet(ws...) // drops a timeless row's zero window
	}
	downstream := map[string]bool{}
	for model := range runs {
		maps.Copy(downstream, lin.waitsOn(model))
	}
	n := 0
	for _, model := range slices.Sorted(maps.Keys(downstream)) {
		m, _, err := an.model(ctx, model)
		if err != nil {
			continue // a model this bollhav cannot read: nothing to trace
		}
		var held []state.Unit
		err = an.g.Store.ScanUnits(ctx, state.UnitQuery{Env: an.env, Model: model, Statuses: []state.UnitStatus{state.Blocked, state.Pending}}, func(u state.Unit) error {
			held = append(held, u)
			return nil
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return 0, fmt.Errorf("reading the held units of %s: %w", model, err)
		}
		for _, u := range held {
			ug, err := an.g.CachedUnit(ctx, an.shapes, m, windowOf(m, u.Window), an.now)
			if err != nil {
				return 0, err
			}
			if ug.Satisfied {
				continue // not held: it runs on the next run as it is
			}
			roots, err := an.allRoots(ctx, m, linkOf(m, u.Window, &u), &ug)
			if err != nil {
				return 0, err
			}
			if len(roots) > 0 && !slices.ContainsFunc(roots, func(l ChainLink) bool { return !loads(runs, loaded, l) }) {
				n++
			}
		}
	}
	return n, nil
}

// loads reports whether a run loading runs (merged per model in loaded)
// fixes root l: it runs l's model over l's window.
func loads(runs map[string][]state.Window, loaded map[string]state.IntervalSet, l ChainLink) bool {
	if _, ok := runs[l.Model]; !ok {
		return false
	}
	return l.Window.IsZero() || loaded[l.Model].Covers(l.Window)
}
