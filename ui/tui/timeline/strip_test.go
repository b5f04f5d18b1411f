package timeline

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/bollhav/bollhav/state"
)

// A fixed hourly model in UTC from 2026-03-10T00:00Z. Its units, hour by
// hour: 00 applied, 01 applied, 02 pending, 03 running, 04 blocked,
// 05 failed, 06 stale, 07 applied, 08 — no unit —, 09 applied. Its range
// is [00:00, 10:00).
//
// At grain zoom, 12 columns from 00:00, each column is one hour: the ten
// glyphs in order, hour 08 missing, then hours 10 and 11 blank (outside):
//
//	Unicode "██░▶▒✗~█·█  "
//	ASCII   "##->=X~#.#  "
func TestStripHourlyMixed(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	tr := NewTrack(units(g, 0, Applied, Applied, Pending, Running, Blocked, Failed, Stale, Applied, "", Applied),
		win("2026-03-10T00:00:00Z", "2026-03-10T10:00:00Z"))
	a := NewAxis(g, ZoomGrain, g.Start, 12)
	if got, want := Strip(a, tr, state.Window{}, Styles{}), "██░▶▒✗~█·█  "; got != want {
		t.Errorf("Unicode strip = %q, want %q", got, want)
	}
	if got, want := Strip(a, tr, state.Window{}, Styles{Glyphs: ASCII}), "##->=X~#.#  "; got != want {
		t.Errorf("ASCII strip = %q, want %q", got, want)
	}
}

// The same model's units, but only hours 00, 01 and 05 exist, in a range
// [00:00, 08:00): the holes at 02–04 and 06–07 are missing, not blank.
//
//	"██···█··"
//
// With a zero extent the range is the units' own span [00:00, 06:00), so
// 06 and 07 are outside: "██···█  ".
func TestStripGapsAreMissing(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	segs := units(g, 0, Applied, Applied, "", "", "", Applied)
	a := NewAxis(g, ZoomGrain, g.Start, 8)
	if got, want := Strip(a, NewTrack(segs, win("2026-03-10T00:00:00Z", "2026-03-10T08:00:00Z")), state.Window{}, Styles{}), "██···█··"; got != want {
		t.Errorf("strip = %q, want %q", got, want)
	}
	if got, want := Strip(a, NewTrack(segs, state.Window{}), state.Window{}, Styles{}), "██···█  "; got != want {
		t.Errorf("strip with the units' span as range = %q, want %q", got, want)
	}
	// A model with no units at all over its range is all missing.
	if got, want := Strip(a, NewTrack(nil, win("2026-03-10T02:00:00Z", "2026-03-10T04:00:00Z")), state.Window{}, Styles{}), "  ··    "; got != want {
		t.Errorf("empty model = %q, want %q", got, want)
	}
}

// Hourly units over four UTC days, drawn at day zoom (6 columns from
// 2026-03-10): each column is the worst of its 24 hours.
//
//	03-10: 24 applied                                → █ applied
//	03-11: applied, 05 running, 17 blocked           → ▒ blocked beats running
//	03-12: applied, 03 has no unit                   → · missing beats applied
//	03-13: 00–11 pending, 12 failed, 13–23 stale     → ✗ failed beats all
//	03-14, 03-15: after the range                    → blank
//
//	"█▒·✗  "
func TestStripDayZoomWorstOfHours(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	var st []Status
	st = append(st, repeat(Applied, 24)...)
	day2 := repeat(Applied, 24)
	day2[5], day2[17] = Running, Blocked
	st = append(st, day2...)
	day3 := repeat(Applied, 24)
	day3[3] = ""
	st = append(st, day3...)
	st = append(st, repeat(Pending, 12)...)
	st = append(st, Failed)
	st = append(st, repeat(Stale, 11)...)
	tr := NewTrack(units(g, 0, st...), win("2026-03-10T00:00:00Z", "2026-03-14T00:00:00Z"))
	a := NewAxis(g, ZoomDay, g.Start, 6)
	if got, want := Strip(a, tr, state.Window{}, Styles{}), "█▒·✗  "; got != want {
		t.Errorf("day strip = %q, want %q", got, want)
	}
	// The same units at week and month zoom: one bucket each holds all
	// four days, and failed is the worst.
	for _, z := range []Zoom{ZoomWeek, ZoomMonth} {
		a := NewAxis(g, z, g.Start, 3)
		if got, want := Strip(a, tr, state.Window{}, Styles{}), "✗  "; got != want {
			t.Errorf("%s strip = %q, want %q", z, got, want)
		}
	}
}

// Two units in one bucket show the one that comes first in Order, for
// every pair; a unit and a hole show the unit unless it is applied.
func TestWorstFollowsOrder(t *testing.T) {
	for i, worse := range Order {
		for _, better := range Order[i+1:] {
			var segs []Segment
			if worse != Missing {
				segs = append(segs, seg("2026-03-10T00:00:00Z", "2026-03-10T01:00:00Z", worse))
			}
			if better != Missing {
				segs = append(segs, seg("2026-03-10T01:00:00Z", "2026-03-10T02:00:00Z", better))
			}
			tr := NewTrack(segs, win("2026-03-10T00:00:00Z", "2026-03-10T02:00:00Z"))
			if got := tr.Worst(win("2026-03-10T00:00:00Z", "2026-03-10T02:00:00Z")); got != worse {
				t.Errorf("%s with %s shows %s, want %s", worse, better, got, worse)
			}
			if !Worse(worse, better) || Worse(better, worse) {
				t.Errorf("Worse(%s, %s) disagrees with Order", worse, better)
			}
		}
	}
}

// A flexible model sliced by a 1d UTC grid from 2026-03-10, with
// irregular units:
//
//	[03-10 00:00, 03-10 18:00) applied
//	[03-10 18:00, 03-12 06:00) applied   (crosses two day cells)
//	[03-12 06:00, 03-12 12:00) running
//	[03-12 12:00, 03-13 00:00) — no unit —
//	[03-13 00:00, 03-15 00:00) pending
//	[03-15 00:00, 03-15 03:00) failed
//	[03-15 03:00, 03-16 00:00) applied
//
// At grain zoom (8 day columns from 03-10), range [03-10, 03-16):
//
//	03-10 █, 03-11 █ (inside the long unit), 03-12 ▶ (running beats the
//	hole), 03-13 ░, 03-14 ░, 03-15 ✗, then two blanks: "██▶░░✗  "
func TestStripFlexibleIrregular(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1d", "UTC")
	segs := []Segment{
		seg("2026-03-15T03:00:00Z", "2026-03-16T00:00:00Z", Applied), // out of order on purpose
		seg("2026-03-10T00:00:00Z", "2026-03-10T18:00:00Z", Applied),
		seg("2026-03-10T18:00:00Z", "2026-03-12T06:00:00Z", Applied),
		seg("2026-03-13T00:00:00Z", "2026-03-15T00:00:00Z", Pending),
		seg("2026-03-12T06:00:00Z", "2026-03-12T12:00:00Z", Running),
		seg("2026-03-15T00:00:00Z", "2026-03-15T03:00:00Z", Failed),
	}
	tr := NewTrack(segs, win("2026-03-10T00:00:00Z", "2026-03-16T00:00:00Z"))
	a := NewAxis(g, ZoomGrain, g.Start, 8)
	if got, want := Strip(a, tr, state.Window{}, Styles{}), "██▶░░✗  "; got != want {
		t.Errorf("strip = %q, want %q", got, want)
	}
	if got := tr.Worst(win("2026-03-12T12:00:00Z", "2026-03-13T00:00:00Z")); got != Missing {
		t.Errorf("the hole shows %s, want missing", got)
	}
	if s, ok := tr.At(ts("2026-03-11T05:00:00Z")); !ok || !s.Window.Equal(win("2026-03-10T18:00:00Z", "2026-03-12T06:00:00Z")) {
		t.Errorf("At(03-11 05:00) = %v %v, want the long applied unit", s, ok)
	}
	if _, ok := tr.At(ts("2026-03-12T13:00:00Z")); ok {
		t.Error("At in the hole found a unit")
	}
	if got := tr.Overlapping(win("2026-03-12T00:00:00Z", "2026-03-13T00:00:00Z")); len(got) != 2 || got[1].Status != Running {
		t.Errorf("Overlapping(03-12) = %v, want the long applied unit and the running one", got)
	}
}

// Overlapping units (which the store should never hold) are split, the
// worse status winning where they overlap: applied [00,10) and failed
// [05,07) become applied [00,05), failed [05,07), applied [07,10).
func TestOverlapsSplitWorstWins(t *testing.T) {
	tr := NewTrack([]Segment{
		seg("2026-03-10T00:00:00Z", "2026-03-10T10:00:00Z", Applied),
		seg("2026-03-10T05:00:00Z", "2026-03-10T07:00:00Z", Failed),
		{Window: state.Window{Since: ts("2026-03-10T09:00:00Z"), Until: ts("2026-03-10T09:00:00Z")}, Status: Failed}, // empty: dropped
	}, state.Window{})
	want := []Segment{
		seg("2026-03-10T00:00:00Z", "2026-03-10T05:00:00Z", Applied),
		seg("2026-03-10T05:00:00Z", "2026-03-10T07:00:00Z", Failed),
		seg("2026-03-10T07:00:00Z", "2026-03-10T10:00:00Z", Applied),
	}
	got := tr.Overlapping(win("2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z"))
	if !slices.EqualFunc(got, want, func(a, b Segment) bool { return a.Window.Equal(b.Window) && a.Status == b.Status }) {
		t.Errorf("segments = %v, want %v", got, want)
	}
	if c := tr.Covered(win("2026-03-10T00:00:00Z", "2026-03-10T10:00:00Z")); c != 8*time.Hour {
		t.Errorf("covered = %s, want 8h (the failed part is not applied)", c)
	}
}

// The cursor's columns carry the Cursor style layered over the status
// style; the other cells stay plain. A flexible unit spanning three day
// cells puts the cursor on all three.
func TestStripCursor(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	tr := NewTrack(units(g, 0, repeat(Applied, 6)...), state.Window{})
	a := NewAxis(g, ZoomGrain, g.Start, 6)
	rev := lipgloss.NewStyle().Reverse(true)
	got := Strip(a, tr, g.WindowAt(2), Styles{Cursor: rev})
	if want := "██" + rev.Render("█") + "███"; got != want {
		t.Errorf("cursor strip = %q, want %q", got, want)
	}

	d := grid(t, "2026-03-10T00:00:00Z", "1d", "UTC")
	long := win("2026-03-11T00:00:00Z", "2026-03-14T00:00:00Z")
	tr = NewTrack([]Segment{{Window: long, Status: Pending}}, win("2026-03-10T00:00:00Z", "2026-03-15T00:00:00Z"))
	got = Strip(NewAxis(d, ZoomGrain, d.Start, 5), tr, long, Styles{Glyphs: ASCII, Cursor: rev})
	if want := "." + rev.Render("---") + "."; got != want {
		t.Errorf("cursor over a 3-day unit = %q, want %q", got, want)
	}
}

// CursorLine: ▲ under the cursor, the label right of it when it fits,
// else left of it; an off-screen cursor shows an edge arrow.
//
// Hourly axis, 20 columns from 00:00:
//
//	cursor 05:00: 5 blanks, ▲, a blank, "05:00 applied" (13) = 20
//	cursor 15:00: no room right (3), so " 15:00 applied ▲    "
//	cursor at 03-12 00:00 (column 48): ▸ at column 19, label left of it
func TestCursorLine(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	a := NewAxis(g, ZoomGrain, g.Start, 20)
	for _, c := range []struct {
		cursor state.Window
		label  string
		want   string
	}{
		{g.WindowAt(5), "05:00 applied", "     ▲ 05:00 applied"},
		{g.WindowAt(15), "15:00 applied", " 15:00 applied ▲    "},
		{g.WindowAt(48), "later", "             later ▸"},
		{g.WindowAt(-3), "earlier", "◂ earlier           "},
		{g.WindowAt(5), "a label far too long to fit beside it", "     ▲ a label far …"},
	} {
		if got := CursorLine(a, c.cursor, c.label, Styles{}); got != c.want {
			t.Errorf("cursor %s: %q, want %q", c.cursor, got, c.want)
		}
	}
}

// Legend at 80 columns: seven entries of glyph, space, word, two spaces
// apart (72 cells), padded to 80; at 40 only the entries that fit whole.
func TestLegend(t *testing.T) {
	want := "█ applied  ░ pending  ▶ running  ▒ blocked  ✗ failed  ~ stale  · missing"
	if got := Legend(Styles{}, 80); got != want+strings.Repeat(" ", 80-72) {
		t.Errorf("legend = %q", got)
	}
	// At 40: "# applied" 0–8, "- pending" 11–19, "> running" 22–30;
	// "= blocked" would end at 41, so it and the rest are left out.
	if got, want := Legend(Styles{Glyphs: ASCII}, 40), "# applied  - pending  > running"+strings.Repeat(" ", 9); got != want {
		t.Errorf("ASCII legend at 40 = %q, want %q", got, want)
	}
}

// A property check of the per-frame shortcuts (galloping, the range-max
// tree, the coverage islands) against the definition: random units with
// random holes and random statuses, random axes in random zones at every
// zoom, each cell compared with a brute-force scan of every unit.
func TestStripMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zones := []string{"UTC", "Europe/Stockholm", "America/New_York", "Australia/Lord_Howe"}
	statuses := append(slices.Clone(Order[:5]), Applied, Applied, Applied)
	for trial := range 200 {
		zone := zones[trial%len(zones)]
		g := grid(t, "2026-01-01T00:00:00Z", []string{"1h", "15m", "1d", "6h"}[trial%4], zone)
		var segs []Segment
		at := g.Start
		for range 500 + rng.IntN(1500) {
			d := time.Duration(1+rng.IntN(4*int(g.Interval.Nominal()/time.Minute))) * time.Minute
			if rng.IntN(10) > 0 {
				segs = append(segs, Segment{Window: state.Window{Since: at, Until: at.Add(d)}, Status: statuses[rng.IntN(len(statuses))]})
			}
			at = at.Add(d)
		}
		ext := state.Window{Since: g.Start.Add(time.Duration(rng.IntN(48)) * time.Hour), Until: at.Add(-time.Duration(rng.IntN(48)) * time.Hour)}
		tr := NewTrack(segs, ext)
		zs := Zooms(g.Interval)
		z := zs[rng.IntN(len(zs))]
		span := at.Sub(g.Start)
		a := NewAxis(g, z, g.Start.Add(time.Duration(rng.Int64N(int64(span)))-span/4), 40+rng.IntN(100))
		got := []rune(Strip(a, tr, state.Window{}, Styles{}))
		for c := range a.Width() {
			r := a.Range(c)
			want := bruteWorst(segs, ext, r)
			if got[c] != Unicode.Of(want) {
				t.Fatalf("trial %d (%s %s %s) column %d %s: got %q, want %s", trial, zone, g.Interval, z, c, r, got[c], want)
			}
		}
	}
}

// bruteWorst is Track.Worst by definition: the worst unit overlapping the
// part of r inside ext, missing if any instant of it has no unit.
func bruteWorst(segs []Segment, ext, r state.Window) Status {
	a, b := state.Later(r.Since, ext.Since), state.Earlier(r.Until, ext.Until)
	if !b.After(a) {
		return Outside
	}
	worst := Outside
	var held []state.Window
	for _, s := range segs {
		if s.Since.Before(b) && s.Until.After(a) {
			if Worse(s.Status, worst) {
				worst = s.Status
			}
			held = append(held, s.Window)
		}
	}
	if !state.NewIntervalSet(held...).Covers(state.Window{Since: a, Until: b}) && Worse(Missing, worst) {
		worst = Missing
	}
	return worst
}
