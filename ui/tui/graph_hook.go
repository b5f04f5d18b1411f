package tui

import (
	"strconv"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/tui/graphview"
)

// The pipelines view's graph form, drawn by ui/graphview: the standard
// renderers' graph.

// graphForm adapts a graphview.Layout to pipelineGraph: models by name
// outside, task ids inside.
type graphForm struct {
	p      *engine.PipelineGraph
	layout *graphview.Layout
	styles graphview.Styles
}

func newGraphForm(in graphInput) pipelineGraph {
	p := in.Pipeline
	cross := map[string][]graphview.CrossEdge{}
	for _, c := range p.Cross {
		cross[c.Task] = append(cross[c.Task], graphview.CrossEdge{Label: c.DependsOn, Type: c.Type})
	}
	nodes := make([]graphview.Node, 0, len(p.Tasks))
	for _, t := range p.Tasks {
		st, ok := in.Status[t.Model]
		nodes = append(nodes, graphview.Node{ID: t.ID, Label: t.Model, Health: graphHealth(st, ok, in.Stale[t.Model]),
			Detail: graphDetail(st, ok), Cross: cross[t.Model]})
	}
	var edges []graphview.Edge
	var waves [][]int
	if p.Graph != nil {
		edges, waves = graphview.EdgesOf(p.Graph), p.Graph.Waves()
	} else {
		ids := make(map[string]int, len(p.Tasks))
		for _, t := range p.Tasks {
			ids[t.Model] = t.ID
		}
		for _, e := range p.Edges {
			edges = append(edges, graphview.Edge{From: ids[e.DependsOn], To: ids[e.Task], Type: e.Type})
		}
	}
	return &graphForm{p: p, layout: graphview.NewLayout(nodes, edges, waves), styles: graphStyles(in.Theme)}
}

// graphHealth is a node's health from its model's counts: failed, then
// blocked, stale, running, pending, and applied when every unit is; unknown
// for a model without units.
func graphHealth(st engine.ModelStatus, ok, stale bool) graphview.Health {
	if !ok || st.Units() == 0 {
		return graphview.Unknown
	}
	switch {
	case st.Counts[state.Failed] > 0:
		return graphview.Failed
	case st.Counts[state.Blocked] > 0:
		return graphview.Blocked
	case stale:
		return graphview.Stale
	case st.Counts[state.Running] > 0:
		return graphview.Running
	case st.Counts[state.Pending] > 0:
		return graphview.Pending
	}
	return graphview.Applied
}

// graphDetail is a node's applied units of its total, "164/165"; "new" for
// a model not registered yet.
func graphDetail(st engine.ModelStatus, ok bool) string {
	switch {
	case !ok || !st.Registered:
		return "new"
	case st.Units() == 0:
		return "0 units"
	}
	return compactCount(st.Counts[state.Applied]) + "/" + compactCount(st.Units())
}

// compactCount prints a count in at most 5 cells: 999, 12.3k, 123k, 1.2M.
func compactCount(n int) string {
	switch {
	case n < 10_000:
		return strconv.Itoa(n)
	case n < 100_000:
		return strconv.FormatFloat(float64(n/100)/10, 'f', -1, 64) + "k"
	case n < 1_000_000:
		return strconv.Itoa(n/1000) + "k"
	case n < 10_000_000:
		return strconv.FormatFloat(float64(n/100_000)/10, 'f', -1, 64) + "M"
	}
	return strconv.Itoa(n/1_000_000) + "M"
}

// graphStyles are the theme's status styles on the graph's healths. The
// glyphs stay Unicode under every theme, "none" included: NO_COLOR asks for
// no colour, not for no box drawing, and every other view draws Unicode.
func graphStyles(th themes.Theme) graphview.Styles {
	return graphview.Styles{
		Unknown:  th.Status(themes.Missing),
		Applied:  th.Status(themes.Applied),
		Pending:  th.Status(themes.Pending),
		Running:  th.Status(themes.Running),
		Stale:    th.Status(themes.Stale),
		Blocked:  th.Status(themes.Blocked),
		Failed:   th.Status(themes.Failed),
		Selected: th.Selected,
		Label:    th.Base,
		Detail:   th.Muted,
		Edge:     th.Border,
		CondEdge: th.Accent.UnsetBold(),
		Cross:    th.Muted,
	}
}

func (g *graphForm) id(model string) int {
	for _, t := range g.p.Tasks {
		if t.Model == model {
			return t.ID
		}
	}
	return -1
}

func (g *graphForm) Scroll(selected string, width, height, x, y int) (int, int) {
	x, y = g.layout.ScrollTo(g.id(selected), width, height, x, y)
	if pw, _ := g.layout.Size(); pw < width {
		x = -(width - pw) / 2 // centred
	}
	return x, y
}

func (g *graphForm) Render(width, height int, selected string, x, y int) []string {
	return g.layout.Render(width, height, g.id(selected), x, y, g.styles)
}

func (g *graphForm) Neighbour(selected string, dir int) string {
	if n := g.p.ModelName(g.layout.Neighbour(g.id(selected), graphview.Direction(dir))); n != "" {
		return n
	}
	return selected
}

func (g *graphForm) First() string {
	if id, ok := g.layout.First(); ok {
		return g.p.ModelName(id)
	}
	return ""
}

func (g *graphForm) Size() (int, int) { return g.layout.Size() }

func (g *graphForm) Legend() string { return graphview.Legend(graphview.Styles{}) }

// staleModels names the models that a gated downstream's freshness limit
// finds too old: their newest applied_at is older than the limit at now.
// It judges by the newest row (LATEST); an ALL limit, which looks at the
// oldest row the level selects, may find more stale than this shows.
func staleModels(defs []*spec.Model, status map[string]engine.ModelStatus, now time.Time) map[string]bool {
	out := map[string]bool{}
	for _, m := range defs {
		for _, src := range m.Upstream {
			if !src.Gated() || src.Freshness == nil || out[src.Name] {
				continue
			}
			st, ok := status[src.Name]
			if ok && st.LastAppliedAt != nil && now.Sub(*st.LastAppliedAt) > src.Freshness.Within {
				out[src.Name] = true
			}
		}
	}
	return out
}
