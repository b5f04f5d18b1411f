package graphview

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// The lineage screen's additions: a second line in the box, an edge's own
// mark stacked over its arrow head, dashed edges of a success type, and
// colour classes that keep edges of different verdicts on routes of their
// own.

func TestLineageBoxesMarksAndDashes(t *testing.T) {
	l := NewLayout([]Node{
		{ID: 1, Label: "raw.payments", Health: Failed, Detail: "✗", Sub: "raw · 1h"},
		{ID: 2, Label: "core.daily", Health: Blocked, Sub: "core · 1d"},
		{ID: 3, Label: "ops.notify", Health: Pending},
	}, []Edge{
		{From: 1, To: 2, Type: S, Class: 2, Mark: "T✗"},
		{From: 1, To: 3, Type: S, Dashed: true, Mark: "s"},
	}, [][]int{{1}, {2, 3}})
	// Each box gets the second line; T over ✗ sits right above the data
	// edge's arrow head; the after: edge, another kind, leaves the shared
	// stem on a track of its own and runs dashed down to its "s".
	want(t, whole(l, 0, 2, Styles{}), 34, `
       ┌──────────────────┐
       │ ✗ raw.payments ✗ │
       │   raw · 1h       │
       └─────────┬────────┘
        ┌────────┤
        │        └╌╌╌╌╌╌╌╌┐
        T                 ╎
        ✗                 s
┏━━━━━━━▼━━━━━━┓  ┌───────▼──────┐
┃▸⊘ core.daily ┃  │ · ops.notify │
┃   core · 1d  ┃  │              │
┗━━━━━━━━━━━━━━┛  └──────────────┘`)
}

func TestLineageLeftToRight(t *testing.T) {
	// The same kinds of edges with the layers as columns: each stem leaves
	// its box's right border on the label's row, each edge arrives on the
	// left border with its mark before the head (T then ✗), the after:
	// edge dashed; ↑/↓ move along a column, ←/→ across.
	l := NewLayoutWith([]Node{
		{ID: 1, Label: "raw.pay", Health: Failed, Sub: "ingest"},
		{ID: 2, Label: "core.day", Health: Blocked, Sub: "core"},
		{ID: 3, Label: "ops.alert", Health: Applied},
		{ID: 4, Label: "mart.mo", Health: Unknown},
	}, []Edge{
		{From: 1, To: 2, Type: S, Class: 2, Mark: "T✗"},
		{From: 1, To: 3, Type: S, Dashed: true, Mark: "f"},
		{From: 2, To: 4, Type: S, Class: 2, Mark: "W✗"},
	}, [][]int{{1}, {2, 3}, {4}}, Options{LeftToRight: true})
	want(t, whole(l, 0, 2, Styles{}), 49, `
                  ┏━━━━━━━━━━━━┓    ┌───────────┐
             ┌──T✗▶▸⊘ core.day ┠──W✗▶ ? mart.mo │
┌───────────┐│    ┃   core     ┃    │           │
│ ✗ raw.pay ├┴┐   ┗━━━━━━━━━━━━┛    └───────────┘
│   ingest  │ ╎
└───────────┘ ╎   ┌─────────────┐
              └╌╌f▶ ✓ ops.alert │
                  │             │
                  └─────────────┘`)
	for _, c := range []struct {
		from int
		dir  Direction
		to   int
	}{{2, Down, 3}, {3, Up, 2}, {2, Right, 4}, {2, Left, 1}, {1, Down, 1}} {
		if got := l.Neighbour(c.from, c.dir); got != c.to {
			t.Errorf("Neighbour(%d, %v) = %d, want %d", c.from, c.dir, got, c.to)
		}
	}
	if x, y, w, h, _ := l.Bounds(3); x != 18 || y != 5 || w != 15 || h != 4 {
		t.Errorf("ops.alert's box at %d,%d %d×%d, want 18,5 15×4", x, y, w, h)
	}
}

func TestThousandModelLineageLeftToRight(t *testing.T) {
	// Left to right is the same ordering turned: the tree still crosses
	// nowhere, and every box is inside the picture.
	nodes, edges, waves := treeLineage(1000, 0, 1)
	l := NewLayoutWith(nodes, edges, waves, Options{Roots: []int{0}, LeftToRight: true})
	if c := l.Crossings(); c != 0 {
		t.Errorf("%d crossings left to right, want 0", c)
	}
	pw, ph := l.Size()
	for _, n := range nodes {
		if x, y, w, h, _ := l.Bounds(n.ID); x < 0 || y < 0 || x+w > pw || y+h > ph {
			t.Fatalf("node %d's box %d,%d %d×%d outside the %d×%d picture", n.ID, x, y, w, h, pw, ph)
		}
	}
}

func TestEdgesOfOneSourceSplitByClass(t *testing.T) {
	// One source, two readers, two verdicts: two nets, so the class 1
	// edge and the class 2 edge are coloured apart all the way down.
	red := lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	green := lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	l := NewLayout([]Node{{ID: 1, Label: "a"}, {ID: 2, Label: "b"}, {ID: 3, Label: "c"}},
		[]Edge{{From: 1, To: 2, Type: S, Class: 1}, {From: 1, To: 3, Type: S, Class: 2}}, nil)
	out := strings.Join(whole(l, 0, -1, Styles{Classes: []lipgloss.Style{green, red}}), "\n")
	for _, s := range []lipgloss.Style{green, red} {
		if !strings.Contains(out, s.Render("▼")) {
			t.Errorf("no arrow head in %v:\n%s", s.GetForeground(), out)
		}
	}
}

// treeLineage is a reproducible lineage of n models around one focus: an
// upstream tree (each model read by one model a layer nearer the focus)
// and a downstream tree (each model reading one), given in shuffled
// layers, so any crossing in the drawing is the ordering's fault. extra
// adds that many random edges between adjacent layers, which may force
// crossings.
func treeLineage(n, extra int, seed uint64) ([]Node, []Edge, [][]int) {
	r := rand.New(rand.NewPCG(seed, 7))
	layerOf := map[int]int{0: 0}
	nodes := []Node{{ID: 0, Label: "focus", Health: Failed}}
	var edges []Edge
	byLayer := map[int][]int{0: {0}}
	for id := 1; id < n; id++ {
		dir := 1
		if id%2 == 0 {
			dir = -1
		}
		// A parent one layer nearer the focus, from the last few layers.
		var parents []int
		for ly := 0; ly*dir >= 0 && len(byLayer[ly]) > 0; ly += dir {
			parents = byLayer[ly]
			if r.IntN(3) > 0 {
				break
			}
		}
		p := parents[r.IntN(len(parents))]
		ly := layerOf[p] + dir
		layerOf[id] = ly
		byLayer[ly] = append(byLayer[ly], id)
		nodes = append(nodes, Node{ID: id, Label: fmt.Sprintf("p%02d.model_%04d", id%17, id), Health: Health(id % int(numHealth))})
		if dir > 0 {
			edges = append(edges, Edge{From: p, To: id, Type: S})
		} else {
			edges = append(edges, Edge{From: id, To: p, Type: S})
		}
	}
	lo, hi := 0, 0
	for ly := range byLayer {
		lo, hi = min(lo, ly), max(hi, ly)
	}
	for range extra {
		ly := lo + r.IntN(hi-lo)
		a, b := byLayer[ly], byLayer[ly+1]
		edges = append(edges, Edge{From: a[r.IntN(len(a))], To: b[r.IntN(len(b))], Type: S})
	}
	var waves [][]int
	for ly := lo; ly <= hi; ly++ {
		w := byLayer[ly]
		r.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		waves = append(waves, w)
	}
	return nodes, edges, waves
}

func TestThousandModelLineageWithoutCrossings(t *testing.T) {
	// Trees can always be drawn without a crossing: the layout must find
	// such a drawing from a shuffled start.
	for seed := range uint64(3) {
		nodes, edges, waves := treeLineage(1000, 0, seed)
		l := NewLayoutWith(nodes, edges, waves, Options{Roots: []int{0}})
		if c := l.Crossings(); c != 0 {
			t.Errorf("seed %d: %d crossings in a tree lineage of %d models over %d layers, want 0", seed, c, len(nodes), len(waves))
		}
	}
}

func TestThousandModelLineageCrossingsCounted(t *testing.T) {
	// With random edges across the trees a drawing may need crossings:
	// they are counted, and printed, and never more than the shuffled
	// start had.
	nodes, edges, waves := treeLineage(1000, 200, 9)
	start := NewLayoutWith(nodes, edges, waves, Options{Roots: []int{0}})
	unordered := start.startCrossings
	t.Logf("1,000-model lineage with 200 extra edges: %d crossings after ordering (%d in the shuffled start)", start.Crossings(), unordered)
	if start.Crossings() > unordered {
		t.Errorf("ordering made it worse: %d crossings, %d at the start", start.Crossings(), unordered)
	}
}
