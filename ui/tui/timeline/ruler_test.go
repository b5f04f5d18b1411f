package timeline

import (
	"testing"
)

// Ruler labels, worked by hand at 40 columns. A label starts at the column
// that holds its instant; the spacing is the finest whose labels do not
// touch ("Mar 10"/"15:04" need 7 columns, "2026-04" 8, "2027" 5).
func TestRuler(t *testing.T) {
	for _, c := range []struct {
		name, start, interval string
		zoom                  Zoom
		want                  string
	}{
		// 1h cells: 6h would be 6 columns apart, too close; 12h is 12.
		// 00:00 is a midnight, so it shows the date; 12:00 on 03-11 would
		// start at column 36 and end past 40, so it is left out.
		{"hourly", "2026-03-10T00:00:00Z", "1h", ZoomGrain,
			"Mar 10      12:00       Mar 11          "},
		// 15m cells: 2h is 8 columns apart.
		{"15m", "2026-03-10T00:00:00Z", "15m", ZoomGrain,
			"Mar 10  02:00   04:00   06:00   08:00   "},
		// Day cells from Monday 2026-03-02: weekly labels, 7 apart,
		// "Apr 6" ending exactly at column 39.
		{"day zoom", "2026-03-02T00:00:00Z", "1h", ZoomDay,
			"Mar 2  Mar 9  Mar 16 Mar 23 Mar 30 Apr 6"},
		// A daily model at grain zoom draws the same ruler.
		{"daily grain", "2026-03-02T00:00:00Z", "1d", ZoomGrain,
			"Mar 2  Mar 9  Mar 16 Mar 23 Mar 30 Apr 6"},
		// Week cells from Monday 2026-01-05: months are 4.3 columns apart,
		// quarters 13. Apr 1 (a Wednesday) is in the week of Mar 30,
		// 12 weeks on: column 12; Jul 1 in the week of Jun 29, column 25;
		// Oct 1 would be column 38 and not fit.
		{"week zoom", "2026-01-05T00:00:00Z", "1h", ZoomWeek,
			"            2026-04      2026-07        "},
		// Month cells from 2026-01: years, 12 apart.
		{"month zoom", "2026-01-01T00:00:00Z", "1h", ZoomMonth,
			"2026        2027        2028        2029"},
	} {
		g := grid(t, c.start, c.interval, "UTC")
		got := Ruler(NewAxis(g, c.zoom, g.Start, 40), Styles{})
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
