package state

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	valid := []struct {
		in   string
		want time.Duration
	}{
		{"30m", 30 * time.Minute},
		{"90m", 90 * time.Minute},
		{"24h", 24 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute},
		{".5h", 30 * time.Minute},
		{"1d", 24 * time.Hour},
		{"2w", 14 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"1w1d", 8 * 24 * time.Hour},
		{"1.5d", 36 * time.Hour},
		{" 7d\t", 7 * 24 * time.Hour},
		{"+2h", 2 * time.Hour},
		{"500ms", 500 * time.Millisecond},
		{"1µs", time.Microsecond},
		{"106751d", 106751 * 24 * time.Hour}, // the largest whole number of days that fits
		{"2562047h", 2562047 * time.Hour},
	}
	for _, c := range valid {
		if got, err := ParseDuration(c.in); err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	invalid := []struct{ in, why string }{
		{"", "empty"},
		{"0", "longer than zero"},
		{"0d", "longer than zero"},
		{"0h0m", "longer than zero"},
		{"-1d", "longer than zero"},
		{"-1h", "longer than zero"},
		{"1x", `unknown unit "x"`},
		{"1mo", `unknown unit "mo"`}, // months are not a fixed length
		{"1y", `unknown unit "y"`},
		{"5", "missing unit"},
		{"d", "expected a number"},
		{"1h 30m", `unknown unit "h "`},
		{"106752d", "too long"}, // used to wrap into a negative duration
		{"999999d", "too long"},
		{"15251w", "too long"},
		{"9223372036854775808ns", "too long"},
		{"99999999999999999999h", "too long"},
		{"2562047h48m", "too long"},
	}
	checkRefused(t, "ParseDuration", ParseDuration, invalid)
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[string]string{"1h0m0s": "1h", "1h30m0s": "1h30m", "2m0s": "2m", "1m30s": "1m30s", "300ms": "300ms", "1h0m5s": "1h0m5s"} {
		dur, _ := time.ParseDuration(d)
		if got := ShortDuration(dur); got != want {
			t.Errorf("ShortDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
