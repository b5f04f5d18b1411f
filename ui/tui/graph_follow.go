package tui

import (
	"slices"
	"strings"

	"github.com/bollhav/bollhav/themes"
)

// The graph form follows the pipelines' edges: [ moves the selection to
// an upstream of the selected model, ] to a downstream, across pipelines
// too — a cross-pipeline edge switches the graph to the other pipeline —
// so the chain from a blocked mart back to the failed source is a few key
// presses, whatever the layout puts beside it. With several, the worst
// (failed, blocked, stale, …) is chosen and the footer names the others.

// graphNeighbour is a model an edge leads to, and the pipeline it is in.
type graphNeighbour struct{ model, pipeline string }

// edgeNeighbours are the models one edge from model, upstream or
// downstream, in every pipeline's graph.
func (v *pipelinesView) edgeNeighbours(model string, upstream bool) []graphNeighbour {
	var out []graphNeighbour
	add := func(n graphNeighbour) {
		if n.model != "" && n.model != model && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, p := range v.graphs {
		for _, e := range p.Edges {
			switch {
			case upstream && e.Task == model:
				add(graphNeighbour{e.DependsOn, p.Name})
			case !upstream && e.DependsOn == model:
				add(graphNeighbour{e.Task, p.Name})
			}
		}
		for _, e := range p.Cross {
			switch {
			case upstream && e.Task == model && e.Pipeline != "":
				add(graphNeighbour{e.DependsOn, e.Pipeline})
			case !upstream && e.DependsOn == model:
				add(graphNeighbour{e.Task, p.Name})
			}
		}
	}
	return out
}

// healthRank orders statuses worst first, for choosing where to go.
var healthRank = map[themes.Status]int{themes.Failed: 0, themes.Blocked: 1, themes.Stale: 2, themes.Missing: 3,
	themes.Running: 4, themes.Pending: 5, themes.Applied: 6}

// followEdge moves the graph's selection one edge up or down stream.
func (v *pipelinesView) followEdge(upstream bool) {
	way := "downstream"
	if upstream {
		way = "upstream"
	}
	ns := v.edgeNeighbours(v.graphSel, upstream)
	if len(ns) == 0 {
		v.c.flash(v.graphSel+" has nothing "+way+" in the graph", false)
		return
	}
	rank := func(n graphNeighbour) int {
		for _, m := range v.models {
			if m.Name == n.model {
				return healthRank[v.health(m)]
			}
		}
		return len(healthRank)
	}
	slices.SortStableFunc(ns, func(a, b graphNeighbour) int { return rank(a) - rank(b) })
	to := ns[0]
	if to.pipeline != v.graphOf {
		v.graphOf, v.graph, v.graphX, v.graphY = to.pipeline, nil, 0, 0
	}
	v.graphSel = to.model
	msg := way + ": " + to.model
	if to.pipeline != "" {
		msg += " (pipeline " + to.pipeline + ")"
	}
	if len(ns) > 1 {
		var others []string
		for _, n := range ns[1:] {
			others = append(others, n.model)
		}
		msg += " · also " + strings.Join(others, ", ")
	}
	v.c.flash(msg, false)
}

// cycleGraph shows the next pipeline's graph (step 1) or the previous one
// (-1).
func (v *pipelinesView) cycleGraph(step int) {
	for i, p := range v.graphs {
		if p.Name == v.graphOf {
			n := len(v.graphs)
			v.graphOf, v.graph, v.graphSel = v.graphs[((i+step)%n+n)%n].Name, nil, ""
			v.graphX, v.graphY = 0, 0
			return
		}
	}
}
