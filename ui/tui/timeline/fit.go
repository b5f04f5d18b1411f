package timeline

import (
	"time"

	"github.com/bollhav/bollhav/state"
)

// Fitting a range to the width: the model view opens on the time its
// windows cover, not on a default span, so that six daily windows fill the
// line instead of six of its 110 columns, and a range too long for the
// line at its grain is drawn in coarser cells rather than cut off.

// FitMargin is the blank columns Fit keeps at each edge of a fitted range
// (when the width allows), so its first and last cells do not touch the
// frame and read as the ends of the range.
const FitMargin = 1

// Buckets is how many buckets of zoom z the range rng overlaps on the
// model's grid: the columns it needs at scale 1.
func Buckets(model state.Grid, z Zoom, rng state.Window) int {
	if !rng.Until.After(rng.Since) {
		return 0
	}
	g := buckets(model, z)
	return g.Index(rng.Until.Add(-time.Nanosecond)) - g.Index(rng.Since) + 1
}

// FitAt returns the axis width columns wide at zoom z that shows all of
// rng: each bucket as many columns wide as lets the range fill the width
// less FitMargin at each side (at most MaxScale), the range's first bucket
// FitMargin columns in; what the whole columns leave over stays blank at
// the right, after the range, where time runs on. ok is
// false when rng needs more columns than that at z, or is empty; the axis
// then starts at rng's first bucket, one column per bucket, and the caller
// scrolls it.
func FitAt(model state.Grid, z Zoom, rng state.Window, width int) (a Axis, ok bool) {
	g := buckets(model, z)
	if width <= 0 {
		return newAxis(z, model, g, 1, g.Index(rng.Since), width), false
	}
	n := Buckets(model, z, rng)
	room := width - 2*FitMargin
	if room < 1 || n > room {
		room = width // too narrow for margins, or for the range at all
	}
	if n == 0 || n > room {
		return newAxis(z, model, g, 1, g.Index(rng.Since), width), false
	}
	k := min(room/n, MaxScale)
	pad := min(FitMargin, width-n*k)
	return newAxis(z, model, g, k, g.Index(rng.Since)*k-pad, width), true
}

// Fit returns the axis at the finest of zooms (finest first, as Zooms
// lists them) at which rng fits the width, fitted by FitAt: a range too
// long for its grain is drawn in coarser cells, never cut off. When it
// fits at none, ok is false and the axis is the coarsest zoom's, one
// column per bucket, starting at rng's first bucket; an empty rng (nothing
// to fit) gets the finest zoom's.
func Fit(model state.Grid, zooms []Zoom, rng state.Window, width int) (a Axis, ok bool) {
	if len(zooms) == 0 {
		zooms = []Zoom{ZoomGrain}
	}
	if rng.Empty() {
		return FitAt(model, zooms[0], rng, width)
	}
	for _, z := range zooms {
		if a, ok := FitAt(model, z, rng, width); ok {
			return a, true
		}
	}
	return FitAt(model, zooms[len(zooms)-1], rng, width)
}
