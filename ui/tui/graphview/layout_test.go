package graphview

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bollhav/bollhav/graph"
)

// overlaps counts cells where routes of two different sources run along
// each other (both vertical, or both horizontal) rather than cross: the
// picture would then join lines that are not joined.
func overlaps(l *Layout) (v, h int) {
	type key struct{ x, y int }
	vo := map[key]int{}
	ho := map[key]int{}
	for _, b := range l.bands {
		for _, s := range b.segs {
			if s.x0 == s.x1 {
				// A vertical's end cells meet a corner or a border: only
				// its inner cells are its own.
				for y := s.y0 + 1; y < s.y1; y++ {
					k := key{s.x0, y}
					if o, ok := vo[k]; ok && o != s.owner {
						v++
					}
					vo[k] = s.owner
				}
				continue
			}
			for x := s.x0; x <= s.x1; x++ {
				k := key{x, s.y0}
				if o, ok := ho[k]; ok && o != s.owner {
					h++
				}
				ho[k] = s.owner
			}
		}
	}
	return v, h
}

// randomGraph is a reproducible pipeline with mixed edge types, edges
// reaching up to 8 tasks ahead.
func randomGraph(seed uint64) ([]Node, []Edge) {
	r := rand.New(rand.NewPCG(seed, 7))
	n := 5 + r.IntN(40)
	nodes := make([]Node, 0, n)
	for i := 1; i <= n; i++ {
		nodes = append(nodes, Node{ID: i, Label: fmt.Sprintf("m%d%s", i, "_xxxxxxxxxxxxxxxx"[:r.IntN(15)])})
	}
	var edges []Edge
	for range 2 * n {
		u := 1 + r.IntN(n-1)
		v := u + 1 + r.IntN(min(8, n-u))
		typ := graph.Success
		if k := r.IntN(6); k < 4 {
			typ = graph.DependencyType(k)
		}
		edges = append(edges, Edge{From: u, To: v, Type: typ})
	}
	return nodes, edges
}

func TestRoutesNeverOverlap(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		nodes, edges := randomGraph(seed)
		l := NewLayout(nodes, edges, nil)
		if v, h := overlaps(l); v+h > 0 {
			t.Errorf("seed %d: %d vertical and %d horizontal overlaps", seed, v, h)
		}
		checkPorts(t, l, fmt.Sprint("seed ", seed))
	}
	nodes, edges, waves := bigGraph(t, 200, 400)
	l := NewLayout(nodes, edges, waves)
	if v, h := overlaps(l); v+h > 0 {
		t.Errorf("200 nodes: %d vertical and %d horizontal overlaps", v, h)
	}
	checkPorts(t, l, "200 nodes")
}

// checkPorts checks that boxes and dummies of a layer keep their order and
// gaps, and that a box's in-ports are distinct columns of its top border.
func checkPorts(t *testing.T, l *Layout, name string) {
	t.Helper()
	for li, ly := range l.layers {
		for p := 1; p < len(ly); p++ {
			a, b := &l.items[ly[p-1]], &l.items[ly[p]]
			if a.x+a.w+l.gap(ly[p-1], ly[p]) > b.x {
				t.Fatalf("%s: layer %d items %d and %d overlap: %d+%d, %d", name, li, p-1, p, a.x, a.w, b.x)
			}
		}
	}
	for i := range l.nodes {
		m := &l.items[i]
		seen := map[int]bool{}
		for _, a := range m.arrows {
			if seen[a.x] || a.x <= m.x || a.x >= m.x+m.boxW-1 {
				t.Fatalf("%s: node %d: in-port %d repeated or off its border %d..%d", name, i, a.x, m.x, m.x+m.boxW-1)
			}
			seen[a.x] = true
		}
	}
}

func TestOrderingRemovesAvoidableCrossings(t *testing.T) {
	// Given in the worst order: a feeds d, b feeds c. The sweeps swap one
	// row, so both edges run straight down.
	l := NewLayout([]Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 3, Label: "c"}, {ID: 4, Label: "d"}},
		[]Edge{{From: 1, To: 4, Type: S}, {From: 2, To: 3, Type: S}}, [][]int{{1, 2}, {3, 4}})
	want(t, whole(l, 0, -1, Styles{}), 16, `
┌─────┐  ┌─────┐
│ ? a │  │ ? b │
└──┬──┘  └──┬──┘
   │        │
┌──▼──┐  ┌──▼──┐
│ ? d │  │ ? c │
└─────┘  └─────┘`)
}

func TestManyInputsWidenTheBox(t *testing.T) {
	// Four sources into one short-named box: it widens to give each its own
	// in-port (2×4+3 = 11 cells).
	nodes := []Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 3, Label: "c"}, {ID: 4, Label: "d"}, {ID: 5, Label: "e"}}
	l := NewLayout(nodes, []Edge{{From: 1, To: 5, Type: S}, {From: 2, To: 5, Type: S}, {From: 3, To: 5, Type: S}, {From: 4, To: 5, Type: S}}, nil)
	if _, _, w, _, _ := l.Bounds(5); w != 11 {
		t.Errorf("box width %d, want 11", w)
	}
	if n := len(l.items[4].arrows); n != 4 {
		t.Errorf("%d in-ports, want 4", n)
	}
}

func TestMakeText(t *testing.T) {
	l := &Layout{strs: map[string]uint32{}}
	for _, c := range []struct {
		in    string
		max   int
		out   string
		width int
	}{
		{"orders", 20, "orders", 6},
		{"orders", 6, "orders", 6},
		{"orders", 5, "orde…", 5},
		{"orders", 1, "…", 1},
		{"orders", 0, "", 0},
		{"tab\there", 20, "tab here", 8},
		{"e\u0301t\u00e9", 20, "e\u0301t\u00e9", 3}, // a combining accent joins its letter
		{"データ", 5, "デー…", 5},
		{"データ", 4, "デ…", 3},
	} {
		got := l.makeText(c.in, c.max)
		s := ""
		for _, cl := range got.cl {
			s += l.str(cl.s)
		}
		if s != c.out || got.w != c.width {
			t.Errorf("makeText(%q, %d) = %q (%d cells), want %q (%d)", c.in, c.max, s, got.w, c.out, c.width)
		}
	}
}
