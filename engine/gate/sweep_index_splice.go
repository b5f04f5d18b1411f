package gate

import (
	"slices"
	"sort"
	"time"

	"github.com/bollhav/bollhav/state"
)

// respan points the index at rows — a model's units after a live index's
// batch replaced those in the spans ss, rows from position from on moved —
// and merges the coverage again only around each span whose applied rows
// changed (changed), instead of building the index from every unit of the
// model again (a model of a hundred thousand windows costs that much on
// every change of one). Every unit the old rows or the new ones hold in a
// span lies inside it (the live index widens a span to whole units before
// it reads it). It returns false, and changes nothing, when the rows
// overlap one another or an applied row in a changed span reaches out of
// it: the caller builds the index anew.
func (ix *upstreamIndex) respan(rows []state.SweepUnit, changed []span, from int, now time.Time) bool {
	if !ix.disjoint || !isDisjoint(rows[max(from-1, 0):]) {
		return false
	}
	for _, s := range changed {
		for k := sort.Search(len(rows), func(k int) bool { return rows[k].Until > s.a }); k < len(rows) && rows[k].Since < s.b; k++ {
			if u := rows[k]; u.Status == state.CodeApplied && (u.Since == u.Until || u.Since < s.a || u.Until > s.b) {
				return false // an existence row, or one reaching out of s
			}
		}
	}
	ix.rows = rows
	for _, s := range changed {
		ix.mergeIslands(s)
	}
	if ix.prefixMax != nil {
		ix.refreshPrefix(from)
	}
	ix.setRange(now)
	return true
}

// mergeIslands merges the coverage again where it meets s: the islands
// touching s and the applied rows inside their hull, which no other island
// touches.
func (ix *upstreamIndex) mergeIslands(s span) {
	n := len(ix.islands) / 2
	p := sort.Search(n, func(k int) bool { return ix.islands[2*k+1] >= s.a })
	q := sort.Search(n, func(k int) bool { return ix.islands[2*k] > s.b })
	q = max(p, q)
	a, b := s.a, s.b
	if p < q {
		a, b = min(a, ix.islands[2*p]), max(b, ix.islands[2*q-1])
	}
	rows := ix.rows
	var merged []int64
	for k := sort.Search(len(rows), func(k int) bool { return rows[k].Since >= a }); k < len(rows) && rows[k].Until <= b; k++ {
		u := rows[k]
		if u.Status != state.CodeApplied || u.Since == u.Until {
			continue
		}
		if m := len(merged); m > 0 && u.Since <= merged[m-1] {
			merged[m-1] = max(merged[m-1], u.Until)
		} else {
			merged = append(merged, u.Since, u.Until)
		}
	}
	ix.islands = slices.Replace(ix.islands, 2*p, 2*q, merged...)
}

// refreshPrefix keeps the running extremes of applied_at true after the
// rows from i on changed (from 0: built for the first time).
func (ix *upstreamIndex) refreshPrefix(i int) {
	n := len(ix.rows)
	i = min(i, len(ix.prefixMax))
	ix.prefixMax = slices.Grow(ix.prefixMax[:i], n-i)[:n]
	ix.prefixMin = slices.Grow(ix.prefixMin[:i], n-i)[:n]
	newest, oldest := int64(noneNewest), int64(noneOldest)
	if i > 0 {
		newest, oldest = ix.prefixMax[i-1], ix.prefixMin[i-1]
	}
	for k := i; k < n; k++ {
		if u := ix.rows[k]; u.Status == state.CodeApplied {
			newest, oldest = max(newest, u.AppliedAt), min(oldest, u.AppliedAt)
		}
		ix.prefixMax[k], ix.prefixMin[k] = newest, oldest
	}
}
