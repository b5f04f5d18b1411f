package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func mustGrid(t testing.TB, start string, iv string, zone string) Grid {
	t.Helper()
	g, err := NewGrid(utc(start), MustInterval(iv), mustLoad(t, zone))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNewGridRefuses(t *testing.T) {
	cases := []struct {
		start string
		iv    Interval
		zone  string
		why   []string
	}{
		{"2026-01-01T00:00:00Z", Interval{}, "UTC", []string{"not set"}},
		{"2026-01-01T00:00:00Z", Interval{N: -1, Unit: Day}, "UTC", []string{"out of range"}},
		{"2026-01-01T00:00:00Z", Interval{N: 1, Unit: 0}, "UTC", []string{"unknown unit"}},
		{"2026-01-31T00:00:00Z", MustInterval("1mo"), "UTC", []string{"1mo grid cannot start on day 31", "2026-01-31 00:00:00 in UTC", "31st", "day 1..28"}},
		{"2026-01-29T12:00:00Z", MustInterval("3mo"), "UTC", []string{"day 29", "29th"}},
		// 23:30 UTC on the 28th is already the 29th in Stockholm.
		{"2026-01-28T23:30:00Z", MustInterval("1mo"), "Europe/Stockholm", []string{"day 29", "2026-01-29 00:30:00 in Europe/Stockholm"}},
		{"2028-02-29T00:00:00Z", MustInterval("1y"), "UTC", []string{"29 February"}},
	}
	for _, c := range cases {
		_, err := NewGrid(utc(c.start), c.iv, mustLoad(t, c.zone))
		if err == nil {
			t.Errorf("NewGrid(%s, %v, %s) succeeded, want an error", c.start, c.iv, c.zone)
			continue
		}
		for _, w := range c.why {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("NewGrid(%s, %v, %s) error = %q, want it to say %q", c.start, c.iv, c.zone, err, w)
			}
		}
	}
	accepted := []struct{ start, iv, zone string }{
		{"2026-01-28T00:00:00Z", "1mo", "UTC"},
		{"2026-01-31T23:30:00Z", "1mo", "Europe/Stockholm"}, // 1 Feb 00:30 local
		{"2026-01-31T00:00:00Z", "1y", "UTC"},               // every year has a 31 January
		{"2026-01-31T00:00:00Z", "1d", "UTC"},
		{"2026-01-01T06:45:00Z", "1d", "UTC"}, // any time of day anchors a day grid
		{"2026-01-01T00:07:00Z", "15m", "UTC"},
	}
	for _, c := range accepted {
		g, err := NewGrid(utc(c.start), MustInterval(c.iv), mustLoad(t, c.zone))
		if err != nil {
			t.Errorf("NewGrid(%s, %s, %s): %v", c.start, c.iv, c.zone, err)
		} else if g.Start.Location() != time.UTC {
			t.Errorf("NewGrid kept Start in %v, want UTC", g.Start.Location())
		}
	}
	if g, err := NewGrid(utc("2026-01-01T00:00:00Z"), MustInterval("1d"), nil); err != nil || g.Location != time.UTC {
		t.Errorf("NewGrid with nil location = %v, %v; want UTC", g.Location, err)
	}
}

func TestGridWindowAt(t *testing.T) {
	cases := []struct {
		name              string
		start, iv, zone   string
		k                 int
		since, until      string
		hours             float64 // 0: do not check
		wantLocalMidnight bool
	}{
		{"1d UTC", "2026-01-01T00:00:00Z", "1d", "UTC", 0, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", 24, false},
		{"1d UTC before start", "2026-01-01T00:00:00Z", "1d", "UTC", -1, "2025-12-31T00:00:00Z", "2026-01-01T00:00:00Z", 24, false},
		{"1d Stockholm normal", "2026-03-27T23:00:00Z", "1d", "Europe/Stockholm", 0, "2026-03-27T23:00:00Z", "2026-03-28T23:00:00Z", 24, true},
		{"1d Stockholm spring", "2026-03-27T23:00:00Z", "1d", "Europe/Stockholm", 1, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 23, true},
		{"1d Stockholm after spring", "2026-03-27T23:00:00Z", "1d", "Europe/Stockholm", 2, "2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z", 24, true},
		{"1d Stockholm autumn", "2026-10-22T22:00:00Z", "1d", "Europe/Stockholm", 2, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 25, true},
		{"1d Stockholm far", "2026-01-01T23:00:00Z", "1d", "Europe/Stockholm", 270, "2026-09-28T22:00:00Z", "2026-09-29T22:00:00Z", 24, true},
		{"1d New York spring", "2026-03-07T05:00:00Z", "1d", "America/New_York", 1, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", 23, true},
		// 06:00 local anchors the grid: the cut stays at 06:00 local across DST.
		{"1d Stockholm 06:00", "2026-03-28T05:00:00Z", "1d", "Europe/Stockholm", 1, "2026-03-29T04:00:00Z", "2026-03-30T04:00:00Z", 24, false},
		// 02:30 does not exist on 2026-03-29; that cut moves to 03:30 CEST.
		{"1d Stockholm 02:30 gap", "2026-03-27T01:30:00Z", "1d", "Europe/Stockholm", 2, "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z", 23, false},
		// Grid started on the first of two 02:30s of the autumn night keeps it.
		{"1d Stockholm 02:30 twice", "2026-10-25T00:30:00Z", "1d", "Europe/Stockholm", 0, "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", 25, false},
		{"1w UTC", "2026-01-05T00:00:00Z", "1w", "UTC", 1, "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z", 168, false},
		{"1w Stockholm spring", "2026-03-22T23:00:00Z", "1w", "Europe/Stockholm", 0, "2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z", 167, true},
		{"1mo Feb", "2026-01-01T00:00:00Z", "1mo", "UTC", 1, "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", 28 * 24, false},
		{"1mo leap Feb", "2026-01-01T00:00:00Z", "1mo", "UTC", 25, "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z", 29 * 24, false},
		{"1mo from 28th no drift", "2026-01-28T00:00:00Z", "1mo", "UTC", 13, "2027-02-28T00:00:00Z", "2027-03-28T00:00:00Z", 28 * 24, false},
		{"1mo Stockholm March", "2025-12-31T23:00:00Z", "1mo", "Europe/Stockholm", 2, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", 31*24 - 1, true},
		{"3mo quarters", "2026-01-01T00:00:00Z", "3mo", "UTC", 3, "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z", 92 * 24, false},
		{"1y", "2026-01-01T00:00:00Z", "1y", "UTC", 2, "2028-01-01T00:00:00Z", "2029-01-01T00:00:00Z", 366 * 24, false},
		{"1y from 31 Jan", "2026-01-31T00:00:00Z", "1y", "UTC", -1, "2025-01-31T00:00:00Z", "2026-01-31T00:00:00Z", 365 * 24, false},
		{"15m", "2026-01-01T00:00:00Z", "15m", "UTC", 96, "2026-01-02T00:00:00Z", "2026-01-02T00:15:00Z", 0.25, false},
		{"15m before start", "2026-01-01T00:00:00Z", "15m", "UTC", -1, "2025-12-31T23:45:00Z", "2026-01-01T00:00:00Z", 0.25, false},
		// Hours are absolute: the local 02:00 hour that does not exist is simply not cut.
		{"1h Stockholm spring", "2026-03-28T23:00:00Z", "1h", "Europe/Stockholm", 2, "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", 1, false},
		{"1h Stockholm autumn", "2026-10-24T22:00:00Z", "1h", "Europe/Stockholm", 3, "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z", 1, false},
	}
	for _, c := range cases {
		g := mustGrid(t, c.start, c.iv, c.zone)
		got := g.WindowAt(c.k)
		if want := win(c.since, c.until); !got.Equal(want) {
			t.Errorf("%s: WindowAt(%d) = %v, want %v", c.name, c.k, got, want)
			continue
		}
		if c.hours != 0 && got.Duration() != time.Duration(c.hours*float64(time.Hour)) {
			t.Errorf("%s: window lasts %v, want %vh", c.name, got.Duration(), c.hours)
		}
		if c.wantLocalMidnight {
			for _, b := range []time.Time{got.Since, got.Until} {
				if l := b.In(g.Location); l.Hour() != 0 || l.Minute() != 0 {
					t.Errorf("%s: bound %v is not local midnight", c.name, l)
				}
			}
		}
	}
}

func TestGridIndex(t *testing.T) {
	cases := []struct {
		start, iv, zone string
		at              string
		want            int
	}{
		{"2026-01-01T00:00:00Z", "15m", "UTC", "2026-01-01T00:00:00Z", 0},
		{"2026-01-01T00:00:00Z", "15m", "UTC", "2026-01-01T00:14:59.999999999Z", 0},
		{"2026-01-01T00:00:00Z", "15m", "UTC", "2026-01-01T00:15:00Z", 1},
		{"2026-01-01T00:00:00Z", "15m", "UTC", "2025-12-31T23:59:00Z", -1},
		{"2026-01-01T00:00:00Z", "15m", "UTC", "2025-12-31T23:45:00Z", -1},
		{"2026-01-01T00:00:00Z", "15m", "UTC", "2025-12-31T23:44:59Z", -2},
		// 30 years of 15-minute windows: 10958 days × 96.
		{"2000-01-01T00:00:00Z", "15m", "UTC", "2030-01-01T00:00:00Z", 1051968},
		{"2000-01-01T00:00:00Z", "15m", "Europe/Stockholm", "2029-12-31T23:59:59Z", 1051967},
		{"2026-03-28T23:00:00Z", "1h", "Europe/Stockholm", "2026-03-29T22:00:00Z", 23}, // local day of 23 hours
		{"2026-10-24T22:00:00Z", "1h", "Europe/Stockholm", "2026-10-25T23:00:00Z", 25}, // and of 25
		{"2026-03-27T23:00:00Z", "1d", "Europe/Stockholm", "2026-03-29T21:59:59Z", 1},
		{"2026-03-27T23:00:00Z", "1d", "Europe/Stockholm", "2026-03-29T22:00:00Z", 2},
		{"2026-10-22T22:00:00Z", "1d", "Europe/Stockholm", "2026-10-25T22:30:00Z", 2}, // 23:30 CET, still the 25th
		{"2026-10-22T22:00:00Z", "1d", "Europe/Stockholm", "2026-10-25T23:00:00Z", 3},
		{"2026-01-01T00:00:00Z", "1d", "UTC", "1999-12-31T12:00:00Z", -9498},
		{"2026-01-05T00:00:00Z", "1w", "UTC", "2026-01-04T23:59:59Z", -1},
		{"2026-01-05T00:00:00Z", "2w", "UTC", "2026-02-02T00:00:00Z", 2},
		{"2026-01-01T00:00:00Z", "1mo", "UTC", "2026-02-28T23:59:59Z", 1},
		{"2026-01-01T00:00:00Z", "1mo", "UTC", "2026-03-01T00:00:00Z", 2},
		{"2026-01-15T12:00:00Z", "1mo", "UTC", "2026-03-15T11:59:59Z", 1}, // time of day matters too
		{"2026-01-15T12:00:00Z", "1mo", "UTC", "2025-12-15T12:00:00Z", -1},
		{"2026-01-15T12:00:00Z", "1mo", "UTC", "2025-12-15T11:00:00Z", -2},
		{"2025-12-31T23:00:00Z", "1mo", "Europe/Stockholm", "2026-03-31T21:59:59Z", 2},
		{"2025-12-31T23:00:00Z", "1mo", "Europe/Stockholm", "2026-03-31T22:00:00Z", 3},
		{"2026-01-01T00:00:00Z", "1y", "UTC", "2525-06-01T00:00:00Z", 499},
		{"2026-07-01T00:00:00Z", "1y", "UTC", "2027-06-30T23:59:59Z", 0},
		{"2026-07-01T00:00:00Z", "1y", "UTC", "1900-01-01T00:00:00Z", -127},
	}
	for _, c := range cases {
		g := mustGrid(t, c.start, c.iv, c.zone)
		at := utc(c.at)
		if got := g.Index(at); got != c.want {
			t.Errorf("%v: Index(%s) = %d, want %d", g, c.at, got, c.want)
		}
		if w := g.WindowContaining(at); !w.Contains(at) || !w.Equal(g.WindowAt(c.want)) {
			t.Errorf("%v: WindowContaining(%s) = %v, want window %d", g, c.at, w, c.want)
		}
	}
}

func TestGridAlign(t *testing.T) {
	day := mustGrid(t, "2026-01-01T00:00:00Z", "1d", "UTC")
	sthlm := mustGrid(t, "2025-12-31T23:00:00Z", "1d", "Europe/Stockholm")
	month := mustGrid(t, "2026-01-01T00:00:00Z", "1mo", "UTC")
	cases := []struct {
		g    Grid
		w    Window
		want string // "" when aligned
	}{
		{day, win("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"), ""},
		{day, win("2026-01-03T00:00:00Z", "2026-02-03T00:00:00Z"), ""},
		{day, win("2026-01-01T05:00:00Z", "2026-01-02T00:00:00Z"),
			"window [2026-01-01T05:00:00Z, 2026-01-02T00:00:00Z) is not aligned to the 1d grid from 2026-01-01T00:00:00Z (UTC): since lies between 2026-01-01T00:00:00Z and 2026-01-02T00:00:00Z"},
		{day, win("2026-01-01T00:00:00Z", "2026-01-02T12:00:00Z"),
			"window [2026-01-01T00:00:00Z, 2026-01-02T12:00:00Z) is not aligned to the 1d grid from 2026-01-01T00:00:00Z (UTC): until lies between 2026-01-02T00:00:00Z and 2026-01-03T00:00:00Z"},
		{day, win("2026-01-01T05:00:00Z", "2026-01-01T06:00:00Z"),
			"window [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z) is not aligned to the 1d grid from 2026-01-01T00:00:00Z (UTC): since lies between 2026-01-01T00:00:00Z and 2026-01-02T00:00:00Z; until lies between 2026-01-01T00:00:00Z and 2026-01-02T00:00:00Z"},
		{day, win("2025-12-30T00:00:00Z", "2026-01-02T00:00:00Z"),
			"window [2025-12-30T00:00:00Z, 2026-01-02T00:00:00Z) is not aligned to the 1d grid from 2026-01-01T00:00:00Z (UTC): since is before the grid's start 2026-01-01T00:00:00Z"},
		{day, win("2025-12-30T06:00:00Z", "2026-01-02T06:00:00Z"),
			"window [2025-12-30T06:00:00Z, 2026-01-02T06:00:00Z) is not aligned to the 1d grid from 2026-01-01T00:00:00Z (UTC): since is before the grid's start 2026-01-01T00:00:00Z; until lies between 2026-01-02T00:00:00Z and 2026-01-03T00:00:00Z"},
		// UTC midnight is 01:00 in Stockholm: off that grid, whose bounds are local midnights.
		{sthlm, win("2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z"),
			"window [2026-03-29T00:00:00Z, 2026-03-30T00:00:00Z) is not aligned to the 1d grid from 2025-12-31T23:00:00Z (Europe/Stockholm): since lies between 2026-03-28T23:00:00Z and 2026-03-29T22:00:00Z; until lies between 2026-03-29T22:00:00Z and 2026-03-30T22:00:00Z"},
		{sthlm, win("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"), ""},
		{month, win("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"), ""},
		{month, win("2026-02-01T00:00:00Z", "2026-03-31T00:00:00Z"),
			"window [2026-02-01T00:00:00Z, 2026-03-31T00:00:00Z) is not aligned to the 1mo grid from 2026-01-01T00:00:00Z (UTC): until lies between 2026-03-01T00:00:00Z and 2026-04-01T00:00:00Z"},
	}
	for _, c := range cases {
		err := c.g.Align(c.w)
		if c.want == "" {
			if err != nil || !c.g.Aligned(c.w) {
				t.Errorf("%v: Align(%v) = %v, want aligned", c.g, c.w, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: Align(%v) =\n  %v\nwant\n  %s", c.g, c.w, err, c.want)
		}
		var ae *AlignmentError
		if !errors.As(err, &ae) || !ae.Window.Equal(c.w) || c.g.Aligned(c.w) {
			t.Errorf("Align(%v) error %v is not an *AlignmentError for the window", c.w, err)
		}
	}
	wrapped := fmt.Errorf("model mart.daily: %w", day.Align(win("2026-01-01T05:00:00Z", "2026-01-02T00:00:00Z")))
	var ae *AlignmentError
	if !errors.As(wrapped, &ae) || !ae.SinceBetween.Equal(win("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")) || !ae.UntilBetween.Empty() || ae.BeforeStart {
		t.Errorf("errors.As through a wrap = %+v", ae)
	}
	err := day.Align(Window{Since: utc("2026-01-02T00:00:00Z"), Until: utc("2026-01-02T00:00:00Z")})
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("Align(empty) = %v, want a plain empty-window error", err)
	}
}
