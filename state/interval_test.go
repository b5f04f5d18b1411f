package state

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseInterval(t *testing.T) {
	valid := []struct {
		in   string
		want Interval
		str  string
	}{
		{"15m", Interval{15, Minute}, "15m"},
		{"90m", Interval{90, Minute}, "90m"},
		{"1h", Interval{1, Hour}, "1h"},
		{"6h", Interval{6, Hour}, "6h"},
		{"1d", Interval{1, Day}, "1d"},
		{"1w", Interval{1, Week}, "1w"},
		{"1mo", Interval{1, Month}, "1mo"},
		{"3mo", Interval{3, Month}, "3mo"},
		{"1y", Interval{1, Year}, "1y"},
		{" 2d ", Interval{2, Day}, "2d"},
		{"015m", Interval{15, Minute}, "15m"},
		{"100000m", Interval{100000, Minute}, "100000m"},
	}
	for _, c := range valid {
		got, err := ParseInterval(c.in)
		if err != nil || got != c.want || got.String() != c.str {
			t.Errorf("ParseInterval(%q) = %v (%q), %v; want %v (%q)", c.in, got, got.String(), err, c.want, c.str)
		}
	}
	invalid := []struct{ in, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"0h", "must be positive"},
		{"00m", "must be positive"},
		{"-1d", "without a sign"},
		{"+1d", "without a sign"},
		{"1x", `unknown unit "x"`},
		{"1M", `unknown unit "M"`},
		{"1min", `unknown unit "min"`},
		{"1 h", `unknown unit " h"`},
		{"1.5h", "whole number"},
		{"1,5h", "whole number"},
		{"h", "want a count and a unit"},
		{"mo", "want a count and a unit"},
		{"15", "missing unit"},
		{"100001m", "too large"},
		{"99999999999999999999999999m", "too large"},
		{"1h30m", `unknown unit "h30m"`},
	}
	checkRefused(t, "ParseInterval", ParseInterval, invalid)
}

// checkRefused checks that parse (named name) refuses each input, with an
// error that quotes the input and says why.
func checkRefused[T any](t *testing.T, name string, parse func(string) (T, error), invalid []struct{ in, why string }) {
	t.Helper()
	for _, c := range invalid {
		got, err := parse(c.in)
		if err == nil {
			t.Errorf("%s(%q) = %v, want an error about %q", name, c.in, got, c.why)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.why) || !strings.Contains(msg, `"`+c.in+`"`) {
			t.Errorf("%s(%q) error = %q, want one naming the input and saying %q", name, c.in, msg, c.why)
		}
	}
}

func TestIntervalNominal(t *testing.T) {
	cases := []struct {
		iv   Interval
		want time.Duration
	}{
		{MustInterval("15m"), 15 * time.Minute},
		{MustInterval("6h"), 6 * time.Hour},
		{MustInterval("1d"), 24 * time.Hour},
		{MustInterval("2w"), 14 * 24 * time.Hour},
		{MustInterval("1mo"), 30 * 24 * time.Hour},
		{MustInterval("1y"), 365 * 24 * time.Hour},
		{MustInterval("100000y"), math.MaxInt64}, // saturates instead of wrapping negative
		{MustInterval("100000d"), 100000 * 24 * time.Hour},
		{Interval{}, 0},
		{Interval{N: 3, Unit: 99}, 0},
	}
	for _, c := range cases {
		if got := c.iv.Nominal(); got != c.want {
			t.Errorf("%v.Nominal() = %v, want %v", c.iv, got, c.want)
		}
	}
	if !MustInterval("1d").Calendar() || MustInterval("1h").Calendar() {
		t.Error("Calendar: days are calendar units, hours are not")
	}
}

func TestIntervalAddTo(t *testing.T) {
	stockholm := mustLoad(t, "Europe/Stockholm")
	newYork := mustLoad(t, "America/New_York")
	cases := []struct {
		iv   string
		from string
		loc  *time.Location
		k    int
		want string
	}{
		{"15m", "2026-01-01T00:00:00Z", nil, 3, "2026-01-01T00:45:00Z"},
		{"15m", "2026-01-01T00:00:00Z", nil, -1, "2025-12-31T23:45:00Z"},
		// Hours are absolute, even across Stockholm's spring-forward night.
		{"1h", "2026-03-29T00:30:00Z", stockholm, 1, "2026-03-29T01:30:00Z"},
		{"6h", "2026-03-08T05:00:00Z", newYork, 1, "2026-03-08T11:00:00Z"},
		// Days follow the local calendar: midnight to midnight is 23 h in spring, 25 h in autumn.
		{"1d", "2026-03-28T23:00:00Z", stockholm, 1, "2026-03-29T22:00:00Z"},
		{"1d", "2026-10-24T22:00:00Z", stockholm, 1, "2026-10-25T23:00:00Z"},
		{"1d", "2026-03-07T05:00:00Z", newYork, 1, "2026-03-08T05:00:00Z"},
		{"1d", "2026-03-08T05:00:00Z", newYork, 1, "2026-03-09T04:00:00Z"}, // 23 h: EST to EDT
		{"1d", "2026-03-29T22:00:00Z", stockholm, -1, "2026-03-28T23:00:00Z"},
		// 02:30 does not exist on 2026-03-29 in Stockholm; time.Date moves it to 03:30 CEST.
		{"1d", "2026-03-28T01:30:00Z", stockholm, 1, "2026-03-29T01:30:00Z"},
		{"1w", "2026-03-22T23:00:00Z", stockholm, 1, "2026-03-29T22:00:00Z"},
		{"1mo", "2026-01-01T00:00:00Z", nil, 1, "2026-02-01T00:00:00Z"},
		{"1mo", "2026-01-31T00:00:00Z", nil, 1, "2026-03-03T00:00:00Z"}, // why NewGrid refuses day 31
		{"1mo", "2025-12-31T23:00:00Z", stockholm, 3, "2026-03-31T22:00:00Z"},
		{"1y", "2028-02-29T00:00:00Z", nil, 1, "2029-03-01T00:00:00Z"}, // why NewGrid refuses 29 Feb
		{"1y", "2026-06-01T12:00:00Z", nil, -2, "2024-06-01T12:00:00Z"},
		// 100000h is beyond time.Duration after 26 steps; it must not wrap.
		{"100000h", "2026-01-01T00:00:00Z", nil, 100, "3166-10-18T16:00:00Z"},
	}
	for _, c := range cases {
		got := MustInterval(c.iv).AddTo(utc(c.from), c.loc, c.k)
		if !got.Equal(utc(c.want)) || got.Location() != time.UTC {
			t.Errorf("%s.AddTo(%s, %v, %d) = %v, want %s in UTC", c.iv, c.from, c.loc, c.k, got, c.want)
		}
	}
}

// TestIntervalAddToZeroKeepsInstant pins a bug fixed in AddTo: moving by zero
// went through time.AddDate, which re-resolves the wall clock, so 02:30 CEST
// on the autumn night (which occurs twice) jumped an hour to 02:30 CET.
func TestIntervalAddToZeroKeepsInstant(t *testing.T) {
	stockholm := mustLoad(t, "Europe/Stockholm")
	first := utc("2026-10-25T00:30:00Z") // 02:30 CEST, the first of two
	for _, iv := range []string{"15m", "1h", "1d", "1w", "1mo", "1y"} {
		if got := MustInterval(iv).AddTo(first, stockholm, 0); !got.Equal(first) {
			t.Errorf("%s.AddTo(t, Stockholm, 0) = %v, want t = %v", iv, got, first)
		}
	}
}
