package state

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"15m", "1h", "6h", "1d", "1w", "1mo", "1y", "0h", "-1d", "1x", "", "1.5h", "100001m", "007mo", " 2w "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iv, err := ParseInterval(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("ParseInterval(%q) error %q does not name the input", s, err)
			}
			return
		}
		if iv.check() != nil || iv.N < 1 || iv.N > maxIntervalCount {
			t.Fatalf("ParseInterval(%q) = %#v, an invalid interval", s, iv)
		}
		back, err := ParseInterval(iv.String())
		if err != nil || back != iv {
			t.Fatalf("ParseInterval(%q).String() = %q does not read back: %v, %v", s, iv.String(), back, err)
		}
		if want := strings.TrimLeft(strings.TrimSpace(s), "0"); iv.String() != want {
			t.Fatalf("ParseInterval(%q) = %q, want %q", s, iv.String(), want)
		}
		if iv.Nominal() <= 0 {
			t.Fatalf("%v.Nominal() = %v", iv, iv.Nominal())
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30m", "24h", "1h30m", "1d", "2w", "1d12h", "1.5d", "0", "-1d", "1x", "", "106752d", "9223372036854775807ns", ".5h", "1µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d <= 0 {
			t.Fatalf("ParseDuration(%q) = %v, want a positive duration or an error", s, d)
		}
		if err == nil {
			if back, err := ParseDuration(d.String()); err != nil || back != d {
				t.Fatalf("ParseDuration(%q) = %v, which does not read back: %v, %v", s, d, back, err)
			}
		}
		// Without days or weeks, ParseDuration is time.ParseDuration minus the
		// non-positive results.
		in := strings.TrimSpace(s)
		if strings.ContainsAny(in, "dw") {
			return
		}
		gd, gerr := time.ParseDuration(in)
		switch {
		case gerr != nil && err == nil:
			t.Fatalf("ParseDuration(%q) = %v, but time.ParseDuration refuses it: %v", s, d, gerr)
		case gerr == nil && gd > 0 && (err != nil || d != gd):
			t.Fatalf("ParseDuration(%q) = %v, %v; time.ParseDuration says %v", s, d, err, gd)
		case gerr == nil && gd <= 0 && err == nil:
			t.Fatalf("ParseDuration(%q) = %v, want a refusal of %v", s, d, gd)
		}
	})
}
