package tui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/charmbracelet/x/ansi"
)

// bigLineage is a reproducible lineage report of n models around the
// focus "p00.focus": upstream and downstream trees (each model one hop
// from a model nearer the focus), over 17 pipelines, every data edge
// THROUGH with a verdict by turns; as engine.Lineage lays it out (nodes
// by layer then name).
func bigLineage(n int) *engine.LineageReport {
	r := rand.New(rand.NewPCG(3, 6))
	at := time.Date(2026, 6, 8, 16, 0, 0, 0, time.UTC)
	w := state.Window{Since: at, Until: at.Add(time.Hour)}
	rep := &engine.LineageReport{Focus: "p00.focus", At: at, Up: 8, Down: 8}
	node := func(name string, layer int) engine.LineageNode {
		return engine.LineageNode{Model: name, Pipeline: name[:3], Shape: "fixed 1h grid", Layer: layer, Window: w,
			Status: []state.UnitStatus{state.Applied, state.Blocked, state.Failed, state.Pending}[len(rep.Nodes)%4],
			Strip:  []state.UnitStatus{state.Applied, state.Applied, state.Applied, state.Failed, state.Pending}, StripAt: 3}
	}
	rep.Nodes = append(rep.Nodes, node(rep.Focus, 0))
	byLayer := map[int][]string{0: {rep.Focus}}
	verdicts := []string{engine.VerdictSatisfied, engine.VerdictMissing, engine.VerdictStale}
	for i := 1; i < n; i++ {
		dir := 1 - 2*(i%2)
		ly := 0
		for byLayer[ly+dir] != nil && r.IntN(3) > 0 && (ly+dir)*dir < 8 {
			ly += dir
		}
		parents := byLayer[ly]
		p := parents[r.IntN(len(parents))]
		name := fmt.Sprintf("p%02d.model_%04d", i%17, i)
		rep.Nodes = append(rep.Nodes, node(name, ly+dir))
		byLayer[ly+dir] = append(byLayer[ly+dir], name)
		e := engine.LineageEdge{From: p, To: name, Contract: "THROUGH", Verdict: verdicts[i%3]}
		if dir < 0 {
			e.From, e.To = name, p
		}
		rep.Edges = append(rep.Edges, e)
	}
	return rep
}

// lineageBench is an app showing a lineage view over rep, loaded.
func lineageBench(tb testing.TB, rep *engine.LineageReport, w, h int) (*App, *lineageView) {
	a := benchApp(tb)
	a.width, a.height = w, h
	v := newLineage(a.common, rep.Focus, rep.At)
	v.loaded, v.data = true, &lineageData{rep: rep}
	a.stack = append(a.stack, v)
	return a, v
}

func TestLineageGroupsABigLayerByPipeline(t *testing.T) {
	// 200 readers of one model across three pipelines: three boxes with
	// their counts, not 200; enter on one draws its models.
	rep := &engine.LineageReport{Focus: "raw.a", Nodes: []engine.LineageNode{{Model: "raw.a", Pipeline: "ingest"}}}
	for i := range 200 {
		p := []string{"core", "mart", "ops"}[i%3]
		m := fmt.Sprintf("%s.m%03d", p, i)
		rep.Nodes = append(rep.Nodes, engine.LineageNode{Model: m, Pipeline: p, Layer: 1, Status: state.Applied})
		rep.Edges = append(rep.Edges, engine.LineageEdge{From: "raw.a", To: m, Contract: "EXACT", Verdict: engine.VerdictSatisfied})
	}
	a, v := lineageBench(t, rep, 80, 24)
	frame := ansi.Strip(a.render())
	for _, want := range []string{"core ×67", "mart ×67", "ops ×66"} {
		if !strings.Contains(frame, want) {
			t.Errorf("no group %q on the screen:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "✓ core.m000") { // a box's glyph and name; the edge list names it in words
		t.Errorf("a grouped model drawn in a box of its own:\n%s", frame)
	}
	boxes, _ := lineageBoxes(rep, nil)
	if len(boxes) != 4 {
		t.Errorf("%d boxes, want the focus and three groups", len(boxes))
	}
	a.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	if !isLineageGroup(v.sel) {
		t.Fatalf("j from the focus selected %q, want a group", v.sel)
	}
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	boxes, _ = lineageBoxes(rep, v.expanded)
	if len(boxes) != 1+2+67 {
		t.Errorf("%d boxes after enter on %q, want the focus, two groups and 67 models", len(boxes), v.sel)
	}
}

func TestLineageMovesBetweenNodesAndKeepsTheCursorInView(t *testing.T) {
	// Down the layers from the focus, the selected box stays on screen
	// at 80×24: the picture pans.
	a, v := lineageBench(t, bigLineage(60), 80, 24)
	_ = a.render()
	for range 6 {
		a.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
		frame := a.render()
		if v.sel == v.model {
			t.Fatal("j did not move off the focus")
		}
		if !strings.Contains(frame, "▸") {
			t.Errorf("the selected node %s is off screen:\n%s", v.sel, frame)
		}
	}
}

// BenchmarkLineageScreen is the lineage screen on a 1,000-model lineage at
// 160×48: the first frame after the data arrives (its picture laid out,
// grouped past lineageGroupAbove a layer as the screen draws it, and with
// every group opened: a thousand boxes), and a frame after a cursor move.
func BenchmarkLineageScreen(b *testing.B) {
	rep := bigLineage(1000)
	for _, c := range []struct {
		name   string
		expand bool
	}{{"models=1000", false}, {"models=1000-ungrouped", true}} {
		a, v := lineageBench(b, rep, 160, 48)
		if c.expand {
			boxes, _ := lineageBoxes(rep, nil)
			v.expanded = map[string]bool{}
			for _, bx := range boxes {
				if bx.model == nil {
					v.expanded[bx.name] = true
				}
			}
		}
		b.Run(c.name+"/first-frame", func(b *testing.B) {
			for b.Loop() {
				v.graph = nil
				_ = a.render()
			}
		})
		b.Run(c.name+"/cursor-move", func(b *testing.B) {
			key := func(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }
			benchKeys(b, a, key('j'), key('l'), key('j'), key('h'), key('k'))
		})
	}
}

func TestLineageCutsLongNamesOnANarrowTerminal(t *testing.T) {
	// 39 cells of name: cut with "…" at 20 in a box at 80 columns, whole
	// at 160; the summary line above names it whole at both.
	name := "core.revenue_by_customer_segment_region"
	rep := &engine.LineageReport{Focus: name, Nodes: []engine.LineageNode{{Model: name, Pipeline: "core", StripAt: -1}}}
	for _, c := range []struct {
		w, h int
		box  string
	}{{80, 24, "▸? core.revenue_by_cus… "}, {160, 48, "▸? " + name + " "}} {
		a, _ := lineageBench(t, rep, c.w, c.h)
		frame := ansi.Strip(a.render())
		if !strings.Contains(frame, c.box) || !strings.Contains(frame, " "+name+" ") {
			t.Errorf("at %d×%d want the box %q and the whole name above:\n%s", c.w, c.h, c.box, frame)
		}
	}
}
