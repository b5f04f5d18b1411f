package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/themes"
)

// fakeGraph stands in for ui/graphview: its models in a row.
type fakeGraph struct{ models []string }

func (g *fakeGraph) Render(width, height int, selected string) []string {
	var b strings.Builder
	for _, m := range g.models {
		if m == selected {
			fmt.Fprintf(&b, "[%s] ", m)
		} else {
			fmt.Fprintf(&b, " %s  ", m)
		}
	}
	return []string{fit(b.String(), width)}
}

func (g *fakeGraph) Neighbour(selected string, dir int) string {
	for i, m := range g.models {
		if m == selected {
			switch {
			case (dir == 1 || dir == 3) && i+1 < len(g.models):
				return g.models[i+1]
			case (dir == 0 || dir == 2) && i > 0:
				return g.models[i-1]
			}
		}
	}
	return selected
}

func (g *fakeGraph) First() string { return g.models[0] }

// TestGraphFormHook: with a graph renderer wired in, v shows the graph of
// the cursor's pipeline, arrows move, tab changes pipeline, enter opens the
// selected model.
func TestGraphFormHook(t *testing.T) {
	old := newPipelineGraph
	t.Cleanup(func() { newPipelineGraph = old })
	newPipelineGraph = func(p *engine.PipelineGraph, st map[string]engine.ModelStatus, _ themes.Theme) pipelineGraph {
		g := &fakeGraph{}
		for _, task := range p.Tasks {
			g.models = append(g.models, task.Model)
			if _, ok := st[task.Model]; !ok {
				t.Errorf("no status for %s", task.Model)
			}
		}
		return g
	}
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, Options{})
	f := r.waitSettled(t, viewPipelines)
	if !strings.Contains(f, "v graph/list") {
		t.Errorf("the graph key is offered once wired:\n%s", f)
	}
	r.keys("v")
	r.waitText(t, "[ingest]", "[raw.orders]")
	r.keys("tab")
	r.waitText(t, "[core]", "[mart.daily]")
	r.keys("right")
	r.waitText(t, "[mart.hourly]")
	r.keys("enter")
	r.waitView(t, viewModel, "mart.hourly")
}

// TestTimelineHook: with a timeline renderer wired in, the model view hands
// it the units, the cursor, the zoom and each upstream with its units.
func TestTimelineHook(t *testing.T) {
	old := coverageTimelineRenderer
	t.Cleanup(func() { coverageTimelineRenderer = old })
	coverageTimelineRenderer = func(in timelineInput, width, height int) []string {
		ups := []string{}
		for _, u := range in.Upstreams {
			ups = append(ups, fmt.Sprintf("%s:%d", u.Source.Name, len(u.Units)))
		}
		return []string{fit(fmt.Sprintf("TIMELINE units=%d cursor=%d zoom=%d def=%v ups=%s", len(in.Units), in.Cursor, in.Zoom,
			in.Def != nil, strings.Join(ups, ",")), width)}
	}
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, Options{View: "model", Model: "mart.hourly"})
	r.waitText(t, "TIMELINE units=24 cursor=5 zoom=0 def=true ups=raw.orders:24")
	r.keys("-", "-", "+")
	r.waitText(t, "TIMELINE units=24 cursor=5 zoom=1")
	r.keys("?")
	r.waitText(t, "zoom in", "zoom out")
}
