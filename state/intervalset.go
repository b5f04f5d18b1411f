package state

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// IntervalSet is a set of instants kept as sorted, disjoint windows that do
// not touch: [a,b) and [b,c) are stored as [a,c). It is a flexible model's
// coverage, where only the union of applied units matters, not how they were
// cut. The zero value is the empty set. Sets are values: every operation
// returns a new set and never shares the receiver's storage, so a set handed
// to another goroutine cannot change under it.
type IntervalSet struct {
	ws []Window // normalized: non-empty, UTC, sorted, ws[i].Until < ws[i+1].Since
}

// NewIntervalSet returns the union of ws; empty windows are dropped.
func NewIntervalSet(ws ...Window) IntervalSet {
	out := make([]Window, 0, len(ws))
	for _, w := range ws {
		if !w.Empty() {
			out = append(out, Window{Since: w.Since.UTC(), Until: w.Until.UTC()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	n := 0
	for _, w := range out {
		if n > 0 && !w.Since.After(out[n-1].Until) {
			out[n-1].Until = Later(out[n-1].Until, w.Until)
			continue
		}
		out[n] = w
		n++
	}
	if n == 0 {
		return IntervalSet{}
	}
	return IntervalSet{ws: out[:n:n]}
}

// Add returns the set with w added, merging every window w overlaps or
// touches.
func (s IntervalSet) Add(w Window) IntervalSet {
	if w.Empty() {
		return s.clone()
	}
	w = Window{Since: w.Since.UTC(), Until: w.Until.UTC()}
	i := s.firstUntilAtOrAfter(w.Since)                                                           // first window touching or after w
	j := i + sort.Search(len(s.ws)-i, func(k int) bool { return s.ws[i+k].Since.After(w.Until) }) // first window past w
	if i < j {
		w.Since = Earlier(w.Since, s.ws[i].Since)
		w.Until = Later(w.Until, s.ws[j-1].Until)
	}
	out := make([]Window, 0, len(s.ws)-(j-i)+1)
	out = append(out, s.ws[:i]...)
	out = append(out, w)
	out = append(out, s.ws[j:]...)
	return IntervalSet{ws: out}
}

// Union returns every instant in s or o, in one linear merge.
func (s IntervalSet) Union(o IntervalSet) IntervalSet {
	out := make([]Window, 0, len(s.ws)+len(o.ws))
	i, j := 0, 0
	for i < len(s.ws) || j < len(o.ws) {
		var w Window
		if j == len(o.ws) || (i < len(s.ws) && s.ws[i].Since.Before(o.ws[j].Since)) {
			w, i = s.ws[i], i+1
		} else {
			w, j = o.ws[j], j+1
		}
		if n := len(out); n > 0 && !w.Since.After(out[n-1].Until) {
			out[n-1].Until = Later(out[n-1].Until, w.Until)
			continue
		}
		out = append(out, w)
	}
	return fromNormalized(out)
}

// Subtract returns the instants of s not in o: how bulldozer and torch
// uncover a flexible model's coverage before re-covering it.
func (s IntervalSet) Subtract(o IntervalSet) IntervalSet {
	out := make([]Window, 0, len(s.ws))
	j := 0
	for _, w := range s.ws {
		for j < len(o.ws) && !o.ws[j].Until.After(w.Since) {
			j++ // o.ws[j] ends before w; it cannot touch later windows of s either
		}
		cur := w.Since
		for k := j; k < len(o.ws) && o.ws[k].Since.Before(w.Until); k++ {
			if o.ws[k].Since.After(cur) {
				out = append(out, Window{Since: cur, Until: o.ws[k].Since})
			}
			cur = Later(cur, o.ws[k].Until)
		}
		if cur.Before(w.Until) {
			out = append(out, Window{Since: cur, Until: w.Until})
		}
	}
	return fromNormalized(out)
}

// SubtractWindow returns the instants of s outside w.
func (s IntervalSet) SubtractWindow(w Window) IntervalSet {
	return s.Subtract(NewIntervalSet(w))
}

// Intersect returns the instants of s inside w: the coverage that matters to
// one run window.
func (s IntervalSet) Intersect(w Window) IntervalSet {
	if w.Empty() {
		return IntervalSet{}
	}
	var out []Window
	for i := s.firstUntilAfter(w.Since); i < len(s.ws) && s.ws[i].Since.Before(w.Until); i++ {
		out = append(out, Window{Since: Later(s.ws[i].Since, w.Since.UTC()), Until: Earlier(s.ws[i].Until, w.Until.UTC())})
	}
	return fromNormalized(out)
}

// Covers reports whether every instant of w is in s — the ENCAPSULATE test.
// Because the set is normalized a covered w lies inside a single window, so
// one binary search answers it. An empty w is trivially covered.
func (s IntervalSet) Covers(w Window) bool {
	if w.Empty() {
		return true
	}
	i := s.firstUntilAfter(w.Since)
	return i < len(s.ws) && !s.ws[i].Since.After(w.Since) && !s.ws[i].Until.Before(w.Until)
}

// Gaps returns, in order, the parts of w that s does not cover: the missing
// ranges a blocked_reason lists and the work a flexible model still has to do.
func (s IntervalSet) Gaps(w Window) []Window {
	if w.Empty() {
		return nil
	}
	var out []Window
	cur, end := w.Since.UTC(), w.Until.UTC()
	for i := s.firstUntilAfter(cur); i < len(s.ws) && s.ws[i].Since.Before(end); i++ {
		if s.ws[i].Since.After(cur) {
			out = append(out, Window{Since: cur, Until: s.ws[i].Since})
		}
		cur = Later(cur, s.ws[i].Until)
	}
	if cur.Before(end) {
		out = append(out, Window{Since: cur, Until: end})
	}
	return out
}

// Windows returns a copy of the set's windows, in order.
func (s IntervalSet) Windows() []Window {
	if len(s.ws) == 0 {
		return nil
	}
	return append([]Window(nil), s.ws...)
}

// Empty reports whether the set holds no instant.
func (s IntervalSet) Empty() bool { return len(s.ws) == 0 }

// Len is the number of disjoint windows (islands), not their total length.
func (s IntervalSet) Len() int { return len(s.ws) }

// Duration is the total absolute time the set covers, saturating at
// time.Duration's 292 years like time.Time.Sub.
func (s IntervalSet) Duration() time.Duration {
	var d time.Duration
	for _, w := range s.ws {
		if d += w.Duration(); d < 0 {
			return time.Duration(math.MaxInt64)
		}
	}
	return d
}

// Equal reports whether s and o hold the same instants.
func (s IntervalSet) Equal(o IntervalSet) bool {
	return slices.EqualFunc(s.ws, o.ws, Window.Equal)
}

// String prints the set as "{[a, b), [c, d)}", "{}" when empty.
func (s IntervalSet) String() string {
	parts := make([]string, len(s.ws))
	for i, w := range s.ws {
		parts[i] = w.String()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// firstUntilAfter is the index of the first window ending after t: the only
// candidate to contain t.
func (s IntervalSet) firstUntilAfter(t time.Time) int {
	return sort.Search(len(s.ws), func(i int) bool { return s.ws[i].Until.After(t) })
}

// firstUntilAtOrAfter is the index of the first window ending at or after t:
// the first one that overlaps or touches a window starting at t.
func (s IntervalSet) firstUntilAtOrAfter(t time.Time) int {
	return sort.Search(len(s.ws), func(i int) bool { return !s.ws[i].Until.Before(t) })
}

func (s IntervalSet) clone() IntervalSet { return fromNormalized(s.Windows()) }

func fromNormalized(ws []Window) IntervalSet {
	if len(ws) == 0 {
		return IntervalSet{}
	}
	return IntervalSet{ws: ws}
}

// Later returns the later of two instants.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Earlier returns the earlier of two instants.
func Earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
