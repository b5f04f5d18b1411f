package source

import (
	"strings"
	"testing"
)

func TestParseDateFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		in     []string
		want   string // ISO, the same for every input
	}{
		{"%d/%m/%Y", []string{"31/01/2026", "31/1/2026"}, "2026-01-31"},
		{"%d/%m/%Y", []string{"05/01/2026", "5/1/2026"}, "2026-01-05"},
		{"%Y%m%d", []string{"20260131"}, "2026-01-31"},
		{"%d.%m.%y", []string{"31.01.26"}, "2026-01-31"},
		{"%e %b %Y", []string{" 5 Jan 2026", "5 jan 2026", "5 JAN 2026"}, "2026-01-05"},
		{"%B %d, %Y", []string{"January 31, 2026"}, "2026-01-31"},
		{"%Y-%j", []string{"2026-031", "2026-31"}, "2026-01-31"},
		{"%d/%m/%Y (%%)", []string{"31/01/2026 (%)"}, "2026-01-31"},
		{"%m/%d/%Y", []string{"01/31/2026"}, "2026-01-31"},
	} {
		d, err := parseDateFormat(tc.format)
		if err != nil {
			t.Errorf("%q: %v", tc.format, err)
			continue
		}
		for _, in := range tc.in {
			got, ok := d.parseDate(in)
			if !ok || got.Format(isoDate) != tc.want {
				t.Errorf("%q with %q (layout %q) = %v, %v; want %s", in, tc.format, d.layout, got, ok, tc.want)
			}
		}
	}
	d, _ := parseDateFormat("%d/%m/%Y")
	for _, bad := range []string{"31/02/2026", "31/01/2026x", "31/01/26", "31/13/2026", "2026-01-32"} {
		if got, ok := d.parseDate(bad); ok {
			t.Errorf("%q parsed as %v", bad, got)
		}
	}
	dt, err := parseDateFormat("%Y-%m-%dT%H:%M:%S")
	if err != nil || !dt.hasTime {
		t.Fatalf("datetime format: %v %v", dt, err)
	}
	if got, ok := dt.parseDatetime("2026-01-31T09:05:00"); !ok || got.Format(isoDatetime) != "2026-01-31T09:05:00" {
		t.Errorf("datetime: %v %v", got, ok)
	}
	if _, ok := dt.parseDate("2026-01-31T09:05:00"); ok {
		t.Error("a date-time format made a date")
	}
}

func TestParseDateFormatErrors(t *testing.T) {
	for format, want := range map[string]string{
		"%d/%m/%a": "unsupported directive %a",
		"%Y-%m-%Z": "unsupported directive %Z",
		"%d/%m/%":  "ends in a lone %",
		"%H:%M":    "no date directive",
		"today":    "no date directive",
		"20%y-%m":  "cannot be translated",
		"%Y 100%%": "cannot be translated",
		"%d%m15":   "cannot be translated",
		"%Y Mon":   "cannot be translated",
	} {
		_, err := parseDateFormat(format)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), format) {
			t.Errorf("%q: err = %v, want it to name the format and say %q", format, err, want)
		}
	}
}
