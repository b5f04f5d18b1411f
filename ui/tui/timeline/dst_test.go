package timeline

import (
	"testing"

	"github.com/bollhav/bollhav/state"
)

// An hourly model in Europe/Stockholm from local 2026-03-28 00:00
// (= 03-27 23:00Z): 24 + 23 + 24 hourly units for the local days 03-28,
// 03-29 (clocks jump 02:00 → 03:00) and 03-30, all applied except the one
// at local 03-29 01:00 (= 03-29 00:00Z), which failed.
//
// At day zoom the columns are local days:
//
//	0: [03-27 23:00Z, 03-28 23:00Z) 24h   █
//	1: [03-28 23:00Z, 03-29 22:00Z) 23h   ✗
//	2: [03-29 22:00Z, 03-30 22:00Z) 24h   █
//	3, 4: after the range                 blank
//
// and local 23:59 on 03-29 (21:59Z) is still column 1, 22:00Z column 2.
func TestStockholmSpringForward(t *testing.T) {
	g := grid(t, "2026-03-28T00:00:00+01:00", "1h", "Europe/Stockholm")
	st := repeat(Applied, 24+23+24)
	st[24] = Failed
	tr := NewTrack(units(g, 0, st...), state.Window{})
	a := NewAxis(g, ZoomDay, g.Start, 5)
	for col, want := range []state.Window{
		win("2026-03-27T23:00:00Z", "2026-03-28T23:00:00Z"),
		win("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"),
		win("2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z"),
	} {
		if got := a.Range(col); !got.Equal(want) {
			t.Errorf("column %d = %s (%s), want %s", col, got, got.Duration(), want)
		}
	}
	if got, want := Strip(a, tr, state.Window{}, Styles{}), "█✗█  "; got != want {
		t.Errorf("strip = %q, want %q", got, want)
	}
	if c := a.Column(ts("2026-03-29T21:59:00Z")); c != 1 {
		t.Errorf("local 23:59 on 03-29 is column %d, want 1", c)
	}
	if c := a.Column(ts("2026-03-29T22:00:00Z")); c != 2 {
		t.Errorf("local midnight of 03-30 is column %d, want 2", c)
	}
	// The ruler of the hourly grain from local 03-29 00:00 (03-28 23:00Z):
	// local noon on 03-29 is 10:00Z, only 11 columns on (the lost hour);
	// local midnight of 03-30 is 22:00Z, column 23; noon, column 35.
	h := NewAxis(g, ZoomGrain, ts("2026-03-28T23:00:00Z"), 40)
	if got, want := Ruler(h, Styles{}), "Mar 29     12:00       Mar 30      12:00"; got != want {
		t.Errorf("ruler:\n got %q\nwant %q", got, want)
	}
}

// Autumn: local 2026-10-25 lasts 25 hours (02:00–03:00 happens twice), and
// its day column holds all 25 hourly units.
func TestStockholmFallBack(t *testing.T) {
	g := grid(t, "2026-10-24T00:00:00+02:00", "1h", "Europe/Stockholm")
	st := repeat(Applied, 24+25+24)
	st[24+24] = Blocked // the last hour of the long day: 10-25 23:00 local
	tr := NewTrack(units(g, 0, st...), state.Window{})
	a := NewAxis(g, ZoomDay, g.Start, 3)
	if got, want := a.Range(1), win("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"); !got.Equal(want) || got.Duration().Hours() != 25 {
		t.Errorf("the long day = %s, want %s", got, want)
	}
	if got, want := Strip(a, tr, state.Window{}, Styles{}), "█▒█"; got != want {
		t.Errorf("strip = %q, want %q", got, want)
	}
	// Weeks and months follow the local calendar too: the week of 10-25
	// starts on Monday 10-19 at local midnight (22:00Z the day before).
	if got, want := a.WithZoom(ZoomWeek, g.Start).Range(a.WithZoom(ZoomWeek, g.Start).Column(g.Start)),
		win("2026-10-18T22:00:00Z", "2026-10-25T23:00:00Z"); !got.Equal(want) {
		t.Errorf("the week = %s, want %s", got, want)
	}
}
