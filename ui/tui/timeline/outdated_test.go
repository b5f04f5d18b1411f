package timeline

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// Outdated windows are their own cells: hourly, hours 00–02 outdated, 03–04
// applied, 05 stale, 06 pending. At grain zoom each hour shows its glyph;
// at day zoom the one day shows the worst of them, pending under stale and
// outdated — stale wins over outdated, outdated over running and pending.
// Outdated counts as applied coverage, as a contract reads it.
//
//	Unicode "▓▓▓██~░"   ASCII "%%%##~-"
func TestStripOutdatedCells(t *testing.T) {
	g := grid(t, "2026-03-10T00:00:00Z", "1h", "UTC")
	tr := NewTrack(units(g, 0, Outdated, Outdated, Outdated, Applied, Applied, Stale, Pending),
		win("2026-03-10T00:00:00Z", "2026-03-10T07:00:00Z"))
	a := NewAxis(g, ZoomGrain, g.Start, 7)
	if got, want := Strip(a, tr, state.Window{}, Styles{}), "▓▓▓██~░"; got != want {
		t.Errorf("Unicode strip = %q, want %q", got, want)
	}
	if got, want := Strip(a, tr, state.Window{}, Styles{Glyphs: ASCII}), "%%%##~-"; got != want {
		t.Errorf("ASCII strip = %q, want %q", got, want)
	}
	if got := tr.Covered(win("2026-03-10T00:00:00Z", "2026-03-10T06:00:00Z")); got != 6*time.Hour {
		t.Errorf("applied coverage of hours 00-06 = %s, want 6h: outdated and stale hours count", got)
	}
	// Without the stale hour, a day of outdated, applied and pending hours
	// reads outdated.
	day := NewTrack(units(g, 0, Outdated, Applied, Pending), win("2026-03-10T00:00:00Z", "2026-03-10T03:00:00Z"))
	if got := Worse(Outdated, Pending) && Worse(Stale, Outdated) && !Worse(Outdated, Stale); !got {
		t.Error("order: want stale worse than outdated worse than pending")
	}
	ad := NewAxis(g, ZoomDay, g.Start, 1)
	if got, want := Strip(ad, day, state.Window{}, Styles{}), "▓"; got != want {
		t.Errorf("day strip = %q, want %q", got, want)
	}
}
