package timeline

import (
	"time"
)

// tickStep is one spacing the ruler may label at: every minutes minutes of
// the local day, every days days from a local midnight (7 starts weeks on
// Monday), or every months months from a 1st (12 and more label years).
type tickStep struct {
	minutes, days, months int
}

// tickSteps are tried finest first; the ruler takes the first whose labels
// are far enough apart not to touch.
var tickSteps = []tickStep{
	{minutes: 5}, {minutes: 10}, {minutes: 15}, {minutes: 30},
	{minutes: 60}, {minutes: 120}, {minutes: 180}, {minutes: 360}, {minutes: 720},
	{days: 1}, {days: 7},
	{months: 1}, {months: 3}, {months: 6},
	{months: 12}, {months: 24}, {months: 60}, {months: 120}, {months: 300}, {months: 600}, {months: 1200},
}

// gap is the columns a label of this step takes, plus a space: "Mar 10"
// and "15:04" take 6, "2026-04" 7, "2027" 4.
func (s tickStep) gap() int {
	switch {
	case s.minutes > 0 || s.days > 0:
		return 7
	case s.months < 12:
		return 8
	}
	return 5
}

func (s tickStep) nominal() time.Duration {
	switch {
	case s.minutes > 0:
		return time.Duration(s.minutes) * time.Minute
	case s.days > 0:
		return time.Duration(s.days) * 24 * time.Hour
	}
	return time.Duration(s.months) * 30 * 24 * time.Hour
}

// label formats a tick: the time of day, the date at a local midnight
// (so a run of hour labels still says which day it is), the month, the
// year.
func (s tickStep) label(t time.Time) string {
	switch {
	case s.minutes > 0 && (t.Hour() != 0 || t.Minute() != 0):
		return t.Format("15:04")
	case s.minutes > 0 || s.days > 0:
		return t.Format("Jan 2")
	case s.months < 12:
		return t.Format("2006-01")
	}
	return t.Format("2006")
}

type tick struct {
	at    time.Time
	label string
}

// ticks returns the labelled instants inside the axis's visible range, in
// order, at the finest spacing whose labels do not touch.
func ticks(a Axis) []tick {
	vis := a.Visible()
	w := a.Width()
	if w == 0 {
		return nil
	}
	// The average column, not the grain's nominal length, so that a grid
	// of irregular days or months spaces its labels by what is on screen.
	cell := vis.Duration() / time.Duration(w)
	if cell <= 0 {
		return nil
	}
	// Cells wider than a column are whole buckets: a label inside one
	// would name a time the cell does not tell apart.
	var least time.Duration
	if a.Scale() > 1 {
		least = a.grid.Interval.Nominal()
	}
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if s.nominal() >= time.Duration(s.gap())*cell && s.nominal() >= least {
			step = s
			break
		}
	}
	loc := a.Location()
	from := vis.Since.In(loc)
	y, m, d := from.Date()
	var at func(k int) time.Time
	k0 := 0
	switch {
	case step.minutes > 0:
		// Start one step before the visible range's wall clock, not at
		// midnight, so fine steps do not walk the whole morning first.
		k0 = max(0, (from.Hour()*60+from.Minute())/step.minutes-1)
		at = func(k int) time.Time { return time.Date(y, m, d, 0, k*step.minutes, 0, 0, loc) }
	case step.days > 0:
		if step.days == 7 {
			d -= (int(from.Weekday()) + 6) % 7 // back to Monday
		}
		at = func(k int) time.Time { return time.Date(y, m, d+k*step.days, 0, 0, 0, 0, loc) }
	default:
		mi := y*12 + int(m) - 1
		mi -= ((mi % step.months) + step.months) % step.months
		at = func(k int) time.Time { return time.Date(0, time.Month(mi+k*step.months+1), 1, 0, 0, 0, 0, loc) }
	}
	var out []tick
	var last time.Time
	// The spacing bounds the labels by the width; the cap guards against
	// a zone whose wall clock repeats.
	for k := k0; k < k0+4*w+64; k++ {
		t := at(k)
		if !t.Before(vis.Until) {
			break
		}
		if t.Before(vis.Since) || (len(out) > 0 && !t.After(last)) {
			continue
		}
		last = t
		out = append(out, tick{at: t, label: step.label(t.In(loc))})
	}
	return out
}
