package gate

import (
	"slices"
	"sort"
	"time"

	"github.com/bollhav/bollhav/state"
)

// splice puts units — what the store holds now of a model whose units do
// not overlap one another, read back over s — in place of the applied rows
// overlapping s, as a live index does when a batch changed them: the rows
// move in memory and the coverage is merged again only around s, instead
// of building the index from every unit of the model again (a model of a
// hundred thousand windows costs that much on every change of one). Every
// unit the old rows or units hold in s lies inside s (the live index
// widens a span to whole units before it reads it). It returns false, and
// changes nothing, when the rows would overlap one another afterwards: the
// caller builds the index anew.
func (ix *upstreamIndex) splice(s span, units []state.SweepUnit, now time.Time) bool {
	if !ix.disjoint {
		return false
	}
	var since, until, at []int64
	for _, u := range units {
		if u.Status != state.CodeApplied {
			continue
		}
		if u.Since == u.Until || u.Since < s.a || u.Until > s.b {
			return false // an existence row, or one reaching out of s
		}
		if k := len(until); k > 0 && until[k-1] > u.Since {
			return false
		}
		since, until, at = append(since, u.Since), append(until, u.Until), append(at, u.AppliedAt)
	}
	// The rows overlapping s: [i, j), as the rows are disjoint and in order.
	i := sort.Search(len(ix.until), func(k int) bool { return ix.until[k] > s.a })
	j := sort.Search(len(ix.since), func(k int) bool { return ix.since[k] >= s.b })
	j = max(i, j)
	for k := i; k < j; k++ {
		if ix.since[k] < s.a || ix.until[k] > s.b {
			return false
		}
	}
	if len(since) > 0 && (i > 0 && ix.until[i-1] > since[0] || j < len(ix.since) && until[len(until)-1] > ix.since[j]) {
		return false
	}
	ix.since = slices.Replace(ix.since, i, j, since...)
	ix.until = slices.Replace(ix.until, i, j, until...)
	ix.at = slices.Replace(ix.at, i, j, at...)
	ix.mergeIslands(s)
	ix.refreshPrefix(i)
	ix.setRange(now)
	return true
}

// mergeIslands merges the coverage again where it meets s: the islands
// touching s and the rows inside their hull, which no other island
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
	var merged []int64
	for k := sort.Search(len(ix.since), func(k int) bool { return ix.since[k] >= a }); k < len(ix.since) && ix.until[k] <= b; k++ {
		if ix.since[k] == ix.until[k] {
			continue
		}
		if m := len(merged); m > 0 && ix.since[k] <= merged[m-1] {
			merged[m-1] = max(merged[m-1], ix.until[k])
		} else {
			merged = append(merged, ix.since[k], ix.until[k])
		}
	}
	ix.islands = slices.Replace(ix.islands, 2*p, 2*q, merged...)
}

// refreshPrefix keeps the running extremes of applied_at true after the
// rows from i on changed: recomputed from i when they were built, else
// left to be built when first asked.
func (ix *upstreamIndex) refreshPrefix(i int) {
	if ix.prefixMax == nil {
		return
	}
	if len(ix.at) == 0 {
		ix.prefixMax, ix.prefixMin = ix.prefixMax[:0], ix.prefixMin[:0]
		return
	}
	ix.prefixMax = slices.Grow(ix.prefixMax[:min(i, len(ix.prefixMax))], len(ix.at)-i)[:len(ix.at)]
	ix.prefixMin = slices.Grow(ix.prefixMin[:min(i, len(ix.prefixMin))], len(ix.at)-i)[:len(ix.at)]
	for k := i; k < len(ix.at); k++ {
		t := ix.at[k]
		if k == 0 {
			ix.prefixMax[k], ix.prefixMin[k] = t, t
			continue
		}
		ix.prefixMax[k], ix.prefixMin[k] = max(ix.prefixMax[k-1], t), min(ix.prefixMin[k-1], t)
	}
}
