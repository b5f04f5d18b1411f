package timeline

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// Render stacks the ruler, the model's strip, the cursor line and three
// lines per upstream (title, strip, marks), in at most height lines of
// exactly the width. With 8 lines and two upstreams only one fits: 3 + 3
// lines, then "… 1 more upstream".
func TestRender(t *testing.T) {
	down, up := upstreamFixture(t)
	model := NewTrack(units(down, 0, Applied, Applied, Pending, Blocked), state.Window{})
	cur := down.WindowAt(2)
	v := View{
		Axis: NewAxis(down, ZoomGrain, down.Start, 60), Model: model, Cursor: cur, CursorLabel: "03-03 pending",
		Lanes: []Lane{
			{Name: "raw.orders", Track: up, Contract: Contract{Level: LevelEncapsulate}},
			{Name: "raw.customers", Track: up, Contract: Contract{Level: LevelWhole}},
		},
	}
	pad := func(s string) string { return s + strings.Repeat(" ", 60-len([]rune(s))) }
	want := []string{
		Ruler(v.Axis, Styles{}),
		pad("██░▒"),
		pad("  ▲ 03-03 pending"),
		pad("raw.orders (ENCAPSULATE)"),
		pad("██·█✗██"),
		pad("  ╳ ENCAPSULATE unmet · 18h/24h covered (75%)"),
		pad("… 1 more upstream"),
	}
	got := Render(v, 8)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Render(8):\n%s\nwant\n%s", strings.Join(got, "|\n"), strings.Join(want, "|\n"))
	}
	if got := Render(v, 100); len(got) != 9 {
		t.Errorf("Render(100) has %d lines, want 9 (both upstreams)", len(got))
	}
	for h := range 12 {
		lines := Render(v, h)
		if len(lines) > h {
			t.Errorf("Render(%d) has %d lines", h, len(lines))
		}
		for _, l := range lines {
			checkLine(t, "render", l, 60, true)
		}
	}
	if got := Render(v, 1); len(got) != 1 || got[0] != pad("██░▒") {
		t.Errorf("Render(1) = %q, want the model's strip", got)
	}
}
