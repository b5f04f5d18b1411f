package state

import "iter"

// Span returns the positions [from, to) of the grid windows lying entirely
// inside r and not before Start. It is O(1)-ish, so a caller can count or
// page through a million windows without building them.
func (g Grid) Span(r Window) (from, to int) {
	if r.Empty() || !g.valid() {
		return 0, 0
	}
	from = g.Index(r.Since)
	if g.boundary(from).Before(r.Since) {
		from++
	}
	from = max(from, 0)
	to = max(g.Index(r.Until), from)
	return from, to
}

// WindowsSeq yields, in order, each grid window lying entirely inside r with
// its position k, skipping the empty windows of a skipped calendar day. Each
// bound is computed from Start, never by adding to the previous window.
func (g Grid) WindowsSeq(r Window) iter.Seq2[int, Window] {
	return func(yield func(int, Window) bool) {
		from, to := g.Span(r)
		if from >= to {
			return
		}
		since := g.boundary(from)
		for k := from; k < to; k++ {
			until := g.boundary(k + 1)
			if until.After(since) && !yield(k, Window{Since: since, Until: until}) {
				return
			}
			since = until
		}
	}
}

// Windows returns the grid windows lying entirely inside r, in order: the
// units a fixed model prefills for a range. Partial windows at either end are
// left out, because a fixed model never runs a fraction of a window.
func (g Grid) Windows(r Window) []Window {
	from, to := g.Span(r)
	if from >= to {
		return nil
	}
	ws := make([]Window, 0, to-from)
	for _, w := range g.WindowsSeq(r) {
		ws = append(ws, w)
	}
	return ws
}
