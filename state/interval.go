package state

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeUnit is the calendar unit of an Interval.
type TimeUnit int

// The units an interval can be counted in. Minutes and hours are absolute
// durations; days and longer follow the calendar of the model's time zone, so
// a day at a DST change lasts 23 or 25 hours.
const (
	Minute TimeUnit = iota + 1
	Hour
	Day
	Week
	Month
	Year
)

var unitSuffix = map[TimeUnit]string{Minute: "m", Hour: "h", Day: "d", Week: "w", Month: "mo", Year: "y"}

var suffixUnit = map[string]TimeUnit{"m": Minute, "h": Hour, "d": Day, "w": Week, "mo": Month, "y": Year}

// maxIntervalCount bounds an interval's count so that grid arithmetic stays
// far from integer overflow; no real chunking needs 100,001 of anything.
const maxIntervalCount = 100000

// Interval is a chunking grain: N times a TimeUnit ("15m", "1h", "1d", "1mo").
type Interval struct {
	N    int
	Unit TimeUnit
}

// ParseInterval reads "15m", "1h", "6h", "1d", "1w", "1mo", "1y" and any
// positive multiple of those units ("2mo", "90m"). Counts are whole numbers up
// to 100000, so a typo like "1.5h" or "1M" fails loudly instead of guessing.
func ParseInterval(s string) (Interval, error) {
	in := strings.TrimSpace(s)
	i := 0
	for i < len(in) && in[i] >= '0' && in[i] <= '9' {
		i++
	}
	digits, suffix := in[:i], in[i:]
	switch {
	case in == "":
		return Interval{}, fmt.Errorf("invalid interval %q: empty; want a count and a unit, like 15m, 1h, 1d, 1w, 1mo or 1y", s)
	case strings.HasPrefix(in, "-") || strings.HasPrefix(in, "+"):
		return Interval{}, fmt.Errorf("invalid interval %q: the count must be a positive whole number without a sign", s)
	case digits == "":
		return Interval{}, fmt.Errorf("invalid interval %q: want a count and a unit, like 15m, 1h, 1d, 1w, 1mo or 1y", s)
	case suffix == "":
		return Interval{}, fmt.Errorf("invalid interval %q: missing unit (use m, h, d, w, mo or y)", s)
	case suffix[0] == '.' || suffix[0] == ',':
		return Interval{}, fmt.Errorf("invalid interval %q: the count must be a whole number (write 90m, not 1.5h)", s)
	}
	u, ok := suffixUnit[suffix]
	if !ok {
		return Interval{}, fmt.Errorf("invalid interval %q: unknown unit %q (use m, h, d, w, mo or y)", s, suffix)
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > maxIntervalCount {
		return Interval{}, fmt.Errorf("invalid interval %q: the count is too large (at most %d)", s, maxIntervalCount)
	}
	if n == 0 {
		return Interval{}, fmt.Errorf("invalid interval %q: the count must be positive", s)
	}
	return Interval{N: n, Unit: u}, nil
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

// check reports why an interval built by hand (not by ParseInterval) cannot
// step a grid: a zero or negative count or an unknown unit would make every
// window empty.
func (i Interval) check() error {
	if i.IsZero() {
		return fmt.Errorf("the interval is not set")
	}
	if _, ok := unitSuffix[i.Unit]; !ok {
		return fmt.Errorf("interval has an unknown unit %d", int(i.Unit))
	}
	if i.N < 0 || i.N > maxIntervalCount {
		return fmt.Errorf("interval count %d is out of range (1..%d)", i.N, maxIntervalCount)
	}
	return nil
}

// AddTo returns t moved by k intervals, in UTC like every bound of a Window.
// Minutes and hours are absolute time; calendar units move the wall clock in
// loc (nil means UTC), the way a person in that zone counts days, weeks,
// months and years. A wall clock that the move lands in a DST gap is resolved
// by Go's time.Date (02:30 on a spring-forward day becomes 03:30). Moving by
// zero returns t itself, even when t's wall clock occurs twice that night.
func (i Interval) AddTo(t time.Time, loc *time.Location, k int) time.Time {
	n := i.N * k
	if n == 0 {
		return t.UTC()
	}
	switch i.Unit {
	case Minute:
		return addSeconds(t, int64(n), 60)
	case Hour:
		return addSeconds(t, int64(n), 3600)
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

// addSeconds moves t by n·per seconds. It avoids time.Duration, which
// overflows past 292 years (a 100000h interval reaches that in 26 steps).
func addSeconds(t time.Time, n, per int64) time.Time {
	if n > -math.MaxInt64/(per*int64(time.Second)) && n < math.MaxInt64/(per*int64(time.Second)) {
		return t.Add(time.Duration(n*per) * time.Second).UTC()
	}
	return time.Unix(t.Unix()+n*per, int64(t.Nanosecond())).UTC()
}

// Nominal is the interval's typical length (a day is 24 h, a month 30 days, a
// year 365 days). Use it to compare grains, never to step a grid. Lengths
// beyond time.Duration's 292 years saturate instead of wrapping negative.
func (i Interval) Nominal() time.Duration {
	var unit time.Duration
	switch i.Unit {
	case Minute:
		unit = time.Minute
	case Hour:
		unit = time.Hour
	case Day:
		unit = 24 * time.Hour
	case Week:
		unit = 7 * 24 * time.Hour
	case Month:
		unit = 30 * 24 * time.Hour
	case Year:
		unit = 365 * 24 * time.Hour
	}
	if unit == 0 {
		return 0
	}
	if i.N > 0 && int64(i.N) > math.MaxInt64/int64(unit) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(i.N) * unit
}
