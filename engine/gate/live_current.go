package gate

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/bollhav/bollhav/state"
)

// A require_current edge reads its upstream without the windows applied
// under an earlier definition (Sweep's currentIndex). The live index keeps
// such an index apart, in liveState.cur, for every upstream a judged model
// reads with require_current while that upstream has outdated windows; when
// it has none, the edge reads the upstream's whole index, as the sweep's
// does. Whether a window is outdated is not in the feed's rows — a change
// only says a window moved — so a batch that changes such an upstream reads
// its current rows again (the applied counts by definition, then its
// applied rows only while some are outdated) and re-judges every model
// that reads it with require_current whole: an upstream's rebuild can
// release any of their units.

// currentRead is an upstream's applied rows as read for a batch, split
// into current (or unknown) ones and outdated ones; old is empty when none
// is outdated.
type currentRead struct {
	rows []state.SweepUnit
	old  []AppliedRow
}

// currentUpstreams are the upstreams some judged model reads with
// require_current, sorted.
func (st *liveState) currentUpstreams() []string {
	var names []string
	for _, m := range st.models {
		if !m.judged {
			continue
		}
		for _, src := range m.srcs {
			if src.RequireCurrent && !slices.Contains(names, src.Name) {
				names = append(names, src.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// readCurrent reads the current rows of the names (store reads, done
// outside the index's lock).
func (l *Live) readCurrent(ctx context.Context, st *liveState, names []string) (map[string]currentRead, error) {
	out := make(map[string]currentRead, len(names))
	for _, name := range names {
		if _, bad := st.shapeErr[name]; bad {
			continue
		}
		rows, old, err := l.r.currentRows(ctx, l.r.Env.Suffix, name, st.shapes[name])
		if err != nil {
			return nil, err
		}
		out[name] = currentRead{rows: rows, old: old}
	}
	return out, nil
}

// setCurrent puts what readCurrent read in place: an index of the current
// rows for an upstream with outdated windows, none for the others. It
// returns the upstreams whose current index changed or went away, whose
// require_current readers must be judged again.
func (st *liveState) setCurrent(reads map[string]currentRead, now time.Time) []string {
	var changed []string
	for name, rd := range reads {
		_, had := st.cur[name]
		switch {
		case len(rd.old) > 0:
			st.cur[name], st.old[name] = newUpstreamIndex(st.shapes[name], rd.rows, now), rd.old
			changed = append(changed, name)
		case had:
			delete(st.cur, name)
			delete(st.old, name)
			changed = append(changed, name)
		}
	}
	return changed
}

// edgeIndex is the index an edge of src reads: the upstream's current one
// for a require_current edge while the upstream has outdated windows, its
// whole one otherwise.
func (st *liveState) edgeIndex(requireCurrent bool, name string) *upstreamIndex {
	if requireCurrent {
		if ix, ok := st.cur[name]; ok {
			return ix
		}
	}
	return st.ix[name]
}

// outdatedRows are the outdated applied rows of upstream name overlapping
// [a, b) (Unix µs), with their fingerprints, for Judge's reason: it tells
// a range applied under an earlier definition from a missing one.
func (st *liveState) outdatedRows(name string, a, b int64) []AppliedRow {
	var out []AppliedRow
	for _, r := range st.old[name] {
		if r.Window.IsZero() || r.Window.Since.UnixMicro() < b && r.Window.Until.UnixMicro() > a {
			out = append(out, r)
		}
	}
	return out
}
