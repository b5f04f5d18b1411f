package state

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Unit is the calendar unit of an Interval.
type Unit int

// The units an interval can be counted in. Minutes and hours are absolute
// durations; days and longer follow the calendar of the model's time zone, so
// a day at a DST change lasts 23 or 25 hours.
const (
	Minute Unit = iota + 1
	Hour
	Day
	Week
	Month
	Year
)

var unitSuffix = map[Unit]string{Minute: "m", Hour: "h", Day: "d", Week: "w", Month: "mo", Year: "y"}

// Interval is a chunking grain: N times a Unit ("15m", "1h", "1d", "1mo").
type Interval struct {
	N    int
	Unit Unit
}

// ParseInterval reads "15m", "1h", "6h", "1d", "1w", "1mo", "1y" and any
// positive multiple of those units ("2mo", "90m").
func ParseInterval(s string) (Interval, error) {
	in := strings.TrimSpace(s)
	i := 0
	for i < len(in) && in[i] >= '0' && in[i] <= '9' {
		i++
	}
	if i == 0 || i == len(in) {
		return Interval{}, fmt.Errorf("invalid interval %q: want a count and a unit, like 15m, 1h, 1d, 1w, 1mo or 1y", s)
	}
	n, err := strconv.Atoi(in[:i])
	if err != nil || n <= 0 || n > 100000 {
		return Interval{}, fmt.Errorf("invalid interval %q: the count must be a positive whole number", s)
	}
	for u, suffix := range unitSuffix {
		if in[i:] == suffix {
			return Interval{N: n, Unit: u}, nil
		}
	}
	return Interval{}, fmt.Errorf("invalid interval %q: unknown unit %q (use m, h, d, w, mo or y)", s, in[i:])
}

// MustInterval is ParseInterval for literals known to be valid.
func MustInterval(s string) Interval {
	i, err := ParseInterval(s)
	if err != nil {
		panic(err)
	}
	return i
}

// String prints the interval the way ParseInterval reads it.
func (i Interval) String() string { return strconv.Itoa(i.N) + unitSuffix[i.Unit] }

// IsZero reports whether the interval was never set.
func (i Interval) IsZero() bool { return i.N == 0 }

// Calendar reports whether the interval is counted in calendar units (days or
// longer), whose length depends on the time zone and the date.
func (i Interval) Calendar() bool { return i.Unit >= Day }

// AddTo returns t moved by k intervals. Minutes and hours are absolute time;
// calendar units move the wall clock in loc (nil means UTC), the way a person
// in that zone counts days, weeks, months and years.
func (i Interval) AddTo(t time.Time, loc *time.Location, k int) time.Time {
	n := i.N * k
	switch i.Unit {
	case Minute:
		return t.Add(time.Duration(n) * time.Minute)
	case Hour:
		return t.Add(time.Duration(n) * time.Hour)
	}
	if loc == nil {
		loc = time.UTC
	}
	local := t.In(loc)
	switch i.Unit {
	case Day:
		local = local.AddDate(0, 0, n)
	case Week:
		local = local.AddDate(0, 0, 7*n)
	case Month:
		local = local.AddDate(0, n, 0)
	case Year:
		local = local.AddDate(n, 0, 0)
	}
	return local.UTC()
}

// Nominal is the interval's typical length (a day is 24 h, a month 30 days, a
// year 365 days). Use it to compare grains, never to step a grid.
func (i Interval) Nominal() time.Duration {
	unit := map[Unit]time.Duration{Minute: time.Minute, Hour: time.Hour, Day: 24 * time.Hour,
		Week: 7 * 24 * time.Hour, Month: 30 * 24 * time.Hour, Year: 365 * 24 * time.Hour}[i.Unit]
	return time.Duration(i.N) * unit
}

// ParseDuration reads a fixed length of time such as a freshness threshold:
// Go's forms ("90m", "24h", "1h30m") plus whole days and weeks ("1d", "2w").
// It refuses zero and negative lengths.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	var d time.Duration
	if n, unit, ok := splitCount(in); ok && (unit == "d" || unit == "w") {
		d = time.Duration(n) * 24 * time.Hour
		if unit == "w" {
			d *= 7
		}
	} else {
		var err error
		if d, err = time.ParseDuration(in); err != nil {
			return 0, fmt.Errorf("invalid duration %q: want a length like 30m, 24h, 1d or 2w", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be longer than zero", s)
	}
	return d, nil
}

func splitCount(s string) (int, string, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 6 {
		return 0, "", false
	}
	n, err := strconv.Atoi(s[:i])
	return n, s[i:], err == nil
}
