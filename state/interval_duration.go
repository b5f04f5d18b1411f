package state

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits are Go's duration units plus whole days and weeks, in
// nanoseconds. A day here is a fixed 24 h: a freshness threshold is an age,
// not a calendar date, so DST does not stretch it.
var durationUnits = map[string]uint64{
	"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9,
	"m": 60e9, "h": 3600e9, "d": 24 * 3600e9, "w": 7 * 24 * 3600e9,
}

// ParseDuration reads a fixed length of time such as a freshness threshold:
// Go's forms ("90m", "24h", "1h30m", "1.5h") plus days and weeks, alone or
// mixed ("1d", "2w", "1d12h"). It refuses zero, negative and overflowing
// lengths, because a threshold of zero or less would make everything stale.
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %v; want a length like 30m, 24h, 1d or 2w", s, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be longer than zero", s)
	}
	return d, nil
}

var errDurationOverflow = errors.New("too long (at most about 292 years)")

// parseDuration follows time.ParseDuration's grammar — an optional sign, then
// one or more decimal numbers each with a unit — with the extra units d and w.
func parseDuration(s string) (time.Duration, error) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, errors.New("empty")
	}
	var total uint64
	for s != "" {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		whole := s[:i]
		s = s[i:]
		frac := ""
		if s != "" && s[0] == '.' {
			s = s[1:]
			j := 0
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			frac = s[:j]
			s = s[j:]
		}
		if whole == "" && frac == "" {
			return 0, errors.New("expected a number")
		}
		j := 0
		for j < len(s) && s[j] != '.' && !isDigit(s[j]) {
			j++
		}
		name := s[:j]
		s = s[j:]
		if name == "" {
			return 0, errors.New("missing unit (use ns, us, ms, s, m, h, d or w)")
		}
		unit, ok := durationUnits[name]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q (use ns, us, ms, s, m, h, d or w)", name)
		}
		v, err := componentNanos(whole, frac, unit)
		if err != nil {
			return 0, err
		}
		if total += v; total > math.MaxInt64 {
			return 0, errDurationOverflow
		}
	}
	if neg {
		return -time.Duration(total), nil
	}
	return time.Duration(total), nil
}

// componentNanos is whole.frac × unit in nanoseconds, refusing overflow. The
// fraction is rounded to the nanosecond the way time.ParseDuration rounds it.
func componentNanos(whole, frac string, unit uint64) (uint64, error) {
	var v uint64
	for _, c := range []byte(whole) {
		if v > (math.MaxInt64-uint64(c-'0'))/10 {
			return 0, errDurationOverflow
		}
		v = v*10 + uint64(c-'0')
	}
	if v > math.MaxInt64/unit {
		return 0, errDurationOverflow
	}
	v *= unit
	if frac != "" {
		// time.ParseDuration's rounding, digit for digit, so that every form Go
		// accepts means exactly what it means to Go.
		var f uint64
		scale, overflow := 1.0, false
		for _, c := range []byte(frac) {
			if overflow || f > (1<<63-1)/10 {
				overflow = true
				continue
			}
			y := f*10 + uint64(c-'0')
			if y > 1<<63 {
				overflow = true
				continue
			}
			f, scale = y, scale*10
		}
		v += uint64(float64(f) * (float64(unit) / scale))
		if v > math.MaxInt64 {
			return 0, errDurationOverflow
		}
	}
	return v, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ShortDuration prints d as time.Duration.String does, without the zero
// units it appends: "1h", "1h30m", "90s" rather than "1h0m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// RoughDuration prints d in its two largest units: "2d1h", "5h12m", "3m",
// "12s" — an age at a glance, not to the second.
func RoughDuration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	for i, u := range units {
		if d >= u.d || i == len(units)-1 {
			s := strconv.FormatInt(int64(d/u.d), 10) + u.name
			if i+1 < len(units) {
				next := units[i+1]
				if r := (d % u.d) / next.d; r > 0 {
					s += strconv.FormatInt(int64(r), 10) + next.name
				}
			}
			return s
		}
	}
	return "0s"
}
