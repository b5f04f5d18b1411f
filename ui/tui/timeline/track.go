package timeline

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/bollhav/bollhav/state"
)

// Segment is one unit of a model on the time axis: its window and status.
// A fixed model's segments are its grid windows; a flexible model's are its
// irregular covered units.
type Segment struct {
	state.Window
	Status Status
}

// Track is one model's units prepared for rendering: built once when the
// data changes, then queried per frame in time logarithmic in the number of
// units, so a frame costs the same with a million units as with a hundred.
// The zero Track has no units and an empty range: every cell is outside.
type Track struct {
	// segs are sorted by Since and pairwise disjoint.
	segs []Segment
	// tree is a bottom-up range-maximum tree over the segments' ranks:
	// tree[n+i] is segment i's rank, tree[i] the worse of its children.
	tree []rank
	// held is the union of every segment; applied the union of the applied
	// and stale ones, with appliedSecs[i] the seconds applied in applied[:i].
	held, applied []state.Window
	appliedSecs   []float64
	extent        state.Window
}

// NewTrack prepares a model's units. extent is the model's range — from its
// start to its contract range's end, as state.Grid.ContractRange gives it —
// the time where a hole shows as missing; outside it cells are blank. A zero
// extent means the span of the units themselves. Units may come in any order
// with empty windows among them; where two overlap the worse status wins.
// Sorted, disjoint units (what the store returns for a window-ordered scan)
// are kept as given without a copy, so the caller must not modify segs
// afterwards. It costs O(n), or O(n log n) when segs need sorting.
func NewTrack(segs []Segment, extent state.Window) Track {
	if !sortedDisjoint(segs) {
		segs = normalize(segs)
	}
	t := Track{segs: segs}
	n := len(segs)
	t.tree = make([]rank, 2*n)
	for i, s := range segs {
		t.tree[n+i] = rankOf(s.Status)
	}
	for i := n - 1; i > 0; i-- {
		t.tree[i] = max(t.tree[2*i], t.tree[2*i+1])
	}
	t.held = union(segs, func(Segment) bool { return true })
	t.applied = union(segs, func(s Segment) bool { r := rankOf(s.Status); return r == rApplied || r == rStale || r == rOutdated })
	t.appliedSecs = make([]float64, len(t.applied)+1)
	for i, w := range t.applied {
		t.appliedSecs[i+1] = t.appliedSecs[i] + w.Until.Sub(w.Since).Seconds()
	}
	switch {
	case !extent.IsZero():
		t.extent = state.Window{Since: extent.Since.UTC(), Until: extent.Until.UTC()}
	case n > 0:
		t.extent = state.Window{Since: t.held[0].Since, Until: t.held[len(t.held)-1].Until}
	}
	return t
}

func sortedDisjoint(segs []Segment) bool {
	for i, s := range segs {
		if !s.Until.After(s.Since) || (i > 0 && s.Since.Before(segs[i-1].Until)) {
			return false
		}
	}
	return true
}

// normalize sorts a copy of segs, drops empty windows and splits overlaps
// into pieces that carry the worst status covering them.
func normalize(in []Segment) []Segment {
	segs := make([]Segment, 0, len(in))
	for _, s := range in {
		if s.Until.After(s.Since) {
			segs = append(segs, Segment{Window: state.Window{Since: s.Since.UTC(), Until: s.Until.UTC()}, Status: s.Status})
		}
	}
	slices.SortStableFunc(segs, func(a, b Segment) int {
		return cmp.Or(a.Since.Compare(b.Since), a.Until.Compare(b.Until))
	})
	if sortedDisjoint(segs) {
		return segs
	}
	type event struct {
		at    time.Time
		r     rank
		delta int
	}
	evs := make([]event, 0, 2*len(segs))
	for _, s := range segs {
		r := rankOf(s.Status)
		evs = append(evs, event{s.Since, r, +1}, event{s.Until, r, -1})
	}
	slices.SortFunc(evs, func(a, b event) int { return a.at.Compare(b.at) })
	var live [nRanks]int
	active := 0
	out := segs[:0]
	var from time.Time
	for i := 0; i < len(evs); {
		at := evs[i].at
		if active > 0 && at.After(from) {
			worst := rOutside
			for r := nRanks - 1; r > 0; r-- {
				if live[r] > 0 {
					worst = r
					break
				}
			}
			out = append(out, Segment{Window: state.Window{Since: from, Until: at}, Status: rankStatus[worst]})
		}
		for ; i < len(evs) && evs[i].at.Equal(at); i++ {
			live[evs[i].r] += evs[i].delta
			active += evs[i].delta
		}
		from = at
	}
	return slices.Clip(out)
}

// union merges the windows of the segments keep accepts into maximal
// islands; touching windows merge.
func union(segs []Segment, keep func(Segment) bool) []state.Window {
	var out []state.Window
	for _, s := range segs {
		if !keep(s) {
			continue
		}
		if k := len(out) - 1; k >= 0 && !s.Since.After(out[k].Until) {
			if s.Until.After(out[k].Until) {
				out[k].Until = s.Until
			}
			continue
		}
		out = append(out, s.Window)
	}
	return out
}

// Len is the number of segments, after overlaps were split.
func (t Track) Len() int { return len(t.segs) }

// Extent is the model's range: where a hole shows as missing.
func (t Track) Extent() state.Window { return t.extent }

// At returns the segment holding instant tm.
func (t Track) At(tm time.Time) (Segment, bool) {
	i := sort.Search(len(t.segs), func(i int) bool { return t.segs[i].Until.After(tm) })
	if i < len(t.segs) && !t.segs[i].Since.After(tm) {
		return t.segs[i], true
	}
	return Segment{}, false
}

// Overlapping returns the segments that share an instant with w, in order:
// a window of the track's own slice, not a copy.
func (t Track) Overlapping(w state.Window) []Segment {
	lo := sort.Search(len(t.segs), func(i int) bool { return t.segs[i].Until.After(w.Since) })
	hi := lo + sort.Search(len(t.segs)-lo, func(i int) bool { return !t.segs[lo+i].Since.Before(w.Until) })
	return t.segs[lo:hi]
}

// Worst is the status a cell spanning w shows: the worst segment inside the
// track's extent, missing when part of it holds no unit, outside when w lies
// wholly outside the extent.
func (t Track) Worst(w state.Window) Status {
	r, _ := t.rank(w.Since, w.Until, 0)
	return rankStatus[r]
}

// rank is Worst over [a, b), searching segments from index from onwards
// (every segment before it must end at or before a). It returns the first
// segment that ends after a, the hint for the next, later cell.
func (t Track) rank(a, b time.Time, from int) (rank, int) {
	if a.Before(t.extent.Since) {
		a = t.extent.Since
	}
	if b.After(t.extent.Until) {
		b = t.extent.Until
	}
	if !b.After(a) {
		return rOutside, from
	}
	n := len(t.segs)
	lo := gallop(n, from, func(i int) bool { return t.segs[i].Until.After(a) })
	hi := gallop(n, lo, func(i int) bool { return !t.segs[i].Since.Before(b) })
	if lo >= hi {
		return rMissing, lo
	}
	r := t.maxRank(lo, hi)
	if r < rMissing && !covers(t.held, a, b) {
		r = rMissing
	}
	return r, lo
}

// maxRank is the worst rank of segments [lo, hi).
func (t Track) maxRank(lo, hi int) rank {
	n := len(t.segs)
	var r rank
	if hi-lo <= 8 {
		for _, x := range t.tree[n+lo : n+hi] {
			r = max(r, x)
		}
		return r
	}
	for lo, hi = lo+n, hi+n; lo < hi; lo, hi = lo>>1, hi>>1 {
		if lo&1 == 1 {
			r = max(r, t.tree[lo])
			lo++
		}
		if hi&1 == 1 {
			hi--
			r = max(r, t.tree[hi])
		}
	}
	return r
}

// gallop returns the smallest i in [from, n) for which pred holds, or n;
// pred must be false then true over the indexes. It costs O(log d) where d
// is the distance from from to the answer, so a left-to-right sweep over
// the columns of a frame pays for the columns, not for the units.
func gallop(n, from int, pred func(int) bool) int {
	if from >= n || pred(from) {
		return min(from, n)
	}
	lo, step := from, 1 // pred(lo) is false
	for lo+step < n && !pred(lo+step) {
		lo += step
		step *= 2
	}
	hi := min(lo+step, n)
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return pred(lo + 1 + i) })
}

// covers reports whether one island of ws holds all of [a, b).
func covers(ws []state.Window, a, b time.Time) bool {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].Until.After(a) })
	return i < len(ws) && !ws[i].Since.After(a) && !ws[i].Until.Before(b)
}

// Covered is how much of w the applied (and stale, and outdated) units
// cover.
func (t Track) Covered(w state.Window) time.Duration {
	a, b, ws := w.Since, w.Until, t.applied
	if !b.After(a) {
		return 0
	}
	i := sort.Search(len(ws), func(i int) bool { return ws[i].Until.After(a) })
	j := i + sort.Search(len(ws)-i, func(k int) bool { return !ws[i+k].Since.Before(b) })
	if i >= j {
		return 0
	}
	secs := t.appliedSecs[j] - t.appliedSecs[i]
	if ws[i].Since.Before(a) {
		secs -= a.Sub(ws[i].Since).Seconds()
	}
	if ws[j-1].Until.After(b) {
		secs -= ws[j-1].Until.Sub(b).Seconds()
	}
	if secs >= float64(math.MaxInt64)/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(secs * 1e9))
}

// Applied reports whether the applied (and stale) units cover all of w
// without a hole.
func (t Track) Applied(w state.Window) bool {
	return w.Until.After(w.Since) && covers(t.applied, w.Since, w.Until)
}

// Frontier is where the gap-free applied run that holds from ends: the
// first instant at or after from that no applied unit covers. It is from
// itself when from is not applied. THROUGH is met when the frontier from the
// upstream's start reaches the downstream window's until.
func (t Track) Frontier(from time.Time) time.Time {
	ws := t.applied
	i := sort.Search(len(ws), func(i int) bool { return ws[i].Until.After(from) })
	if i < len(ws) && !ws[i].Since.After(from) {
		return ws[i].Until
	}
	return from
}

// exact returns the status of the unit whose window is exactly w.
func (t Track) exact(w state.Window) (Status, bool) {
	i := sort.Search(len(t.segs), func(i int) bool { return !t.segs[i].Since.Before(w.Since) })
	if i < len(t.segs) && t.segs[i].Window.Equal(w) {
		return t.segs[i].Status, true
	}
	return "", false
}
