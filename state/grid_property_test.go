package state

import (
	"math/rand/v2"
	"testing"
	"time"
)

// propertyZones are the calendars the grid properties run in: no DST, a
// European and an American DST, a half-hour offset, a half-hour DST shift and
// a zone that skipped a whole day.
var propertyZones = []string{"UTC", "Europe/Stockholm", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Apia"}

// randomGrid draws a grid whose start lies in 2010..2030 and whose count is
// small, so that a linear walk over a few hundred windows stays cheap.
func randomGrid(t testing.TB, r *rand.Rand, zones []*time.Location) Grid {
	for {
		unit := TimeUnit(1 + r.IntN(6))
		n := 1 + r.IntN(3)
		if unit == Minute {
			n = []int{1, 5, 15, 45, 90}[r.IntN(5)]
		}
		start := time.Unix(utc("2010-01-01T00:00:00Z").Unix()+r.Int64N(20*365*86400), 0)
		if r.IntN(2) == 0 {
			start = start.Truncate(time.Hour) // often on the hour, to hit DST instants exactly
		}
		g, err := NewGrid(start, Interval{N: n, Unit: unit}, zones[r.IntN(len(zones))])
		if err == nil {
			return g
		}
	}
}

// linearIndex finds t's window by walking WindowAt from 0 one step at a time:
// the brute-force definition of Index.
func linearIndex(g Grid, t time.Time) int {
	k := 0
	for g.WindowAt(k).Since.After(t) {
		k--
	}
	for !g.WindowAt(k).Until.After(t) {
		k++
	}
	return k
}

func TestGridIndexAgainstLinearWalk(t *testing.T) {
	var zones []*time.Location
	for _, z := range propertyZones {
		zones = append(zones, mustLoad(t, z))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 3000; n++ {
		g := randomGrid(t, r, zones)
		span := int64(g.Interval.Nominal() / time.Second * 150)
		at := g.Start.Add(time.Duration(r.Int64N(2*span)-span) * time.Second)
		if r.IntN(4) == 0 {
			at = g.WindowAt(r.IntN(300) - 150).Since // exactly on a boundary
		}
		want := linearIndex(g, at)
		if got := g.Index(at); got != want {
			t.Fatalf("%v: Index(%v) = %d, linear walk says %d (window %v)", g, at, got, want, g.WindowAt(want))
		}
		w := g.WindowContaining(at)
		if !w.Contains(at) {
			t.Fatalf("%v: WindowContaining(%v) = %v does not contain it", g, at, w)
		}
		if !g.OnGrid(w.Since) || !g.OnGrid(w.Until) || g.Index(w.Since) != want {
			t.Fatalf("%v: bounds of %v are not on the grid", g, w)
		}
		if got := g.Aligned(w); got != !w.Since.Before(g.Start) {
			t.Fatalf("%v: Aligned(%v) = %v", g, w, got)
		}
	}
}

// TestGridCalendarWallClock checks calendar windows without AddTo: bound k of
// a calendar grid is the start's wall clock on the date k units later,
// wherever that wall clock exists.
func TestGridCalendarWallClock(t *testing.T) {
	var zones []*time.Location
	for _, z := range propertyZones {
		zones = append(zones, mustLoad(t, z))
	}
	r := rand.New(rand.NewPCG(7, 8))
	checked := 0
	for n := 0; n < 2000; n++ {
		g := randomGrid(t, r, zones)
		if !g.Interval.Calendar() {
			continue
		}
		k := r.IntN(400) - 200
		s := g.Start.In(g.Location)
		y, m, d := s.Date()
		switch g.Interval.Unit {
		case Day:
			d += k * g.Interval.N
		case Week:
			d += 7 * k * g.Interval.N
		case Month:
			m += time.Month(k * g.Interval.N)
		case Year:
			y += k * g.Interval.N
		}
		date := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // the calendar date, free of any zone
		want := time.Date(date.Year(), date.Month(), date.Day(), s.Hour(), s.Minute(), s.Second(), s.Nanosecond(), g.Location)
		if l := want.In(g.Location); l.Day() != date.Day() || l.Hour() != s.Hour() || l.Minute() != s.Minute() {
			continue // that wall clock does not exist on that date (a DST gap or a skipped day)
		}
		if got := g.WindowAt(k).Since; k != 0 && !got.Equal(want) {
			t.Fatalf("%v: bound %d = %v, want %v", g, k, got.In(g.Location), want)
		}
		checked++
	}
	if checked < 1000 {
		t.Fatalf("only %d calendar bounds checked; the generator drifted", checked)
	}
}

// TestGridSpanAgainstLinearWalk checks Span and Windows against filtering the
// windows around a random range one by one.
func TestGridSpanAgainstLinearWalk(t *testing.T) {
	zones := []*time.Location{time.UTC, mustLoad(t, "Europe/Stockholm"), mustLoad(t, "America/New_York")}
	r := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 500; n++ {
		g := randomGrid(t, r, zones)
		span := int64(g.Interval.Nominal() / time.Second * 40)
		a := g.Start.Add(time.Duration(r.Int64N(2*span)-span) * time.Second)
		rg := Window{Since: a.UTC(), Until: a.Add(time.Duration(1+r.Int64N(span)) * time.Second).UTC()}
		var want []Window
		for k := max(0, linearIndex(g, rg.Since)-1); !g.WindowAt(k).Since.After(rg.Until); k++ {
			if w := g.WindowAt(k); rg.Covers(w) && !w.Empty() {
				want = append(want, w)
			}
		}
		if got := g.Windows(rg); !windowsEqual(got, want) {
			t.Fatalf("%v: Windows(%v) = %v, want %v", g, rg, got, want)
		}
	}
}
