package graphview

// Benchmarks on bigGraph(200, 400): 200 tasks, 400 edges (each reaching up
// to 15 tasks ahead, 10% conditional), 43 waves, so 1,304 dummies carry the
// long edges; the picture is 1266×347 cells. Measured with
// `go test -bench . -benchtime 100x -run '^$' ./ui/graphview` (and -benchtime
// 1s for steadier figures) on a shared 2-CPU AMD EPYC, load average ~2:
//
//	NewLayout200              ~4.1 ms/op   2.85 MB/op   8,659 allocs/op
//	Render200Plain80x24        ~51 µs/op   47 kB/op        26 allocs/op
//	Render200Colour80x24   ~90–135 µs/op   58 kB/op       142 allocs/op
//	Render200Colour160x50 ~240–280 µs/op  222 kB/op       196 allocs/op
//
// Figures move by a third with the machine's load. Layout is once per graph change, well under a 16 ms frame; a render costs
// the window, not the graph (the coloured ones mostly pay lipgloss for each
// style's escape sequences, once per style per render).

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/graph"
)

// bigGraph is a reproducible pipeline of n tasks and e edges, each edge
// running from a task to one of the next 15, with waves from graph.Waves.
func bigGraph(tb testing.TB, n, e int) ([]Node, []Edge, [][]int) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	suffixes := []string{"orders", "customers", "events_daily", "fx"}
	nodes := make([]Node, 0, n)
	tasks := make([]graph.TaskNode, 0, n)
	for i := 1; i <= n; i++ {
		nodes = append(nodes, Node{ID: i, Label: fmt.Sprintf("core.m%03d_%s", i, suffixes[i%4]),
			Health: Health(i % int(numHealth)), Detail: fmt.Sprintf("%d/24", i%25)})
		tasks = append(tasks, graph.TaskNode{ID: i})
	}
	seen := map[[2]int]bool{}
	edges := make([]Edge, 0, e)
	var taskEdges []graph.TaskEdge
	for len(edges) < e {
		u := 1 + r.IntN(n-1)
		v := u + 1 + r.IntN(min(15, n-u))
		if seen[[2]int{u, v}] {
			continue
		}
		seen[[2]int{u, v}] = true
		typ := graph.Success
		if r.IntN(10) == 0 {
			typ = graph.DependencyType(1 + r.IntN(3))
		}
		edges = append(edges, Edge{From: u, To: v, Type: typ})
		taskEdges = append(taskEdges, graph.TaskEdge{TaskID: v, DependsOnTaskID: u, Type: typ})
	}
	g, err := graph.Build(tasks, taskEdges)
	if err != nil {
		tb.Fatal(err)
	}
	return nodes, edges, g.Waves()
}

func colourStyles() Styles {
	c := func(s string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(s)) }
	return Styles{
		Unknown: c("#888888"), Applied: c("#00ff00"), Pending: c("#aaaaaa"), Running: c("#00aaff"),
		Stale: c("#ffaa00"), Blocked: c("#ff8800"), Failed: c("#ff0000"),
		Selected: lipgloss.NewStyle().Bold(true).Reverse(true),
		Label:    lipgloss.NewStyle().Bold(true), Detail: c("#999999"),
		Edge: c("#666666"), CondEdge: c("#cc66cc"), Cross: c("#6699ff"),
	}
}

func BenchmarkNewLayout200(b *testing.B) {
	nodes, edges, waves := bigGraph(b, 200, 400)
	b.ReportAllocs()
	for b.Loop() {
		NewLayout(nodes, edges, waves)
	}
}

func benchRender(b *testing.B, width, height int, st Styles) {
	nodes, edges, waves := bigGraph(b, 200, 400)
	l := NewLayout(nodes, edges, waves)
	sx, sy := l.ScrollTo(100, width, height, 0, 0)
	b.ReportAllocs()
	for b.Loop() {
		l.Render(width, height, 100, sx, sy, st)
	}
}

func BenchmarkRender200Plain80x24(b *testing.B)   { benchRender(b, 80, 24, Styles{}) }
func BenchmarkRender200Colour80x24(b *testing.B)  { benchRender(b, 80, 24, colourStyles()) }
func BenchmarkRender200Colour160x50(b *testing.B) { benchRender(b, 160, 50, colourStyles()) }
