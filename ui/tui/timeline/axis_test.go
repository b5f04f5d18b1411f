package timeline

import (
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// An hourly UTC axis, 80 columns from 2026-03-10T00:00Z:
//
//	05:30 on 03-10 lies in column 5, whose range is [05:00, 06:00)
//	23:00 on 03-09 is column -1 (one before the axis)
//	08:00 on 03-13 is column 3·24+8 = 80 (one after the axis)
//
// and every column, on and off the axis, maps back to itself from both
// ends of its range.
func TestColumnRangeRoundTrip(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	a := NewAxis(g, ZoomGrain, ts("2026-03-10T00:20:00Z"), 80) // start inside hour 0
	for _, c := range []struct {
		at  string
		col int
	}{{"2026-03-10T05:30:00Z", 5}, {"2026-03-09T23:00:00Z", -1}, {"2026-03-13T08:00:00Z", 80}, {"2026-03-10T00:00:00Z", 0}} {
		if got := a.Column(ts(c.at)); got != c.col {
			t.Errorf("Column(%s) = %d, want %d", c.at, got, c.col)
		}
	}
	if got, want := a.Range(5), win("2026-03-10T05:00:00Z", "2026-03-10T06:00:00Z"); !got.Equal(want) {
		t.Errorf("Range(5) = %s, want %s", got, want)
	}
	if got, want := a.Visible(), win("2026-03-10T00:00:00Z", "2026-03-13T08:00:00Z"); !got.Equal(want) {
		t.Errorf("Visible = %s, want %s", got, want)
	}
	for _, z := range Zooms(g.Interval) {
		a := NewAxis(grid(t, "2026-03-10T00:00:00Z", "1h", "Europe/Stockholm"), z, ts("2026-03-10T00:00:00Z"), 80)
		for col := -5; col < 85; col++ {
			r := a.Range(col)
			if a.Column(r.Since) != col || a.Column(r.Until.Add(-time.Nanosecond)) != col || a.Column(r.Until) != col+1 {
				t.Fatalf("%s: column %d's range %s does not map back", z, col, r)
			}
		}
	}
}

// Follow keeps the cursor margin columns inside the edges, scrolling as
// little as it can; Center puts it in the middle. Width 10, margin 2:
// a cursor at column 12 moves to 7 (= 10-1-2), one at -3 moves to 2, one
// at 5 does not move the axis.
func TestFollowCenter(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	a := NewAxis(g, ZoomGrain, g.Start, 10)
	for _, c := range []struct{ at, want int }{{12, 7}, {-3, 2}, {5, 5}, {8, 7}, {1, 2}} {
		cur := a.Range(c.at).Since
		if got := a.Follow(cur, 2).Column(cur); got != c.want {
			t.Errorf("Follow from column %d: now at %d, want %d", c.at, got, c.want)
		}
	}
	if got := a.Follow(a.Range(5).Since, 2).Visible(); !got.Equal(a.Visible()) {
		t.Errorf("Follow of a visible cursor scrolled to %s", got)
	}
	if got := a.Center(ts("2026-03-20T07:00:00Z")).Column(ts("2026-03-20T07:00:00Z")); got != 5 {
		t.Errorf("Center: cursor at %d, want 5", got)
	}
	if got := a.Scroll(-24).Range(0); !got.Equal(win("2026-03-09T00:00:00Z", "2026-03-09T01:00:00Z")) {
		t.Errorf("Scroll(-24) starts at %s", got)
	}
	if got := a.Resize(4); got.Width() != 4 || !got.Range(0).Equal(a.Range(0)) {
		t.Errorf("Resize(4): width %d, first %s", got.Width(), got.Range(0))
	}
}

// WithZoom keeps the anchor in its column: an hourly axis of 80 columns
// from 03-10 with the cursor at 03-11 10:00 (column 34); at day zoom the
// cursor's day, 03-11, is column 34, and back at grain the cursor's hour
// is column 34 again.
func TestWithZoomKeepsAnchor(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	a := NewAxis(g, ZoomGrain, g.Start, 80)
	cur := ts("2026-03-11T10:00:00Z")
	if a.Column(cur) != 34 {
		t.Fatalf("cursor column = %d", a.Column(cur))
	}
	d := a.WithZoom(ZoomDay, cur)
	if got := d.Column(cur); got != 34 {
		t.Errorf("day zoom: cursor in column %d, want 34", got)
	}
	if got := d.Range(34); !got.Equal(win("2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z")) {
		t.Errorf("day zoom: column 34 = %s", got)
	}
	if got := d.WithZoom(ZoomGrain, cur).Column(cur); got != 34 {
		t.Errorf("back to grain: cursor in column %d, want 34", got)
	}
	// Weeks start on Monday; 2026-03-11 is a Wednesday.
	if got := a.WithZoom(ZoomWeek, cur).Range(34); !got.Equal(win("2026-03-09T00:00:00Z", "2026-03-16T00:00:00Z")) {
		t.Errorf("week zoom: the cursor's week = %s", got)
	}
	if got := a.WithZoom(ZoomMonth, cur).Range(34); !got.Equal(win("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")) {
		t.Errorf("month zoom: the cursor's month = %s", got)
	}
}

// Zooms offers only buckets longer than a window.
func TestZooms(t *testing.T) {
	for iv, want := range map[string][]Zoom{
		"15m": {ZoomGrain, ZoomDay, ZoomWeek, ZoomMonth},
		"1h":  {ZoomGrain, ZoomDay, ZoomWeek, ZoomMonth},
		"6h":  {ZoomGrain, ZoomDay, ZoomWeek, ZoomMonth},
		"1d":  {ZoomGrain, ZoomWeek, ZoomMonth},
		"1w":  {ZoomGrain, ZoomMonth},
		"1mo": {ZoomGrain},
		"1y":  {ZoomGrain},
	} {
		if got := Zooms(state.MustInterval(iv)); !slices.Equal(got, want) {
			t.Errorf("Zooms(%s) = %v, want %v", iv, got, want)
		}
	}
}

// The zero Axis and a zero model grid do not panic: zero columns draw
// empty lines, a zero grid falls back to UTC days.
func TestZeroAxis(t *testing.T) {
	var a Axis
	if Strip(a, Track{}, state.Window{}, Styles{}) != "" || Ruler(a, Styles{}) != "" || a.Width() != 0 {
		t.Error("zero axis drew something")
	}
	z := NewAxis(state.Grid{}, ZoomGrain, ts("2026-03-10T05:00:00Z"), 3)
	if got := z.Range(0); !got.Equal(win("2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z")) {
		t.Errorf("zero grid: column 0 = %s, want the UTC day", got)
	}
	if got := Strip(z, Track{}, state.Window{}, Styles{}); got != "   " {
		t.Errorf("zero track = %q, want blanks", got)
	}
}
