package timeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// Every line every renderer draws is exactly the axis's width — at 40, 80
// and 160 columns, at every zoom, in plain and colour, with both glyph
// sets, with the cursor on, off and beside the screen — and plain output
// holds no escape code. A theme style with padding and a width (the
// Outside style of colour) must not widen anything.
func TestEveryLineExactWidth(t *testing.T) {
	down, up := upstreamFixture(t)
	h := grid(t, "2026-03-01T00:00:00Z", "1h", "Europe/Stockholm")
	model := NewTrack(units(h, 0, append(repeat(Applied, 50), Pending, Running, Blocked, Failed, Stale, "", Applied)...), state.Window{})
	labels := []string{"", "03-04 applied", "a cursor label much longer than any line we are going to draw here, 長い"}
	for _, width := range []int{40, 80, 160} {
		for _, g := range []state.Grid{down, h} {
			for _, z := range Zooms(g.Interval) {
				for _, style := range []struct {
					name  string
					st    Styles
					plain bool
				}{{"plain", Styles{}, true}, {"ascii", Styles{Glyphs: ASCII}, true}, {"colour", colour(Unicode), false}, {"colour ascii", colour(ASCII), false}} {
					for _, start := range []time.Time{g.Start, ts("2026-03-04T00:00:00Z"), ts("2026-02-20T00:00:00Z")} {
						a := NewAxis(g, z, start, width)
						for _, cur := range []state.Window{{}, down.WindowAt(3), down.WindowAt(-40), down.WindowAt(400)} {
							what := fmt.Sprintf("%d %s %s %s from %s cursor %s", width, g.Interval, z, style.name, state.FormatTime(start), cur)
							checkLine(t, what+" strip", Strip(a, model, cur, style.st), width, style.plain)
							checkLine(t, what+" upstream strip", Strip(a, up, cur, style.st), width, style.plain)
							for _, l := range labels {
								checkLine(t, what+" cursor line", CursorLine(a, cur, l, style.st), width, style.plain)
							}
							for l := LevelExists; l <= LevelWhole; l++ {
								c := Contract{Level: l, Window: cur, Age: 30 * time.Hour, Within: 24 * time.Hour}
								checkLine(t, what+" marks "+l.String(), Marks(a, up, c, style.st), width, style.plain)
							}
						}
						checkLine(t, fmt.Sprintf("%d %s %s %s ruler", width, g.Interval, z, style.name), Ruler(a, style.st), width, style.plain)
					}
				}
			}
		}
		checkLine(t, "legend", Legend(Styles{}, width), width, true)
		checkLine(t, "legend colour", Legend(colour(Unicode), width), width, false)
	}
}

// Both glyph sets are one cell per glyph, and each set tells every status
// apart by shape.
func TestGlyphSets(t *testing.T) {
	for name, g := range map[string]Glyphs{"Unicode": Unicode, "ASCII": ASCII} {
		seen := map[rune]Status{}
		for _, s := range append(Statuses, Outside) {
			r := g.Of(s)
			checkLine(t, name+" "+string(s), string(r), 1, true)
			if other, dup := seen[r]; dup {
				t.Errorf("%s: %s and %s share the glyph %q", name, s, other, r)
			}
			seen[r] = s
		}
		for _, r := range []rune{g.Cursor, g.Need, g.Gap, g.Before, g.After} {
			checkLine(t, name+" mark", string(r), 1, true)
		}
	}
	if StatusOf(state.Blocked) != Blocked || StatusOf("bogus") != Pending {
		t.Error("StatusOf")
	}
}
