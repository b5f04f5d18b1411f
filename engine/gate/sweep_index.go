package gate

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// upstreamIndex is one upstream's applied rows as the gate sweep reads them,
// built once per sweep however many downstream units ask: the rows in window
// order, their merged coverage, and running extremes of applied_at for the
// freshness of prefixes. Times are Unix microseconds, as the store keeps
// them, so a question about a window is a few binary searches on integers.
//
// The rows are the upstream's units as the caller holds them, referenced,
// not copied: a live index keeps one slice of a model's units, which its
// own verdicts and every downstream's gate read (at 10M units a copy of the
// applied rows was a third of the index). The searches skip the units that
// are not applied.
type upstreamIndex struct {
	shape upstreamShape
	// start and rangeEnd bound the contract range at the sweep's now;
	// hasRange is false when no window has completed yet.
	start, rangeEnd int64
	hasRange        bool
	// rows are the upstream's units by since then until, applied or not;
	// only the applied ones are the gate's rows.
	rows []state.SweepUnit
	// disjoint is true when no two rows overlap — the normal case: then
	// the rows overlapping a window are one contiguous run of indexes,
	// and their untils are in order too.
	disjoint bool
	// islands is the coverage: the union of the applied rows, merged
	// (touching rows join), as since/until pairs in order.
	islands []int64
	// rangeAt is the now start, rangeEnd and hasRange were set for.
	rangeAt time.Time
	// prefixMax and prefixMin hold the newest and oldest applied_at of
	// the applied rows among rows [0, i] (noneNewest and noneOldest when
	// there is none), built when a freshness limit first asks (once,
	// however many goroutines ask).
	prefixMax, prefixMin []int64
	prefixOnce           sync.Once
}

// The running extremes of a prefix without an applied row.
const (
	noneNewest = math.MinInt64
	noneOldest = math.MaxInt64
)

// newUpstreamIndex indexes units, which it keeps (the caller must not
// change them but through the index's respan).
func newUpstreamIndex(sh upstreamShape, units []state.SweepUnit, now time.Time) *upstreamIndex {
	ix := &upstreamIndex{shape: sh, rows: units, disjoint: isDisjoint(units)}
	ix.setRange(now)
	for _, u := range units {
		if u.Status != state.CodeApplied || u.Since == u.Until {
			continue // not applied, or an existence row, which covers no time
		}
		if k := len(ix.islands); k > 0 && u.Since <= ix.islands[k-1] {
			ix.islands[k-1] = max(ix.islands[k-1], u.Until)
		} else {
			ix.islands = append(ix.islands, u.Since, u.Until)
		}
	}
	return ix
}

// setRange sets the contract range's bounds at now: the only part of the
// index the clock moves (a live index calls it again as time passes).
func (ix *upstreamIndex) setRange(now time.Time) {
	if ix.rangeAt.Equal(now) && !now.IsZero() {
		return // already set: no write, so judges may share the index
	}
	sh := ix.shape
	ix.rangeAt = now
	ix.start, ix.rangeEnd, ix.hasRange = 0, 0, false
	if sh.registered && sh.temporality == spec.Temporal {
		ix.start = sh.grid.Start.UnixMicro()
		if rng, ok := sh.grid.ContractRange(now, sh.end); ok {
			ix.rangeEnd, ix.hasRange = rng.Until.UnixMicro(), true
		}
	}
}

// nextRange is the Unix nanosecond after which the contract range grows by
// the clock alone — the instant before the window holding now ends — or
// noFlip when it never will (a timeless or unregistered upstream, or a
// fixed end already reached).
func (ix *upstreamIndex) nextRange(now time.Time) int64 {
	sh := ix.shape
	if !sh.registered || sh.temporality != spec.Temporal {
		return noFlip
	}
	until := sh.grid.LastCompleteUntil(now)
	if sh.end != nil && !sh.end.After(until) {
		return noFlip
	}
	next := sh.grid.WindowAt(max(sh.grid.Index(now), 0)).Until
	if !next.After(now) {
		return noFlip // cannot happen on a valid grid; never spin on it
	}
	return next.UnixNano() - 1
}

// covers reports whether the coverage holds all of [a, b): a covered window
// lies inside a single island.
func (ix *upstreamIndex) covers(a, b int64) bool {
	n := len(ix.islands) / 2
	i := sort.Search(n, func(i int) bool { return ix.islands[2*i+1] > a })
	return i < n && ix.islands[2*i] <= a && ix.islands[2*i+1] >= b
}

// exact returns the index of the applied row whose window is exactly [a, b).
func (ix *upstreamIndex) exact(a, b int64) (int, bool) {
	rows := ix.rows
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Since > a || rows[i].Since == a && rows[i].Until >= b })
	return i, i < len(rows) && rows[i].Since == a && rows[i].Until == b && rows[i].Status == state.CodeApplied
}

// at is row k's applied_at.
func (ix *upstreamIndex) at(k int) int64 { return ix.rows[k].AppliedAt }

// span returns the newest and oldest applied_at of the applied rows
// overlapping [a, b); ok is false when none does.
func (ix *upstreamIndex) span(a, b int64) (newest, oldest int64, ok bool) {
	rows := ix.rows
	j := sort.Search(len(rows), func(i int) bool { return rows[i].Since >= b }) // rows [0, j) start before b
	i := 0
	if ix.disjoint {
		// Disjoint rows in order have ordered untils too: those ending by
		// a are a prefix.
		i = sort.Search(j, func(i int) bool { return rows[i].Until > a })
		if i >= j {
			return 0, 0, false
		}
		if i == 0 && j > 16 {
			ix.buildPrefix()
			newest, oldest = ix.prefixMax[j-1], ix.prefixMin[j-1]
			return newest, oldest, newest != noneNewest
		}
	}
	for k := i; k < j; k++ {
		if rows[k].Status == state.CodeApplied && rows[k].Until > a {
			newest, oldest, ok = ext(newest, oldest, ok, rows[k].AppliedAt)
		}
	}
	return newest, oldest, ok
}

// all returns the newest and oldest applied_at of every applied row.
func (ix *upstreamIndex) all() (newest, oldest int64, ok bool) {
	if len(ix.rows) == 0 {
		return 0, 0, false
	}
	ix.buildPrefix()
	newest, oldest = ix.prefixMax[len(ix.rows)-1], ix.prefixMin[len(ix.rows)-1]
	return newest, oldest, newest != noneNewest
}

func (ix *upstreamIndex) buildPrefix() { ix.prefixOnce.Do(func() { ix.refreshPrefix(0) }) }

func ext(newest, oldest int64, ok bool, t int64) (int64, int64, bool) {
	if !ok {
		return t, t, true
	}
	return max(newest, t), min(oldest, t), true
}
