package state

import (
	"testing"
	"time"
)

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00", "2026-01-01", "2026-01-01T06:00", "2026-01-01 06:00:30",
		"2026-01-01T00:00:00.123456789Z", "0000-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00", "2027-02-29", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC || got.Year() < 0 || got.Year() > 9999 {
			t.Fatalf("ParseTime(%q) = %v, want UTC in years 0000..9999", s, got)
		}
		text := FormatTime(got)
		back, err := ParseTime(text)
		if err != nil || back.Unix() != got.Unix() || back.Nanosecond() != 0 {
			t.Fatalf("ParseTime(%q) = %v prints as %q, which reads back as %v, %v", s, got, text, back, err)
		}
	})
}
