package timeline

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// Six daily windows on a 119-column line: the margin leaves 117 columns,
// 117/6 = 19 columns a day (114 in all), the first day starting in column
// 1 (FitMargin), so columns 1–114 hold the days and 0 and 115–118 are
// blank. The strip draws each day 19 times and the cursor's day 19 wide.
func TestFitSixDaysFillTheLine(t *testing.T) {
	g := grid(t, "2026-11-26T00:00:00Z", "1d", "UTC")
	rng := win("2026-11-26T00:00:00Z", "2026-12-02T00:00:00Z")
	a, ok := Fit(g, Zooms(g.Interval), rng, 119)
	if !ok || a.Zoom() != ZoomGrain || a.Scale() != 19 {
		t.Fatalf("Fit = zoom %s scale %d ok %v, want grain, 19 columns a day", a.Zoom(), a.Scale(), ok)
	}
	if c := a.Column(rng.Since); c != 1 {
		t.Errorf("the first day starts in column %d, want 1", c)
	}
	if c := a.Column(rng.Until); c != 115 {
		t.Errorf("the range ends at column %d, want 115 (1 + 6·19)", c)
	}
	tr := NewTrack(units(g, 0, Applied, Applied, Applied, Applied, Blocked, Blocked), rng)
	cursor := g.WindowAt(4)
	strip := Strip(a, tr, cursor, Styles{})
	want := " " + strings.Repeat("█", 4*19) + strings.Repeat("▒", 2*19) + strings.Repeat(" ", 4)
	if strip != want {
		t.Errorf("strip\n%q\nwant\n%q", strip, want)
	}
	line := CursorLine(a, cursor, "", Styles{})
	if got := strings.Count(line, "▲"); got != 19 || strings.Index(line, "▲") != 1+4*19*len(" ") {
		t.Errorf("the cursor marks %d columns from byte %d, want 19 from column 77: %q", got, strings.Index(line, "▲"), line)
	}
	// Every column inside the range shows its own day: Range is the cell.
	for col := 1; col < 115; col++ {
		if got, want := a.Range(col), g.WindowAt((col-1)/19); !got.Equal(want) {
			t.Fatalf("Range(%d) = %s, want day %s", col, got, want)
		}
	}
}

// A range longer than the line at its grain zooms out: 147 hours do not
// fit 117 columns, so the hourly model is drawn in days (Nov 26 to Dec 2
// 03:00 is 7 days: 117/7 = 16 columns a day); 200 days of hours fit
// neither hours nor days (200 > 78) but weeks (29 of them, 2 columns each);
// ten years fit nothing, and the coarsest zoom comes back one column per
// month, not fitted.
func TestFitZoomsOutWhenTheRangeDoesNotFit(t *testing.T) {
	g := grid(t, "2026-11-26T00:00:00Z", "1h", "UTC")
	cases := []struct {
		rng   string
		width int
		zoom  Zoom
		scale int
		ok    bool
	}{
		{"2026-12-02T03:00:00Z", 119, ZoomDay, 16, true},
		{"2026-11-30T00:00:00Z", 119, ZoomGrain, 1, true}, // 96 hours ≤ 117
		{"2027-06-14T00:00:00Z", 80, ZoomWeek, 2, true},   // 200 days: Mon Nov 23 to Mon Jun 14 is 29 weeks
		{"2036-11-26T00:00:00Z", 80, ZoomMonth, 1, false},
	}
	for _, c := range cases {
		rng := win("2026-11-26T00:00:00Z", c.rng)
		a, ok := Fit(g, Zooms(g.Interval), rng, c.width)
		if a.Zoom() != c.zoom || a.Scale() != c.scale || ok != c.ok || a.Width() != c.width {
			t.Errorf("Fit to %s at %d: zoom %s scale %d ok %v width %d, want %s %d %v", c.rng, c.width,
				a.Zoom(), a.Scale(), ok, a.Width(), c.zoom, c.scale, c.ok)
		}
		if ok && (a.Column(rng.Since) < 0 || a.Column(rng.Until.Add(-1)) >= c.width) {
			t.Errorf("Fit to %s: the range runs from column %d to %d, off a %d-column line", c.rng,
				a.Column(rng.Since), a.Column(rng.Until.Add(-1)), c.width)
		}
	}
	// FitAt at a zoom the range does not fit: one column per hour from the
	// range's first hour, for the caller to scroll.
	a, ok := FitAt(g, ZoomGrain, win("2026-11-26T00:00:00Z", "2026-12-02T03:00:00Z"), 119)
	if ok || a.Scale() != 1 || a.Column(g.Start) != 0 {
		t.Errorf("FitAt grain: ok %v scale %d start column %d, want not fitted, 1, 0", ok, a.Scale(), a.Column(g.Start))
	}
	// Nothing to fit: the finest zoom.
	if a, ok := Fit(g, Zooms(g.Interval), state.Window{}, 80); ok || a.Zoom() != ZoomGrain {
		t.Errorf("an empty range: zoom %s ok %v, want grain, not fitted", a.Zoom(), ok)
	}
}

// At scale k a column is a k-th of its bucket for positions: Column maps
// each instant to the column whose part holds it, and back, also across a
// 23-hour DST day (Europe/Stockholm, 2026-03-29) and off the axis.
func TestScaledColumnsRoundTrip(t *testing.T) {
	g := grid(t, "2026-03-27T00:00:00+01:00", "1d", "Europe/Stockholm")
	a, ok := FitAt(g, ZoomGrain, win("2026-03-27T00:00:00+01:00", "2026-03-31T00:00:00+02:00"), 50)
	if !ok || a.Scale() != 12 {
		t.Fatalf("FitAt: ok %v scale %d, want 12 columns a day (48/4)", ok, a.Scale())
	}
	for col := -30; col < 80; col++ {
		since := a.Column(a.colStart(a.first + col))
		if since != col {
			t.Fatalf("column %d starts at an instant Column maps to %d", col, since)
		}
	}
	// Noon of the 23-hour day is 11 hours in: part floor(11·12/23) = 5.
	day := g.WindowAt(2)
	noon := ts("2026-03-29T12:00:00+02:00") // 11 hours into the day
	if got, want := a.Column(noon)-a.Column(day.Since), 11*12/23; got != want {
		t.Errorf("noon of the short day is %d columns in, want %d", got, want)
	}
}
