package timeline

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// A cell wider than a column shows its mix, each column the worst status
// of its own part of the bucket, as the grain's columns do: at day zoom,
// three days of hourly units 24 columns a day (one column an hour), one
// failed hour is one ✗, not a day of them; at week zoom a week that starts
// before the model's first unit is blank over the days before it, not
// applied.
func TestScaledCellsShowTheirMix(t *testing.T) {
	g := grid(t, "2026-11-29T00:00:00Z", "1h", "UTC") // a Sunday
	statuses := repeat(Applied, 72)
	statuses[24+16] = Failed // 2026-11-30 16:00–17:00
	track := NewTrack(units(g, 0, statuses...), win("2026-11-29T00:00:00Z", "2026-12-02T00:00:00Z"))

	day, ok := FitAt(g, ZoomDay, win("2026-11-29T00:00:00Z", "2026-12-02T00:00:00Z"), 74)
	if !ok || day.Scale() != 24 {
		t.Fatalf("day zoom: fitted %v, scale %d, want 24 columns a day", ok, day.Scale())
	}
	strip := []rune(Strip(day, track, state.Window{}, Styles{}))
	if n := strings.Count(string(strip), "✗"); n != 1 {
		t.Errorf("day zoom: %d failed columns, want the one hour's: %q", n, string(strip))
	}
	if c := day.Column(ts("2026-11-30T16:30:00Z")); c < 0 || c >= len(strip) || strip[c] != '✗' {
		t.Errorf("day zoom: the failed hour's column %d is not ✗: %q", c, string(strip))
	}

	// Week zoom: the week of Monday 2026-11-23 holds the model's first
	// day, Sunday 11-29, alone; then the week of 11-30.
	week, ok := FitAt(g, ZoomWeek, win("2026-11-29T00:00:00Z", "2026-12-02T00:00:00Z"), 72)
	if !ok || week.Scale() < 7 {
		t.Fatalf("week zoom: fitted %v, scale %d", ok, week.Scale())
	}
	strip = []rune(Strip(week, track, state.Window{}, Styles{}))
	before := week.Column(ts("2026-11-28T12:00:00Z"))
	if before < 0 || strip[before] != ' ' {
		t.Errorf("week zoom: a day before the model's first unit (column %d) is not blank: %q", before, string(strip))
	}
	if first := week.Column(ts("2026-11-29T12:00:00Z")); strip[first] != '█' {
		t.Errorf("week zoom: the model's first day (column %d) is not applied: %q", first, string(strip))
	}
	if n := strings.Count(string(strip), "✗"); n != 1 {
		t.Errorf("week zoom: %d failed columns, want the one whose part holds the failed hour: %q", n, string(strip))
	}
}
