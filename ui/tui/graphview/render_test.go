package graphview

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/graph"
)

const (
	S = graph.Success
	F = graph.Failure
	A = graph.Always
	D = graph.HasData
)

// want checks a render against a picture drawn by hand. The picture starts
// on the line after the opening backquote; each line is padded with spaces
// to width, so pictures carry no trailing blanks.
func want(t *testing.T, got []string, width int, picture string) {
	t.Helper()
	lines := strings.Split(strings.TrimPrefix(picture, "\n"), "\n")
	for i, ln := range lines {
		if w := lipgloss.Width(ln); w < width {
			lines[i] = ln + strings.Repeat(" ", width-w)
		}
	}
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("picture differs\n got:\n%s\nwant:\n%s", frame(got), frame(lines))
	}
}

// frame shows lines with their right edge marked, so trailing blanks show.
func frame(lines []string) string {
	var b strings.Builder
	for _, ln := range lines {
		b.WriteString(ln + "|\n")
	}
	return b.String()
}

// whole renders the whole picture, plain, at its own size (or wider).
func whole(l *Layout, width, selected int, st Styles) []string {
	w, h := l.Size()
	return l.Render(max(w, width), h, selected, 0, 0, st)
}

func diamond() *Layout {
	return NewLayout([]Node{
		{ID: 1, Label: "a", Health: Applied},
		{ID: 2, Label: "b", Health: Applied},
		{ID: 3, Label: "c", Health: Blocked},
		{ID: 4, Label: "d", Health: Failed},
	}, []Edge{{From: 1, To: 2, Type: S}, {From: 1, To: 3, Type: S}, {From: 2, To: 4, Type: S}, {From: 3, To: 4, Type: S}}, [][]int{{1}, {2, 3}, {4}})
}

func TestChain(t *testing.T) {
	l := NewLayout([]Node{
		{ID: 1, Label: "extract", Health: Applied, Detail: "24/24"},
		{ID: 2, Label: "transform", Health: Applied, Detail: "24/24"},
		{ID: 3, Label: "load", Health: Pending, Detail: "0/24"},
	}, []Edge{{From: 1, To: 2, Type: S}, {From: 2, To: 3, Type: S}}, [][]int{{1}, {2}, {3}})
	if w, h := l.Size(); w != 21 || h != 11 {
		t.Fatalf("Size = %d×%d, want 21×11", w, h)
	}
	// Boxes of 19, 21 and 15 cells, stems and arrows all in column 10.
	want(t, whole(l, 0, -1, Styles{}), 21, `
 ┌─────────────────┐
 │ ✓ extract 24/24 │
 └────────┬────────┘
          │
┌─────────▼─────────┐
│ ✓ transform 24/24 │
└─────────┬─────────┘
          │
   ┌──────▼──────┐
   │ · load 0/24 │
   └─────────────┘`)
	want(t, whole(l, 0, -1, Styles{ASCII: true}), 21, `
 +-----------------+
 | + extract 24/24 |
 +--------+--------+
          |
+---------v---------+
| + transform 24/24 |
+---------+---------+
          |
   +------v------+
   | . load 0/24 |
   +-------------+`)
}

func TestDiamondAt80(t *testing.T) {
	got := diamond().Render(80, 12, 3, 0, 0, Styles{})
	// a's stem forks on one track to b's and c's centres; b and c come
	// down on one row (their tracks do not overlap) into two in-ports of
	// d. c is selected: heavy box, ▸. The 12th line is padding.
	want(t, got, 80, `
    ┌─────┐
    │ ✓ a │
    └──┬──┘
   ┌───┴────┐
┌──▼──┐  ┏━━▼━━┓
│ ✓ b │  ┃▸⊘ c ┃
└──┬──┘  ┗━━┯━━┛
   └───┐ ┌──┘
     ┌─▼─▼─┐
     │ ✗ d │
     └─────┘
`)
	want(t, diamond().Render(16, 11, 3, 0, 0, Styles{ASCII: true}), 16, `
    +-----+
    | + a |
    +--+--+
   +---+----+
+--v--+  *==v==*
| + b |  |># c |
+--+--+  *==+==*
   +---+ +--+
     +-v-v-+
     | x d |
     +-----+`)
}

func TestFailureEdge(t *testing.T) {
	// A straight FAILURE edge: the letter sits on the line above the arrow.
	l := NewLayout([]Node{
		{ID: 1, Label: "load", Health: Failed},
		{ID: 2, Label: "alert", Health: Pending},
	}, []Edge{{From: 1, To: 2, Type: F}}, nil)
	// Boxes of 10 and 11 cells, both centred on column 5.
	want(t, whole(l, 0, -1, Styles{}), 11, `
┌────────┐
│ ✗ load │
└────┬───┘
     f
┌────▼────┐
│ · alert │
└─────────┘`)

	// A source with a SUCCESS and a FAILURE net: one stem, two tracks; the
	// failure track is dashed, solid where it shares the stem.
	l = NewLayout([]Node{
		{ID: 1, Label: "load", Health: Failed},
		{ID: 2, Label: "publish"},
		{ID: 3, Label: "alert"},
	}, []Edge{{From: 1, To: 2, Type: S}, {From: 1, To: 3, Type: F}}, nil)
	want(t, whole(l, 0, 3, Styles{}), 26, `
        ┌────────┐
        │ ✗ load │
        └────┬───┘
      ┌──────┤
      │      └╌╌╌╌╌╌┐
      │             f
┌─────▼─────┐  ┏━━━━▼━━━━┓
│ ? publish │  ┃▸? alert ┃
└───────────┘  ┗━━━━━━━━━┛`)
	want(t, whole(l, 0, 3, Styles{ASCII: true}), 26, `
        +--------+
        | x load |
        +----+---+
      +------+
      |      +......+
      |             f
+-----v-----+  *====v====*
| ? publish |  |>? alert |
+-----------+  *=========*`)
}

func TestLongEdgesAndConditionalTypes(t *testing.T) {
	// a→c (ALWAYS) skips b's wave and a→d skips two: each runs as a
	// vertical line through the waves between, the ALWAYS one dashed, and
	// its letter appears only above the arrow into c. At a's fork the stem
	// feeds both nets, so ┼ there is one source's junction.
	l := NewLayout([]Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 3, Label: "c"}, {ID: 4, Label: "d"}},
		[]Edge{{From: 1, To: 2, Type: S}, {From: 2, To: 3, Type: S}, {From: 1, To: 4, Type: S}, {From: 3, To: 4, Type: S}, {From: 1, To: 3, Type: A}}, nil)
	want(t, whole(l, 0, -1, Styles{}), 13, `
      ┌─────┐
      │ ? a │
      └──┬──┘
   ┌─────┼┐
   │    ┌┘│
┌──▼──┐ ╎ │
│ ? b │ ╎ │
└──┬──┘ ╎ │
   └┐ ┌╌┘ │
    │ a   │
  ┌─▼─▼─┐ │
  │ ? c │ │
  └──┬──┘ │
     └─┐ ┌┘
     ┌─▼─▼─┐
     │ ? d │
     └─────┘`)
}

func TestCrossingIsNotAJunction(t *testing.T) {
	// Both of a and b feed both of c and d, so two routes must cross: b's
	// track to c runs under a's drop to d, which stays │, not ┼. b's
	// HAS_DATA edge to d drops straight down, lettered d.
	l := NewLayout([]Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 3, Label: "c"}, {ID: 4, Label: "d"}},
		[]Edge{{From: 1, To: 3, Type: S}, {From: 1, To: 4, Type: S}, {From: 2, To: 3, Type: S}, {From: 2, To: 4, Type: D}}, nil)
	want(t, whole(l, 0, -1, Styles{}), 16, `
┌─────┐  ┌─────┐
│ ? a │  │ ? b │
└──┬──┘  └──┬──┘
   ├───────┐│
   │┌──────│┤
   ││      │d
┌──▼▼─┐  ┌─▼▼──┐
│ ? c │  │ ? d │
└─────┘  └─────┘`)
}

func TestCrossPipelineStub(t *testing.T) {
	l := NewLayout([]Node{
		{ID: 1, Label: "core.order_facts", Health: Applied, Detail: "24/24",
			Cross: []CrossEdge{{"ingest.raw_orders", S}, {"ref.fx_rates", S}}},
		{ID: 2, Label: "core.daily_revenue", Health: Stale, Detail: "20/24",
			Cross: []CrossEdge{{"ingest.raw_payments", F}}},
	}, []Edge{{From: 1, To: 2, Type: S}}, nil)
	want(t, whole(l, 0, -1, Styles{}), 53, `
 ┌──────────────────────────┐
 │ ✓ core.order_facts 24/24 │◄─ ingest.raw_orders +1
 └─────────────┬────────────┘
               │
┌──────────────▼─────────────┐
│ ~ core.daily_revenue 20/24 │◄╌f ingest.raw_payments
└────────────────────────────┘`)
	want(t, whole(l, 0, 2, Styles{ASCII: true}), 53, `
 +--------------------------+
 | + core.order_facts 24/24 |<- ingest.raw_orders +1
 +-------------+------------+
               |
*==============v=============*
|>~ core.daily_revenue 20/24 |<.f ingest.raw_payments
*============================*`)
	// The stub is part of the node for clicks.
	if id, ok := l.NodeAt(40, 1); !ok || id != 1 {
		t.Errorf("NodeAt(40, 1) = %d, %v; want 1 (its stub)", id, ok)
	}
}

func TestTruncation(t *testing.T) {
	l := NewLayout([]Node{
		{ID: 1, Label: "core.a_very_long_model_name_indeed", Health: Blocked, Detail: "3/24 blocked units"},
	}, nil, nil)
	// 19 cells of label and "…" (20), 11 of detail and "…" (12).
	want(t, whole(l, 0, -1, Styles{}), 39, `
┌─────────────────────────────────────┐
│ ⊘ core.a_very_long_mo… 3/24 blocke… │
└─────────────────────────────────────┘`)

	// A narrower MaxLabel, and wide characters: four of them (8 cells) and
	// "…" fit in 10, a fifth would not.
	l = NewLayoutWith([]Node{
		{ID: 1, Label: "core.a_very_long_model_name_indeed", Health: Blocked, Detail: "3/24 blocked"},
		{ID: 2, Label: "データパイプライン", Health: Running, Detail: "12/24"},
	}, []Edge{{From: 1, To: 2, Type: S}}, nil, Options{MaxLabel: 10})
	want(t, whole(l, 0, -1, Styles{}), 29, `
┌───────────────────────────┐
│ ⊘ core.a_ve… 3/24 blocked │
└─────────────┬─────────────┘
              │
    ┌─────────▼─────────┐
    │ ↻ データパ… 12/24 │
    └───────────────────┘`)

	// A wide character cut by the window's left edge leaves a space.
	// Row 5, columns 11–14: half of ー, タ, half of パ.
	got := l.Render(4, 1, -1, 11, 5, Styles{})
	if got[0] != " タ " {
		t.Errorf("cut wide characters: got %q, want %q", got[0], " タ ")
	}
}

func TestEveryLineIsExactlyWidth(t *testing.T) {
	nodes, edges, waves := bigGraph(t, 200, 400)
	nodes[7].Label = "データパイプライン_and_more_wide_text"
	nodes[7].Cross = []CrossEdge{{"ingest.raw_orders", F}}
	l := NewLayout(nodes, edges, waves)
	w, h := l.Size()
	for _, st := range []Styles{{}, {ASCII: true}, colourStyles()} {
		for _, width := range []int{1, 40, 80, 160} {
			for _, scroll := range [][2]int{{0, 0}, {-5, -3}, {37, 11}, {w / 2, h / 2}, {w - width, h - 24}, {w + 10, h + 10}} {
				lines := l.Render(width, 24, 8, scroll[0], scroll[1], st)
				if len(lines) != 24 {
					t.Fatalf("width %d scroll %v: %d lines, want 24", width, scroll, len(lines))
				}
				for i, ln := range lines {
					if strings.ContainsAny(ln, "\n\r") || lipgloss.Width(ln) != width {
						t.Fatalf("width %d scroll %v line %d: %d cells: %q", width, scroll, i, lipgloss.Width(ln), ln)
					}
				}
			}
		}
	}
	if got := l.Render(0, 3, 1, 0, 0, Styles{}); len(got) != 3 || got[0] != "" {
		t.Errorf("width 0: %q", got)
	}
	if got := l.Render(10, 0, 1, 0, 0, Styles{}); len(got) != 0 {
		t.Errorf("height 0: %q", got)
	}
}

func TestPlainHasNoEscapes(t *testing.T) {
	nodes, edges, waves := bigGraph(t, 200, 400)
	l := NewLayout(nodes, edges, waves)
	w, h := l.Size()
	for _, st := range []Styles{{}, {ASCII: true}} {
		for y := 0; y < h; y += 24 {
			for x := 0; x < w; x += 80 {
				for _, ln := range l.Render(80, 24, 100, x, y, st) {
					if strings.ContainsRune(ln, '\x1b') {
						t.Fatalf("escape in plain render at %d,%d: %q", x, y, ln)
					}
				}
			}
		}
	}
	// Styles that set only geometry still draw plain, and do not move a
	// cell: widths, padding, margins and borders are ignored.
	geo := lipgloss.NewStyle().Width(30).Padding(2).Margin(1).Border(lipgloss.NormalBorder())
	got := diamond().Render(16, 11, 3, 0, 0, Styles{Applied: geo, Selected: geo, Label: geo, Edge: geo})
	want(t, got, 16, strings.Join(diamond().Render(16, 11, 3, 0, 0, Styles{}), "\n"))
}

func TestColourAndSelection(t *testing.T) {
	st := colourStyles()
	got := strings.Join(diamond().Render(16, 11, 3, 0, 0, st), "\n")
	if !strings.Contains(got, "\x1b[") {
		t.Fatalf("no colour in a coloured render:\n%s", got)
	}
	// The selected box is drawn reverse (Selected) and in blocked's colour,
	// which Selected leaves unset.
	sel := clean(st.Selected.Inherit(st.Blocked))
	blocked := clean(st.Blocked)
	if sel.plain || sel.prefix == blocked.prefix || !strings.Contains(got, sel.prefix+"┏━━") {
		t.Errorf("selected box not drawn in %q:\n%q", sel.prefix, got)
	}
	// Without a selection there is no heavy box and no marker.
	plain := strings.Join(diamond().Render(16, 11, -1, 0, 0, Styles{}), "\n")
	if strings.ContainsAny(plain, "▸┏┃") {
		t.Errorf("a selection with id -1:\n%s", plain)
	}
	// Colour never replaces the glyph: the uncoloured text is the same.
	stripped := strings.Join(diamond().Render(16, 11, 3, 0, 0, Styles{}), "\n")
	if stripSGR(got) != stripped {
		t.Errorf("coloured text differs from plain:\n%s\n%s", stripSGR(got), stripped)
	}
}

// stripSGR removes SGR sequences.
func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\x1b' {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestLegend(t *testing.T) {
	if got, w := Legend(Styles{}), "│ on success   ╎f on failure   ╎a always   ╎d has data   ◄─ other pipeline"; got != w {
		t.Errorf("Legend = %q, want %q", got, w)
	}
	if got := Legend(Styles{ASCII: true}); !strings.HasPrefix(got, "| on success   :f on failure") {
		t.Errorf("ASCII Legend = %q", got)
	}
}

func TestConcurrentRenders(t *testing.T) {
	// A Layout is read-only after NewLayout: one can serve many renders at
	// once (go test -race checks it).
	nodes, edges, waves := bigGraph(t, 200, 400)
	l := NewLayout(nodes, edges, waves)
	first := strings.Join(l.Render(80, 24, 50, 10, 10, colourStyles()), "\n")
	done := make(chan string)
	for i := range 4 {
		go func() {
			for range 20 {
				l.Render(80, 24, 50+i, 10, 10, colourStyles())
				l.Neighbour(50+i, Down)
			}
			done <- strings.Join(l.Render(80, 24, 50, 10, 10, colourStyles()), "\n")
		}()
	}
	for range 4 {
		if got := <-done; got != first {
			t.Error("a concurrent render differs")
		}
	}
}
