package gate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/state"
)

// releasedPrefix starts the stored reason of a blocked unit whose upstreams
// caught up (ReleasedReason).
const releasedPrefix = "released: "

// ReleasedReason is the stored reason of a blocked unit a run re-judged and
// found satisfied: the reason it was blocked for no longer holds, and the
// next run that reaches it applies it.
func ReleasedReason(runID int64) string {
	return fmt.Sprintf("%sits upstreams caught up in run %d, so the next run applies it", releasedPrefix, runID)
}

// IsReleased reports whether a stored reason is ReleasedReason's.
func IsReleased(reason string) bool { return strings.HasPrefix(reason, releasedPrefix) }

// CaughtUp lists the blocked units downstream of models — by gated edges
// and after: edges, directly or through others — whose gate is satisfied
// now while their stored reason says otherwise: the reason no longer holds.
// A command that applied units of models calls it so that no stored reason
// outlives its cause. Units already marked released are left out.
func (g *Reader) CaughtUp(ctx context.Context, models []string) ([]state.Unit, error) {
	if len(models) == 0 {
		return nil, nil
	}
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return nil, err
	}
	downstream := map[string]bool{}
	for _, m := range models {
		maps.Copy(downstream, lin.waitsOn(m))
	}
	cache := &RegistrationCache{}
	an := &analysis{g: g, env: g.Env.Suffix, now: g.now(), shapes: cache, models: map[string]analysisModel{}}
	var out []state.Unit
	for _, model := range slices.Sorted(maps.Keys(downstream)) {
		m, _, err := an.model(ctx, model)
		if err != nil {
			continue // a model this bollhav cannot read stays as it is
		}
		var blocked []state.Unit
		err = g.Store.ScanUnits(ctx, state.UnitQuery{Env: g.Env.Suffix, Model: model, Statuses: []state.UnitStatus{state.Blocked}}, func(u state.Unit) error {
			if !IsReleased(u.BlockedReason) {
				blocked = append(blocked, u)
			}
			return nil
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, fmt.Errorf("reading the blocked units of %s: %w", model, err)
		}
		for _, u := range blocked {
			ug, err := g.CachedUnit(ctx, cache, m, windowOf(m, u.Window), an.now)
			if err != nil {
				return nil, err
			}
			if ug.Satisfied {
				out = append(out, u)
			}
		}
	}
	return out, nil
}
