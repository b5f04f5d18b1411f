package engine

import (
	"iter"
	"slices"

	"github.com/bollhav/bollhav/state"
)

// Windows is a plan's list of windows in window order, kept as runs of
// consecutive grid windows instead of one value per window: a discover over
// ten million pending minutes is one run, so a plan's size follows the
// number of gaps in the backlog, not the backlog (issue 21). A window that
// is not a window of its grid is kept on its own.
//
// The zero Windows is empty. Two Windows built from the same windows, added
// in the same order, are equal (reflect.DeepEqual): ApplyPlan compares plans
// that way.
type Windows struct {
	runs []windowRun
	n    int
}

// windowRun is either the grid windows lying entirely inside hull (grid not
// nil; count of them, skipped calendar days left out) or one window, hull
// itself (grid nil, count 1).
type windowRun struct {
	grid  *state.Grid
	hull  state.Window
	count int
}

// WindowsOf keeps ws as they are, one run each: for the few windows of an
// outdated reset or a timeless existence row, and for tests.
func WindowsOf(ws ...state.Window) Windows {
	var out Windows
	for _, w := range ws {
		out.Add(nil, w)
	}
	return out
}

// Len is the number of windows.
func (ws Windows) Len() int { return ws.n }

// Runs is the number of runs the windows are kept in: what a plan's size
// in memory grows with.
func (ws Windows) Runs() int { return len(ws.runs) }

// Add appends w, which must not come before the last window added. With a
// grid, a window of that grid joins the run it continues.
func (ws *Windows) Add(g *state.Grid, w state.Window) {
	if g != nil && !w.IsZero() && g.WindowContaining(w.Since).Equal(w) {
		ws.addGrid(g, w, 1)
		return
	}
	ws.runs = append(ws.runs, windowRun{hull: w, count: 1})
	ws.n++
}

// AddGrid appends every window of g lying entirely inside r.
func (ws *Windows) AddGrid(g *state.Grid, r state.Window) {
	from, to := g.Span(r)
	if from >= to {
		return
	}
	first, last := g.WindowAt(from), g.WindowAt(to-1)
	n := to - from
	if g.Interval.Calendar() {
		// A calendar day can be skipped (a zone leaving out a date): its
		// window is empty and is no unit. There are few calendar windows
		// in any range, so counting them one by one is cheap.
		n = 0
		for range g.WindowsSeq(r) {
			n++
		}
	}
	if n == 0 {
		return
	}
	ws.addGrid(g, state.Window{Since: first.Since, Until: last.Until}, n)
}

func (ws *Windows) addGrid(g *state.Grid, hull state.Window, n int) {
	if k := len(ws.runs) - 1; k >= 0 {
		last := &ws.runs[k]
		if last.grid != nil && sameGrid(*last.grid, *g) && last.hull.Until.Equal(hull.Since) {
			last.hull.Until = hull.Until
			last.count += n
			ws.n += n
			return
		}
	}
	ws.runs = append(ws.runs, windowRun{grid: g, hull: hull, count: n})
	ws.n += n
}

func sameGrid(a, b state.Grid) bool {
	return a.Start.Equal(b.Start) && a.Interval == b.Interval && a.Location.String() == b.Location.String()
}

// All yields the windows in order, one at a time, building none ahead.
func (ws Windows) All() iter.Seq[state.Window] {
	return func(yield func(state.Window) bool) {
		for _, r := range ws.runs {
			if r.grid == nil {
				if !yield(r.hull) {
					return
				}
				continue
			}
			for _, w := range r.grid.WindowsSeq(r.hull) {
				if !yield(w) {
					return
				}
			}
		}
	}
}

// List builds every window: only for outputs that list them one by one
// (and tests); the plan's own outputs use Len, Spans and Bounds.
func (ws Windows) List() []state.Window {
	if ws.n == 0 {
		return nil
	}
	out := make([]state.Window, 0, ws.n)
	for w := range ws.All() {
		out = append(out, w)
	}
	return out
}

// Batches yields the windows in slices of at most size, reusing one
// buffer: what a prefill of millions of windows inserts from.
func (ws Windows) Batches(size int) iter.Seq[[]state.Window] {
	return func(yield func([]state.Window) bool) {
		buf := make([]state.Window, 0, min(size, ws.n))
		for w := range ws.All() {
			buf = append(buf, w)
			if len(buf) == size {
				if !yield(buf) {
					return
				}
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			yield(buf)
		}
	}
}

// Bounds is the hull of the windows: the earliest since and the latest
// until; zero when empty.
func (ws Windows) Bounds() state.Window {
	if len(ws.runs) == 0 {
		return state.Window{}
	}
	b := ws.runs[0].hull
	for _, r := range ws.runs[1:] {
		b = state.Hull(b, r.hull)
	}
	return b
}

// Spans merges the windows into gap-free spans in time order, leaving out
// zero windows (a timeless model's existence row), without building them.
func (ws Windows) Spans() []state.Window {
	hulls := make([]state.Window, 0, len(ws.runs))
	for _, r := range ws.runs {
		hulls = append(hulls, r.hull)
	}
	return SpansOf(hulls)
}

// SpansOf merges windows into gap-free spans in time order; zero windows (a
// timeless model's existence row) have no span.
func SpansOf(ws []state.Window) []state.Window {
	var in []state.Window
	for _, w := range ws {
		if !w.Empty() {
			in = append(in, w)
		}
	}
	slices.SortFunc(in, compareWindows)
	var out []state.Window
	for _, w := range in {
		if n := len(out); n > 0 && !w.Since.After(out[n-1].Until) {
			if w.Until.After(out[n-1].Until) {
				out[n-1].Until = w.Until
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// Covered is the windows lying entirely inside w, in order.
func (ws Windows) Covered(w state.Window) Windows {
	var out Windows
	for _, r := range ws.runs {
		if r.grid == nil {
			if w.Covers(r.hull) {
				out.Add(nil, r.hull)
			}
			continue
		}
		if c, ok := clip(r.hull, w); ok {
			out.AddGrid(r.grid, c)
		}
	}
	return out
}

// MergeWindows is the windows of a and b together, in window order (each
// run placed by its first window): the UI's plan over several requests.
func MergeWindows(a, b Windows) Windows {
	runs := append(slices.Clone(a.runs), b.runs...)
	slices.SortStableFunc(runs, func(x, y windowRun) int { return x.hull.Since.Compare(y.hull.Since) })
	var out Windows
	for _, r := range runs {
		if r.grid == nil {
			out.Add(nil, r.hull)
			continue
		}
		out.addGrid(r.grid, r.hull, r.count)
	}
	return out
}

// gridWindows keeps ws (in window order) as runs of g's windows.
func gridWindows(g *state.Grid, ws []state.Window) Windows {
	var out Windows
	for _, w := range ws {
		out.Add(g, w)
	}
	return out
}

// clone is ws with runs of its own, so appending to one leaves the other.
func (ws Windows) clone() Windows {
	return Windows{runs: slices.Clone(ws.runs), n: ws.n}
}
