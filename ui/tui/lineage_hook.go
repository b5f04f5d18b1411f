package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/tui/graphview"
)

// The lineage screen's picture, drawn by ui/graphview: the standard
// renderers' lineage. Upstream layers above the focus, downstream below
// (graphview draws layers top to bottom, which holds two or three boxes
// across at 80 columns); each node a box of the model's name, the status
// strip of its units around the focused window and, under them, its
// pipeline and grain; each data edge marked with its contract's letter
// over its verdict's glyph and coloured by the verdict, after: edges
// dashed.

// lineageInput is what the lineage picture is built from.
type lineageInput struct {
	Report *engine.LineageReport
	// Holds is the incident rooted at the focus window (nil: none): the
	// models it holds are marked.
	Holds *gate.Incident
	// Expanded are the groups (lineageGroupKey) drawn model by model.
	Expanded map[string]bool
	Theme    themes.Theme
	// Width is the terminal's: from lineageWide, names are drawn up to
	// 40 cells before "…" (20 below), and the layers run left to right
	// when that picture fits across.
	Width int
}

// lineageForm adapts a graphview.Layout to pipelineGraph: node names
// outside (a model, or a group's key), ids inside.
type lineageForm struct {
	names  []string // by id
	ids    map[string]int
	layout *graphview.Layout
	styles graphview.Styles
}

func newLineageForm(in lineageInput) pipelineGraph {
	f := &lineageForm{ids: map[string]int{}}
	held := map[string]bool{}
	if in.Holds != nil {
		for _, m := range in.Holds.BlockedModels {
			held[m] = true
		}
	}
	boxes, into := lineageBoxes(in.Report, in.Expanded)
	var nodes []graphview.Node
	waves := map[int][]int{}
	lo, hi := 0, 0
	for _, b := range boxes {
		id := len(f.names)
		f.names = append(f.names, b.name)
		f.ids[b.name] = id
		n := b.node(held)
		n.ID = id
		nodes = append(nodes, n)
		waves[b.layer] = append(waves[b.layer], id)
		lo, hi = min(lo, b.layer), max(hi, b.layer)
	}
	var ws [][]int
	for ly := lo; ly <= hi; ly++ {
		if len(waves[ly]) > 0 {
			ws = append(ws, waves[ly])
		}
	}
	maxLabel := 20
	if in.Width >= lineageWide {
		maxLabel = 40
	}
	var edges []graphview.Edge
	for _, e := range in.Report.Edges {
		from, okF := f.ids[into[e.From]]
		to, okT := f.ids[into[e.To]]
		if okF && okT && from != to {
			edges = append(edges, lineageEdge(from, to, e))
		}
	}
	opt := graphview.Options{Roots: []int{f.ids[in.Report.Focus]}, MaxLabel: maxLabel}
	if in.Width >= lineageWide {
		// Upstream left, downstream right, where that fits across;
		// top to bottom, which holds more boxes across, otherwise.
		opt.LeftToRight = true
		if lr := graphview.NewLayoutWith(nodes, edges, ws, opt); lr.Width() <= in.Width {
			f.layout = lr
		}
		opt.LeftToRight = false
	}
	if f.layout == nil {
		f.layout = graphview.NewLayoutWith(nodes, edges, ws, opt)
	}
	f.styles = graphStyles(in.Theme)
	f.styles.Classes = lineageClasses(in.Theme)
	return f
}

// The verdicts' colour classes (graphview.Edge.Class) and glyphs.
var lineageVerdicts = []struct {
	verdict string
	status  themes.Status
	glyph   string
}{
	{engine.VerdictSatisfied, themes.Applied, "✓"},
	{engine.VerdictMissing, themes.Failed, "✗"},
	{engine.VerdictStale, themes.Stale, "~"},
	{engine.VerdictOutdated, themes.Outdated, "≠"},
	{engine.VerdictSkipped, themes.Pending, "-"},
	{engine.VerdictError, themes.Failed, "!"},
}

func lineageClasses(th themes.Theme) []lipgloss.Style {
	out := make([]lipgloss.Style, len(lineageVerdicts))
	for i, v := range lineageVerdicts {
		out[i] = th.Status(v.status)
	}
	return out
}

// contractLetters are the one-letter marks of the contracts and of the
// after: edges' types, the legend's.
var contractLetters = map[string]string{
	"EXACT": "=", "ENCAPSULATE": "E", "THROUGH": "T", "WHOLE": "W", "EXISTS": "X",
	"SUCCESS": "s", "FAILURE": "f", "ALWAYS": "a", "HAS_DATA": "d",
}

// lineageLegend explains the marks in one line.
func lineageLegend() string {
	return "= EXACT E ENCAPSULATE T THROUGH W WHOLE X EXISTS · ✓ satisfied ✗ missing ~ stale ≠ outdated · ╎ after:"
}

// lineageEdge is e drawn: its contract's letter over its verdict's glyph,
// in its verdict's colour; an after: edge dashed.
func lineageEdge(from, to int, e engine.LineageEdge) graphview.Edge {
	ge := graphview.Edge{From: from, To: to, Dashed: e.After, Mark: contractLetters[e.Contract]}
	for i, v := range lineageVerdicts {
		if v.verdict == e.Verdict {
			ge.Class = uint8(i + 1)
			ge.Mark += v.glyph
		}
	}
	return ge
}

// lineageHealths are the healths of a node's unit statuses at the focus;
// any other (no unit: missing) is Unknown.
var lineageHealths = map[state.UnitStatus]graphview.Health{
	state.Applied: graphview.Applied, state.Failed: graphview.Failed, state.Blocked: graphview.Blocked,
	state.Running: graphview.Running, state.Pending: graphview.Pending,
}

// lineageHealth is a node's health from its unit's status at the focus;
// Unknown when it was not judged.
func lineageHealth(n *engine.LineageNode) graphview.Health {
	if n.Problem != "" {
		return graphview.Unknown
	}
	return lineageHealths[n.Status]
}

// lineageStrip is a node's units around the focus as glyphs, its own in
// brackets: "✓✓✓[✗]✓✓✓"; "[?]" when the focused window has no unit.
func lineageStrip(n *engine.LineageNode) string {
	var b strings.Builder
	for i, s := range n.Strip {
		g := themes.Glyph(unitStatus(s))
		if i == n.StripAt {
			g = "[" + g + "]"
		}
		b.WriteString(g)
	}
	if n.StripAt < 0 && n.Problem == "" {
		b.WriteString("[?]")
	}
	return b.String()
}

func (f *lineageForm) id(name string) int {
	if id, ok := f.ids[name]; ok {
		return id
	}
	return -1
}

func (f *lineageForm) Scroll(selected string, width, height, x, y int) (int, int) {
	x, y = f.layout.ScrollTo(f.id(selected), width, height, x, y)
	if pw, _ := f.layout.Size(); pw < width {
		x = -(width - pw) / 2
	}
	return x, y
}

func (f *lineageForm) Render(width, height int, selected string, x, y int) []string {
	return f.layout.Render(width, height, f.id(selected), x, y, f.styles)
}

func (f *lineageForm) Neighbour(selected string, dir int) string {
	if id := f.layout.Neighbour(f.id(selected), graphview.Direction(dir)); id >= 0 && id < len(f.names) {
		return f.names[id]
	}
	return selected
}

func (f *lineageForm) First() string {
	if id, ok := f.layout.First(); ok {
		return f.names[id]
	}
	return ""
}

func (f *lineageForm) Size() (int, int) { return f.layout.Size() }

func (f *lineageForm) Legend() string { return lineageLegend() }
