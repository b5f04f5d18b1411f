package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// OutdatedText is how a blocked_reason says an upstream's windows are
// applied but outdated for a require_current contract.
const OutdatedText = "applied under an earlier definition"

// TaintedUpstream is one gated upstream's windows in a downstream unit's
// reach that are outdated or built on outdated ones (engine.TraceOutdated).
type TaintedUpstream struct {
	Model string
	// Windows are the first few such ranges, merged, in order; More counts
	// the rest. A timeless upstream's existence row is one zero Window.
	Windows []state.Window
	More    int
}

// DefinitionChange is what changed between the definition an outdated unit
// was built under and its model's current one.
type DefinitionChange struct {
	// ChangedAt is when the current definition was first registered; nil
	// when it is the spec's and not registered yet.
	ChangedAt *time.Time
	// Changes lists the differences (spec.DiffDefinitions).
	Changes []spec.FieldChange
}

// IsOutdated reports whether an applied row built under fingerprint is
// outdated against current: both known and different. An unknown
// fingerprint (an operator's mark, a unit applied before fingerprints were
// recorded) is never outdated.
func IsOutdated(fingerprint, current string) bool {
	return fingerprint != "" && current != "" && fingerprint != current
}

// splitOutdated splits rows into those a require_current contract accepts
// (current or unknown) and the outdated ones.
func splitOutdated(rows []AppliedRow, current string) (ok, outdated []AppliedRow) {
	for _, r := range rows {
		if IsOutdated(r.Fingerprint, current) {
			outdated = append(outdated, r)
		} else {
			ok = append(ok, r)
		}
	}
	if len(outdated) == 0 {
		return rows, nil
	}
	return ok, outdated
}

// splitMissing splits the ranges a level misses into those no row covers
// at all (still missing) and those outdated rows cover (applied, but under
// an earlier definition).
func splitMissing(missing []state.Window, outdated []AppliedRow) (still, old []state.Window) {
	if len(outdated) == 0 {
		return missing, nil
	}
	need := state.NewIntervalSet(missing...)
	left := need.Subtract(coverageOf(outdated))
	return left.Windows(), need.Subtract(left).Windows()
}

// missingReason is the blocked_reason entry of an upstream with missing
// and outdated ranges (at least one of them).
func missingReason(src spec.Source, missing, outdated []state.Window) string {
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+joinWindows(missing))
	}
	if len(outdated) > 0 {
		parts = append(parts, joinWindows(outdated)+" "+OutdatedText)
	}
	return fmt.Sprintf("%s (%s): %s", src.Name, src.Contract, strings.Join(parts, "; "))
}

// exactRows are the rows whose window is exactly w.
func exactRows(rows []AppliedRow, w state.Window) []AppliedRow {
	return rowsWhere(rows, func(r AppliedRow) bool { return r.Window.Equal(w) })
}

// currentIndex is ix, the sweep's index of upstream name, without its
// outdated rows, for the edges whose contract requires the upstream
// current: ix itself when the store counts no applied unit of name under
// another known fingerprint than the current one, else an index of the
// applied rows read again with their fingerprints. Only opted-in edges pay
// for it, and only while the upstream has outdated windows.
func (g *Reader) currentIndex(ctx context.Context, env, name string, ix *upstreamIndex, now time.Time) (*upstreamIndex, error) {
	rows, old, err := g.currentRows(ctx, env, name, ix.shape)
	if err != nil || len(old) == 0 {
		return ix, err
	}
	return newUpstreamIndex(ix.shape, rows, now), nil
}

// currentRows reads the applied rows of upstream name built under its
// current definition (or an unknown one), for an index a require_current
// edge reads, and the outdated ones apart (old, in window order); old is
// empty, and nothing is read but the counts, when the store counts no
// applied unit of name under another known fingerprint: the upstream's
// whole index serves then.
func (g *Reader) currentRows(ctx context.Context, env, name string, sh upstreamShape) (rows []state.SweepUnit, old []AppliedRow, err error) {
	if !sh.registered || sh.current == "" {
		return nil, nil, nil
	}
	counts, err := g.Store.FingerprintCounts(ctx, env, name)
	if err != nil {
		return nil, nil, fmt.Errorf("counting the applied units of %s by definition: %w", name, err)
	}
	outdated := false
	for _, c := range counts {
		outdated = outdated || IsOutdated(c.Fingerprint, sh.current)
	}
	if !outdated {
		return nil, nil, nil
	}
	applied, err := g.Store.Applied(ctx, env, name, state.Window{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading applied rows of %s: %w", name, err)
	}
	for _, r := range applied {
		if IsOutdated(r.Fingerprint, sh.current) {
			old = append(old, r)
		} else {
			rows = append(rows, state.SweepUnitOf(state.Unit{Window: r.Window, Status: state.Applied, AppliedAt: &r.AppliedAt}))
		}
	}
	return rows, old, nil
}

// outdatedUnits calls fn, in window order, with each applied unit of um
// inside the ranges (a verdict's Outdated ranges for src, an upstream of m)
// that was built under an earlier definition than um's current one, until
// fn returns true.
func (an *analysis) outdatedUnits(ctx context.Context, m *spec.Model, src spec.Source, um *spec.Model, ranges []state.Window, fn func(state.Unit) bool) error {
	if len(ranges) == 0 {
		return nil
	}
	sh, err := an.g.shapeOf(ctx, an.shapes, m.RegistrationEnv(src, an.g.Env).Suffix, src.Name)
	if err != nil || !sh.registered {
		return err
	}
	for _, r := range ranges {
		stopped := false
		err := an.g.Store.ScanUnits(ctx, state.UnitQuery{Env: an.env, Model: um.Name, Window: r, Statuses: []state.UnitStatus{state.Applied}}, func(u state.Unit) error {
			if IsOutdated(u.Fingerprint, sh.current) && fn(u) {
				stopped = true
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) && !errors.Is(err, state.ErrNotFound) {
			return fmt.Errorf("reading the units of %s: %w", um.Name, err)
		}
		if stopped {
			return nil
		}
	}
	return nil
}
