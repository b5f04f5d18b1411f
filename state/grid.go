package state

import (
	"cmp"
	"fmt"
	"time"
)

// Grid is the fixed chunking of a temporal model: window k is
// [Start + k·Interval, Start + (k+1)·Interval), counted in Location's
// calendar. It is the identity of a fixed model's state — one row per grid
// window — and the slicing of a flexible model's work. Build it with NewGrid,
// which refuses grids that would drift; the zero Grid has only empty windows.
type Grid struct {
	// Start is the since of window 0, in UTC. For calendar grains its wall
	// clock in Location anchors every window (a 1d grid from 06:00 local
	// cuts at 06:00 local every day, whatever the UTC offset).
	Start    time.Time
	Interval Interval
	// Location is the calendar days, weeks, months and years are counted in.
	// Minute and hour grids step absolute time and ignore it.
	Location *time.Location
}

// NewGrid validates a chunking and returns its grid. It refuses a zero or
// malformed interval, a month grid starting after the 28th and a year grid
// starting on 29 February: those days do not exist in every month or year, so
// the windows would slide (Jan 31 + 1 month is Mar 3) instead of repeating.
// Any time of day is allowed; nil loc means UTC.
func NewGrid(start time.Time, iv Interval, loc *time.Location) (Grid, error) {
	if loc == nil {
		loc = time.UTC
	}
	if err := iv.check(); err != nil {
		return Grid{}, fmt.Errorf("invalid grid: %w", err)
	}
	local := start.In(loc)
	switch {
	case iv.Unit == Month && local.Day() > 28:
		return Grid{}, fmt.Errorf("a %s grid cannot start on day %d of the month (%s in %s): not every month has a %s, so the windows would drift (Jan 31 + 1 month is Mar 3); start on day 1..28, usually the 1st",
			iv, local.Day(), local.Format("2006-01-02 15:04:05"), loc, ordinal(local.Day()))
	case iv.Unit == Year && local.Month() == time.February && local.Day() == 29:
		return Grid{}, fmt.Errorf("a %s grid cannot start on 29 February (%s in %s): most years have no such day, so the windows would drift to 1 March; start on another day",
			iv, local.Format("2006-01-02 15:04:05"), loc)
	}
	return Grid{Start: start.UTC(), Interval: iv, Location: loc}, nil
}

func ordinal(d int) string {
	switch d {
	case 29:
		return "29th"
	case 30:
		return "30th"
	case 31:
		return "31st"
	}
	return fmt.Sprintf("%dth", d)
}

// String names the grid the way errors do: "1d grid from
// 2026-01-01T00:00:00Z (Europe/Stockholm)".
func (g Grid) String() string {
	return fmt.Sprintf("%s grid from %s (%s)", g.Interval, FormatTime(g.Start), g.location())
}

func (g Grid) location() *time.Location {
	return cmp.Or(g.Location, time.UTC)
}

func (g Grid) valid() bool { return g.Interval.check() == nil }

// boundary is Start + k·Interval, computed from Start every time so that no
// error accumulates: month k of a grid from Jan 28 is always the 28th.
func (g Grid) boundary(k int) time.Time {
	if !g.valid() {
		return g.Start.UTC()
	}
	return g.Interval.AddTo(g.Start, g.location(), k)
}

// WindowAt returns grid window k; negative k lie before Start. In a zone that
// skipped a whole calendar day (Pacific/Apia, 2011-12-30) a day window can be
// empty; every other window is non-empty.
func (g Grid) WindowAt(k int) Window {
	return Window{Since: g.boundary(k), Until: g.boundary(k + 1)}
}

// WindowContaining returns the grid window that holds t.
func (g Grid) WindowContaining(t time.Time) Window { return g.WindowAt(g.Index(t)) }

// OnGrid reports whether t is a window boundary of the grid, extended before
// Start.
func (g Grid) OnGrid(t time.Time) bool { return g.boundary(g.Index(t)).Equal(t) }

// LastCompleteUntil is the until of the last window that has ended by now,
// or Start when none has: the end of a temporal model's contract range.
func (g Grid) LastCompleteUntil(now time.Time) time.Time {
	k := g.Index(now)
	if k <= 0 {
		return g.Start.UTC()
	}
	return g.boundary(k)
}

// ContractRange is [Start, until) where until is the last complete window's
// until at now, capped by the chunking's fixed end when one is set: an end
// fixes where the range stops, but a window that has not happened yet is never
// in it (loading it would read a partial period as if it were whole). ok is
// false when the range is empty — no window has completed yet, or end is not
// after Start.
func (g Grid) ContractRange(now time.Time, end *time.Time) (r Window, ok bool) {
	until := g.LastCompleteUntil(now)
	if end != nil && end.Before(until) {
		until = end.UTC()
	}
	if !until.After(g.Start) {
		return Window{}, false
	}
	return Window{Since: g.Start.UTC(), Until: until}, true
}
