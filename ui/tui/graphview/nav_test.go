package graphview

import (
	"slices"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/graph"
)

func TestNeighbourDiamond(t *testing.T) {
	l := diamond()
	// a centred over b and c (a nearer b by half a cell), d under them
	// (nearer c): see TestDiamondAt80.
	for _, c := range []struct {
		from int
		dir  Direction
		want int
	}{
		{1, Up, 1}, {1, Down, 2}, {1, Left, 1}, {1, Right, 1},
		{2, Up, 1}, {2, Down, 4}, {2, Left, 2}, {2, Right, 3},
		{3, Up, 1}, {3, Down, 4}, {3, Left, 2}, {3, Right, 3},
		{4, Up, 3}, {4, Down, 4}, {4, Left, 4}, {4, Right, 4},
		{99, Down, 1}, // not in the graph: the top-left node
	} {
		if got := l.Neighbour(c.from, c.dir); got != c.want {
			t.Errorf("Neighbour(%d, %v) = %d, want %d", c.from, c.dir, got, c.want)
		}
	}
}

func TestNeighbourSkipsDummies(t *testing.T) {
	// a→c runs through b's wave as a dummy beside b; Right from b finds no
	// node there, and Down from a still reaches b.
	l := NewLayout([]Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 3, Label: "c"}},
		[]Edge{{From: 1, To: 2, Type: S}, {From: 2, To: 3, Type: S}, {From: 1, To: 3, Type: S}}, nil)
	if got := l.Neighbour(2, Right); got != 2 {
		t.Errorf("Right from b = %d, want 2", got)
	}
	if got := l.Neighbour(2, Left); got != 2 {
		t.Errorf("Left from b = %d, want 2", got)
	}
	if got := l.Neighbour(1, Down); got != 2 {
		t.Errorf("Down from a = %d, want 2", got)
	}
}

func TestScrollToFarNode(t *testing.T) {
	nodes, edges, waves := bigGraph(t, 200, 400)
	l := NewLayout(nodes, edges, waves)
	w, h := l.Size()
	if w <= 160 || h <= 48 {
		t.Fatalf("picture %d×%d: want one larger than the window", w, h)
	}
	const vw, vh = 80, 24
	for _, id := range []int{200, 1, 137, waves[len(waves)/2][len(waves[len(waves)/2])-1]} {
		sx, sy := l.ScrollTo(id, vw, vh, 0, 0)
		x, y, bw, bh, ok := l.Bounds(id)
		if !ok {
			t.Fatalf("Bounds(%d) not found", id)
		}
		if x < sx || x+bw > sx+vw || y < sy || y+bh > sy+vh {
			t.Errorf("node %d at %d,%d %d×%d not inside the window at %d,%d", id, x, y, bw, bh, sx, sy)
		}
		if sx < 0 || sy < 0 || sx > w-vw || sy > h-vh {
			t.Errorf("node %d: scroll %d,%d outside the picture %d×%d", id, sx, sy, w, h)
		}
		// The selection shows in the window: its marker and its label.
		view := strings.Join(l.Render(vw, vh, id, sx, sy, Styles{}), "\n")
		if !strings.Contains(view, "▸") || !strings.Contains(view, nodes[id-1].Label[:8]) {
			t.Errorf("node %d not drawn in its window:\n%s", id, view)
		}
		// Already visible: the scroll stays.
		if sx2, sy2 := l.ScrollTo(id, vw, vh, sx, sy); sx2 != sx || sy2 != sy {
			t.Errorf("node %d: ScrollTo moved a visible node's window from %d,%d to %d,%d", id, sx, sy, sx2, sy2)
		}
	}
	// Walking Down from the top reaches the bottom layer, keeping the
	// selection in view all the way.
	id, _ := l.First()
	sx, sy := 0, 0
	for range len(waves) {
		id = l.Neighbour(id, Down)
		sx, sy = l.ScrollTo(id, vw, vh, sx, sy)
		x, y, _, _, _ := l.Bounds(id)
		if x < sx || y < sy || y+boxH > sy+vh {
			t.Fatalf("node %d at %d,%d out of the window at %d,%d", id, x, y, sx, sy)
		}
	}
	if !slices.Contains(waves[len(waves)-1], id) {
		t.Errorf("Down %d times from the top ended at %d, not in the last wave", len(waves), id)
	}
	// An unknown id only clamps.
	if sx, sy := l.ScrollTo(-1, vw, vh, -7, h+100); sx != 0 || sy != h-vh {
		t.Errorf("ScrollTo(-1) = %d,%d, want 0,%d", sx, sy, h-vh)
	}
}

func TestBoundsAndNodeAt(t *testing.T) {
	l := diamond()
	x, y, w, h, ok := l.Bounds(3)
	if !ok || x != 9 || y != 4 || w != 7 || h != 3 {
		t.Errorf("Bounds(c) = %d,%d %d×%d %v; want 9,4 7×3", x, y, w, h, ok)
	}
	if id, ok := l.NodeAt(12, 5); !ok || id != 3 {
		t.Errorf("NodeAt(12,5) = %d,%v; want c", id, ok)
	}
	for _, p := range [][2]int{{7, 5}, {7, 3}, {100, 100}} {
		if id, ok := l.NodeAt(p[0], p[1]); ok {
			t.Errorf("NodeAt(%v) = %d, want none", p, id)
		}
	}
	if _, _, _, _, ok := l.Bounds(42); ok {
		t.Error("Bounds(42) found a node")
	}
}

func TestInputsTolerated(t *testing.T) {
	// Nothing at all.
	empty := NewLayout(nil, nil, nil)
	if w, h := empty.Size(); w != 0 || h != 0 {
		t.Errorf("empty Size = %d×%d", w, h)
	}
	if got := empty.Render(5, 2, 1, 0, 0, Styles{}); !slices.Equal(got, []string{"     ", "     "}) {
		t.Errorf("empty Render = %q", got)
	}
	if got := empty.Neighbour(1, Down); got != 1 {
		t.Errorf("empty Neighbour = %d", got)
	}
	if _, ok := empty.First(); ok {
		t.Error("empty First found a node")
	}

	// Unknown ends, self loops, upward edges and repeats are not drawn; a
	// repeated node is kept once; a node missing from the waves goes last;
	// an empty wave is dropped. Layers keep a blank row between them even
	// with no edge to route.
	nodes := []Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 2, Label: "dup"}, {ID: 3, Label: "c"}}
	edges := []Edge{{From: 1, To: 2, Type: S}, {From: 1, To: 2, Type: S}, {From: 1, To: 9, Type: S}, {From: 3, To: 3, Type: S}, {From: 2, To: 1, Type: S}}
	l := NewLayout(nodes, edges, [][]int{{1}, {}, {2}})
	if l.Len() != 3 {
		t.Errorf("Len = %d, want 3", l.Len())
	}
	want(t, whole(l, 0, -1, Styles{}), 7, `
┌─────┐
│ ? a │
└──┬──┘
   │
┌──▼──┐
│ ? b │
└─────┘

┌─────┐
│ ? c │
└─────┘`)

	// Without waves, the layers come from the edges' longest paths, the
	// same as graph.Waves.
	edges = []Edge{{From: 1, To: 2, Type: S}, {From: 2, To: 3, Type: S}, {From: 1, To: 3, Type: S}}
	tasks := []graph.TaskNode{{ID: 1}, {ID: 2}, {ID: 3}}
	g, err := graph.Build(tasks, []graph.TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}, {TaskID: 3, DependsOnTaskID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a := NewLayout(nodes, edges, nil).Render(20, 12, 2, 0, 0, Styles{})
	b := NewLayout(nodes, EdgesOf(g), g.Waves()).Render(20, 12, 2, 0, 0, Styles{})
	if !slices.Equal(a, b) {
		t.Errorf("computed layers differ from graph.Waves:\n%s\n%s", frame(a), frame(b))
	}
}

func TestEdgesOf(t *testing.T) {
	g, err := graph.Build([]graph.TaskNode{{ID: 1}, {ID: 2}, {ID: 3}}, []graph.TaskEdge{
		{TaskID: 2, DependsOnTaskID: 1, Type: graph.Success},
		{TaskID: 3, DependsOnTaskID: 1, Type: graph.Failure},
		{TaskID: 3, DependsOnTaskID: 2, Type: graph.HasData},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := EdgesOf(g)
	w := []Edge{{From: 1, To: 2, Type: S}, {From: 1, To: 3, Type: F}, {From: 2, To: 3, Type: D}}
	if !slices.Equal(got, w) {
		t.Errorf("EdgesOf = %v, want %v", got, w)
	}
}

func TestHealthGlyphs(t *testing.T) {
	seen := map[string]bool{}
	seenASCII := map[string]bool{}
	for h := range numHealth {
		g, a := h.Glyph(false), h.Glyph(true)
		if seen[g] || seenASCII[a] || len(a) != 1 {
			t.Errorf("%v: glyph %q / %q repeats or is not one ASCII byte", h, g, a)
		}
		seen[g], seenASCII[a] = true, true
	}
	if Health(99).Glyph(false) != "?" || Health(-1).String() != "unknown" || Blocked.String() != "blocked" {
		t.Error("out-of-range health")
	}
}
