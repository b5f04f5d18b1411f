package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/themes"
)

// The pipelines view's graph form (v): one pipeline's task graph at a time,
// drawn by the graph renderer of the view's common, with a selected model
// moved with the arrow keys.

// currentGraph is the graph form of the pipeline shown, built on demand.
func (v *pipelinesView) currentGraph() (*engine.PipelineGraph, pipelineGraph) {
	if len(v.graphs) == 0 {
		return nil, nil
	}
	var p *engine.PipelineGraph
	for _, g := range v.graphs {
		if g.Name == v.graphOf {
			p = g
		}
	}
	if p == nil {
		p = v.graphs[0]
		v.graphOf, v.graph = p.Name, nil
	}
	if v.graph == nil {
		st := make(map[string]engine.ModelStatus, len(v.models))
		for _, m := range v.models {
			st[m.Name] = m
		}
		v.graph = v.c.render.graph(graphInput{Pipeline: p, Status: st, Stale: v.stale, Theme: v.c.theme})
		if v.graphSel == "" || p.ModelName(taskIDOf(p, v.graphSel)) == "" {
			v.graphSel = v.graph.First()
		}
	}
	return p, v.graph
}

// taskIDOf is the task id of model in p, or -1.
func taskIDOf(p *engine.PipelineGraph, model string) int {
	for _, t := range p.Tasks {
		if t.Model == model {
			return t.ID
		}
	}
	return -1
}

func (v *pipelinesView) graphKey(msg tea.KeyPressMsg) tea.Cmd {
	_, g := v.currentGraph()
	if g == nil {
		return nil
	}
	dirs := []key.Binding{v.c.keys.Up, v.c.keys.Down, v.c.keys.Left, v.c.keys.Right}
	for dir, b := range dirs {
		if key.Matches(msg, b) {
			v.graphSel = g.Neighbour(v.graphSel, dir)
			return nil
		}
	}
	switch {
	case key.Matches(msg, v.c.keys.NextGraph):
		v.cycleGraph(1)
	case key.Matches(msg, v.c.keys.PrevGraph):
		v.cycleGraph(-1)
	case key.Matches(msg, v.c.keys.EdgeUp):
		if v.graphSel != "" {
			v.followEdge(true)
		}
	case key.Matches(msg, v.c.keys.EdgeDown):
		if v.graphSel != "" {
			v.followEdge(false)
		}
	case key.Matches(msg, v.c.keys.Enter):
		if v.graphSel != "" {
			v.c.openModel(v.graphSel)
			return nil
		}
	case key.Matches(msg, v.c.keys.RunModel):
		if v.graphSel != "" {
			v.c.openAction(action{kind: actionRun, model: v.graphSel, mode: spec.Discover})
			return nil
		}
	}
	return nil
}

func (v *pipelinesView) renderGraph(w, h int) []string {
	t := v.c.theme
	p, g := v.currentGraph()
	if g == nil {
		msg := "no pipeline graph: the engine has no spec (opened from the store alone)"
		if v.graphErr != nil {
			msg = oneLine(v.graphErr.Error())
		}
		return pad([]string{t.Muted.Render(" " + msg)}, w, h)
	}
	// The pipelines as tabs, the one shown in brackets (and the Selected
	// style), scrolled so that it shows.
	var names []string
	at := 0
	for i, q := range v.graphs {
		if q == p {
			names, at = append(names, t.Selected.Render("["+q.Name+"]")), i
		} else {
			names = append(names, t.Muted.Render(" "+q.Name+" "))
		}
	}
	head := " " + t.Title.Render("Pipeline") + " "
	tabs := strings.Join(names, " ")
	gh := max(1, h-3)
	v.graphX, v.graphY = g.Scroll(v.graphSel, w, gh, v.graphX, v.graphY)
	// Which ways the picture goes on past the window.
	pw, ph := g.Size()
	more := scrollHint(v.graphX, v.graphY, w, gh, pw, ph)
	if more != "" {
		more = t.Muted.Render(more + " ")
	}
	for from := 0; from < at && width(head+tabs+" "+more) > w; {
		from++
		tabs = t.Muted.Render("…") + strings.Join(names[from:], " ")
	}
	lines := []string{spread(head+tabs, more, w)}
	lines = append(lines, g.Render(w, gh, v.graphSel, v.graphX, v.graphY)...)
	lines = pad(lines, w, h-2)
	return append(lines, v.graphSummary(w), t.Muted.Render(fit(" "+g.Legend(), w)))
}

// graphSummary is the line under the graph: the selected model's health,
// counts and newest applied_at.
func (v *pipelinesView) graphSummary(w int) string {
	t := v.c.theme
	for _, m := range v.models {
		if m.Name != v.graphSel {
			continue
		}
		parts := []string{" " + t.Glyph(v.health(m)) + " " + t.Accent.Render(m.Name)}
		for _, s := range countColumns {
			if n := m.Counts[s]; n > 0 {
				parts = append(parts, t.Status(unitStatus(s)).Render(themes.Glyph(unitStatus(s))+" "+count(n)+" "+string(s)))
			}
		}
		if v.stale[m.Name] {
			parts = append(parts, t.Status(themes.Stale).Render(themes.Glyph(themes.Stale)+" stale"))
		}
		if m.LastAppliedAt != nil {
			parts = append(parts, t.Muted.Render("applied "+v.c.when(m.LastAppliedAt)))
		}
		return fit(strings.Join(parts, "  "), w)
	}
	return fit(t.Muted.Render(" nothing selected"), w)
}
