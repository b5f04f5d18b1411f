package state

import (
	"math"
	"time"
)

// Limits that keep Index finite far outside any real calendar, where the
// calendar arithmetic itself overflows.
const (
	maxIndexEstimate = 1 << 50
	maxIndexStep     = 1 << 40
)

// Index returns the k whose window holds t: Start+k·Interval <= t <
// Start+(k+1)·Interval, negative before Start. It costs a few calendar
// additions whatever the distance — a 15m grid over 30 years is a million
// windows, and a linear walk per lookup would not do. The calendar estimate
// is exact up to the time of day; a short gallop and bisection then settle
// DST and month-length differences. On the zero Grid it returns 0.
func (g Grid) Index(t time.Time) int {
	if !g.valid() {
		return 0
	}
	k := g.estimate(t)
	var lo, hi int // invariant: boundary(lo) <= t < boundary(hi)
	if g.boundary(k).After(t) {
		hi = k
		for step := 1; ; step *= 2 {
			lo = hi - step
			if !g.boundary(lo).After(t) {
				break
			}
			if hi = lo; step >= maxIndexStep {
				return lo // beyond every calendar; t is not representable here
			}
		}
	} else {
		lo = k
		for step := 1; ; step *= 2 {
			hi = lo + step
			if g.boundary(hi).After(t) {
				break
			}
			if lo = hi; step >= maxIndexStep {
				return lo
			}
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if g.boundary(mid).After(t) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// estimate guesses Index(t) from whole calendar units between Start and t in
// the grid's zone, ignoring the time of day; it is off by at most one.
func (g Grid) estimate(t time.Time) int {
	n := int64(g.Interval.N)
	var units, per int64
	switch g.Interval.Unit {
	case Minute, Hour:
		units, per = subSat(t.Unix(), g.Start.Unix()), 60*n
		if g.Interval.Unit == Hour {
			per = 3600 * n
		}
	default:
		lt, ls := t.In(g.location()), g.Start.In(g.location())
		switch g.Interval.Unit {
		case Day, Week:
			units, per = civilDay(lt)-civilDay(ls), n
			if g.Interval.Unit == Week {
				per = 7 * n
			}
		case Month:
			units, per = int64(lt.Year()-ls.Year())*12+int64(lt.Month()-ls.Month()), n
		case Year:
			units, per = int64(lt.Year()-ls.Year()), n
		}
	}
	k := floorDiv(units, per)
	return int(max(-maxIndexEstimate, min(maxIndexEstimate, k)))
}

// civilDay numbers t's calendar date (in t's own location) in days since
// 1970-01-01, so that two dates subtract to whole days regardless of DST.
func civilDay(t time.Time) int64 {
	y, m, d := t.Date()
	return floorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix(), 86400)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func subSat(a, b int64) int64 {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}
