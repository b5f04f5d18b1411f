package timeline

import (
	"cmp"
	"sort"
	"time"

	"github.com/bollhav/bollhav/state"
)

// Zoom is how much time one column of the axis holds.
type Zoom int

// The zoom levels, finest first. Day, week and month buckets follow the
// calendar of the model's time zone: a day in Europe/Stockholm is 23 or 25
// hours at the DST changes, a week starts on Monday (ISO 8601), a month on
// its 1st, all at local midnight.
const (
	// ZoomGrain is one column per window of the model's grid (for a
	// flexible model, per chunk of its slicing grid).
	ZoomGrain Zoom = iota
	ZoomDay
	ZoomWeek
	ZoomMonth
)

var zoomNames = [...]string{"grain", "day", "week", "month"}

// String names the zoom for a status bar: "grain", "day", "week", "month".
func (z Zoom) String() string {
	if z >= 0 && int(z) < len(zoomNames) {
		return zoomNames[z]
	}
	return "zoom(?)"
}

var zoomInterval = [...]state.Interval{ZoomDay: {N: 1, Unit: state.Day}, ZoomWeek: {N: 1, Unit: state.Week}, ZoomMonth: {N: 1, Unit: state.Month}}

// Zooms lists the zoom levels worth offering for a model of this grain,
// finest first: ZoomGrain, then each calendar bucket longer than one window
// (an hourly model gets all four, a daily one grain, week and month, a
// monthly one only grain).
func Zooms(grain state.Interval) []Zoom {
	zs := []Zoom{ZoomGrain}
	for z := ZoomDay; z <= ZoomMonth; z++ {
		if zoomInterval[z].Nominal() > grain.Nominal() {
			zs = append(zs, z)
		}
	}
	return zs
}

// weekAnchor is a Monday: day, week and month buckets are counted from its
// local midnight, so weeks start on Mondays and months on the 1st.
var weekAnchor = [3]int{2001, 1, 1}

// buckets is the grid whose windows are the columns at zoom z.
func buckets(model state.Grid, z Zoom) state.Grid {
	loc := cmp.Or(model.Location, time.UTC)
	if z == ZoomGrain && model.Interval.N > 0 {
		return model
	}
	if z < ZoomDay || z > ZoomMonth {
		z = ZoomDay // a zero model grid, or a zoom this package does not know
	}
	start := time.Date(weekAnchor[0], time.Month(weekAnchor[1]), weekAnchor[2], 0, 0, 0, 0, loc)
	return state.Grid{Start: start.UTC(), Interval: zoomInterval[z], Location: loc}
}

// Axis maps the columns of a line to time. At scale 1 each column is one
// bucket of the zoom's grid, [Range(c).Since, Range(c).Until); at scale k
// each bucket is one cell k columns wide, so a short range fills the line.
// Positions (Column: the ruler's labels, the cursor) then fall inside a
// cell, its time cut into k equal parts, and each column shows its own part
// (Part): a cell reads its mix, as the grain's columns do — one failed hour
// of a day k columns wide is one column or so, not the whole day, and the
// days of a week before the model's start are blank. It is an immutable
// value; moving it returns a new one. The zero Axis is zero columns wide.
type Axis struct {
	zoom  Zoom
	model state.Grid
	grid  state.Grid
	// scale is the columns per bucket (at least 1); first is column 0's
	// place in the grid's columns: bucket first/scale, part first%scale.
	scale int
	first int
	// bounds are the width+1 column boundaries of the visible columns,
	// computed once per axis so that a frame does no calendar arithmetic.
	bounds []time.Time
}

// MaxScale bounds the columns one bucket may take (and keeps the
// arithmetic that cuts a month into parts far from overflowing).
const MaxScale = 1000

// NewAxis returns an axis width columns wide over a model's grid at zoom z,
// one column per bucket, whose column 0 holds start. model is the grid the
// model's units lie on (a flexible model's slicing grid); its Location sets
// the calendar the day, week and month buckets and the ruler follow. A zero
// model grid falls back to day buckets in UTC.
func NewAxis(model state.Grid, z Zoom, start time.Time, width int) Axis {
	g := buckets(model, z)
	return newAxis(z, model, g, 1, g.Index(start), width)
}

func newAxis(z Zoom, model, grid state.Grid, scale, first, width int) Axis {
	scale = max(1, min(scale, MaxScale))
	a := Axis{zoom: z, model: model, grid: grid, scale: scale, first: first}
	if width > 0 {
		a.bounds = make([]time.Time, width+1)
		for i := range a.bounds {
			a.bounds[i] = a.colStart(first + i)
		}
	}
	return a
}

// colStart is where grid column g (bucket g/scale, part g%scale) begins:
// the bucket's since plus its length times part/scale, rounded up, so
// that Column's division finds exactly the column whose start is the
// latest at or before an instant.
func (a Axis) colStart(g int) time.Time {
	b, part := floorDiv(g, a.scale)
	w := a.grid.WindowAt(b)
	if part == 0 {
		return w.Since
	}
	d, k := w.Duration(), time.Duration(a.scale)
	return w.Since.Add((d*time.Duration(part) + k - 1) / k)
}

// gridColumn is the grid column holding t.
func (a Axis) gridColumn(t time.Time) int {
	b := a.grid.Index(t)
	col := b * a.scale
	if a.scale > 1 {
		w := a.grid.WindowAt(b)
		if d := w.Duration(); d > 0 {
			col += int(t.Sub(w.Since) * time.Duration(a.scale) / d)
		}
	}
	return col
}

// floorDiv is q, r with n = q·k + r and 0 <= r < k.
func floorDiv(n, k int) (q, r int) {
	q, r = n/k, n%k
	if r < 0 {
		q, r = q-1, r+k
	}
	return q, r
}

// Width is the number of columns.
func (a Axis) Width() int { return max(len(a.bounds)-1, 0) }

// Zoom is the axis's zoom level.
func (a Axis) Zoom() Zoom { return a.zoom }

// Scale is the columns one bucket takes, at least 1.
func (a Axis) Scale() int { return max(a.scale, 1) }

// Location is the time zone the buckets and the ruler follow.
func (a Axis) Location() *time.Location {
	return cmp.Or(a.grid.Location, time.UTC)
}

// Visible is the time the columns show, from column 0's since to the last
// column's until: the range to load units for.
func (a Axis) Visible() state.Window {
	if a.Width() == 0 {
		return state.Window{}
	}
	return state.Window{Since: a.bounds[0], Until: a.bounds[len(a.bounds)-1]}
}

// Column is the column whose bucket holds t. It is negative before the
// axis and Width() or more after it, so a caller can tell which way t lies.
func (a Axis) Column(t time.Time) int {
	if w := a.Width(); w > 0 && !t.Before(a.bounds[0]) && t.Before(a.bounds[w]) {
		return sort.Search(w, func(i int) bool { return a.bounds[i+1].After(t) })
	}
	return a.gridColumn(t) - a.first
}

// Range is the cell column col belongs to: its bucket of the zoom's grid,
// which at scale k the bucket's k columns share (the cursor and the ruler
// move by it). Columns off the axis continue the same grid.
func (a Axis) Range(col int) state.Window {
	if a.Scale() == 1 && col >= 0 && col < a.Width() {
		return state.Window{Since: a.bounds[col], Until: a.bounds[col+1]}
	}
	return a.grid.WindowAt(a.bucket(col))
}

// bucket is the index in the zoom's grid of column col's bucket.
func (a Axis) bucket(col int) int {
	b, _ := floorDiv(a.first+col, a.Scale())
	return b
}

// Part is the time column col covers: its whole bucket at scale 1, its
// k-th of the bucket at scale k (Range for a column off the axis). What a
// column shows is the worst status of its part alone.
func (a Axis) Part(col int) state.Window {
	if col >= 0 && col < a.Width() {
		return state.Window{Since: a.bounds[col], Until: a.bounds[col+1]}
	}
	return a.Range(col)
}

// ranks calls fn with each column of a and the rank t has over the
// column's part (Part), carrying its hint from column to column: the walk
// a strip and Present both make.
func (a Axis) ranks(t Track, fn func(col int, r rank)) {
	hint := 0
	var r rank
	for c := range a.Width() {
		r, hint = t.rank(a.bounds[c], a.bounds[c+1], hint)
		fn(c, r)
	}
}

// columns returns the first and last column of the cells that w overlaps,
// which may lie off the axis on either side; ok is false for an empty w.
func (a Axis) columns(w state.Window) (c0, c1 int, ok bool) {
	if !w.Until.After(w.Since) {
		return 0, 0, false
	}
	c0, c1 = a.Column(w.Since), a.Column(w.Until.Add(-1))
	if k := a.Scale(); k > 1 {
		_, r0 := floorDiv(a.first+c0, k)
		_, r1 := floorDiv(a.first+c1, k)
		c0, c1 = c0-r0, c1+k-1-r1
	}
	return c0, c1, true
}

// Scroll moves the axis n columns later in time (earlier when n < 0).
func (a Axis) Scroll(n int) Axis {
	if n == 0 {
		return a
	}
	return newAxis(a.zoom, a.model, a.grid, a.scale, a.first+n, a.Width())
}

// Follow scrolls as little as possible so that the column holding t lies
// at least margin columns inside either edge (margin is capped at half the
// width): call it after every cursor move.
func (a Axis) Follow(t time.Time, margin int) Axis {
	w := a.Width()
	if w == 0 {
		return a
	}
	margin = max(0, min(margin, (w-1)/2))
	switch c := a.Column(t); {
	case c < margin:
		return a.Scroll(c - margin)
	case c > w-1-margin:
		return a.Scroll(c - (w - 1 - margin))
	}
	return a
}

// WithZoom switches to zoom z, one column per bucket, keeping anchor
// (usually the cursor) in the column it is in now, or in the middle when it
// is off-screen.
func (a Axis) WithZoom(z Zoom, anchor time.Time) Axis {
	w := a.Width()
	col := a.Column(anchor)
	if col < 0 || col >= w {
		col = w / 2
	}
	g := buckets(a.model, z)
	return newAxis(z, a.model, g, 1, g.Index(anchor)-col, w)
}
