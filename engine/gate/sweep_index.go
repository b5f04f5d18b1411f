package gate

import (
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
type upstreamIndex struct {
	shape upstreamShape
	// start and rangeEnd bound the contract range at the sweep's now;
	// hasRange is false when no window has completed yet.
	start, rangeEnd int64
	hasRange        bool
	// since, until and at are the applied rows, by since then until.
	since, until, at []int64
	// disjoint is true when no two applied rows overlap — the normal case:
	// then the rows overlapping a window are one contiguous run of indexes.
	disjoint bool
	// islands is the coverage: the union of the applied rows, merged
	// (touching rows join), as since/until pairs in order.
	islands []int64
	// rangeAt is the now start, rangeEnd and hasRange were set for.
	rangeAt time.Time
	// prefixMax and prefixMin hold the newest and oldest applied_at of
	// rows [0, i], built when a freshness limit first asks (once, however
	// many goroutines ask).
	prefixMax, prefixMin []int64
	prefixOnce           sync.Once
}

func newUpstreamIndex(sh upstreamShape, units []state.SweepUnit, now time.Time) *upstreamIndex {
	ix := &upstreamIndex{shape: sh, disjoint: true}
	ix.setRange(now)
	n := 0
	for _, u := range units {
		if u.Status == state.CodeApplied {
			n++
		}
	}
	ix.since, ix.until, ix.at = make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	for _, u := range units {
		if u.Status != state.CodeApplied {
			continue
		}
		if k := len(ix.until); k > 0 && ix.until[k-1] > u.Since {
			ix.disjoint = false
		}
		ix.since, ix.until, ix.at = append(ix.since, u.Since), append(ix.until, u.Until), append(ix.at, u.AppliedAt)
		if u.Since == u.Until {
			continue // an existence row covers no time
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
	i := sort.Search(len(ix.since), func(i int) bool { return ix.since[i] > a || ix.since[i] == a && ix.until[i] >= b })
	return i, i < len(ix.since) && ix.since[i] == a && ix.until[i] == b
}

// span returns the newest and oldest applied_at of the rows overlapping
// [a, b); ok is false when none does.
func (ix *upstreamIndex) span(a, b int64) (newest, oldest int64, ok bool) {
	j := sort.Search(len(ix.since), func(i int) bool { return ix.since[i] >= b }) // rows [0, j) start before b
	if !ix.disjoint {
		for k := range j {
			if ix.until[k] > a {
				newest, oldest, ok = ext(newest, oldest, ok, ix.at[k])
			}
		}
		return newest, oldest, ok
	}
	// Disjoint rows in order have ordered untils too: those ending by a
	// are a prefix.
	i := sort.Search(j, func(i int) bool { return ix.until[i] > a })
	if i >= j {
		return 0, 0, false
	}
	if i == 0 && j > 16 {
		ix.buildPrefix()
		return ix.prefixMax[j-1], ix.prefixMin[j-1], true
	}
	for k := i; k < j; k++ {
		newest, oldest, ok = ext(newest, oldest, ok, ix.at[k])
	}
	return newest, oldest, ok
}

// all returns the newest and oldest applied_at of every applied row.
func (ix *upstreamIndex) all() (newest, oldest int64, ok bool) {
	if len(ix.at) == 0 {
		return 0, 0, false
	}
	ix.buildPrefix()
	return ix.prefixMax[len(ix.at)-1], ix.prefixMin[len(ix.at)-1], true
}

func (ix *upstreamIndex) buildPrefix() { ix.prefixOnce.Do(ix.fillPrefix) }

func (ix *upstreamIndex) fillPrefix() {
	ix.prefixMax, ix.prefixMin = make([]int64, len(ix.at)), make([]int64, len(ix.at))
	for k, t := range ix.at {
		if k == 0 {
			ix.prefixMax[k], ix.prefixMin[k] = t, t
			continue
		}
		ix.prefixMax[k], ix.prefixMin[k] = max(ix.prefixMax[k-1], t), min(ix.prefixMin[k-1], t)
	}
}

func ext(newest, oldest int64, ok bool, t int64) (int64, int64, bool) {
	if !ok {
		return t, t, true
	}
	return max(newest, t), min(oldest, t), true
}
