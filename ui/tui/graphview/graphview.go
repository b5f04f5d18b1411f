package graphview

import (
	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/graph"
)

// Health is how a task's model is doing, the fact its node's colour and glyph
// show. The zero value is Unknown.
type Health int

// The healths a node can show. Their glyphs match the themes package's
// status glyphs, so a node reads the same as a status anywhere else.
const (
	Unknown Health = iota // no unit state yet
	Applied               // every unit applied
	Pending               // units waiting to run
	Running               // a unit is running
	Stale                 // applied, but too old for a freshness contract
	Blocked               // some units blocked by an upstream
	Failed                // a unit (or the task's last attempt) failed
	numHealth
)

var healthNames = [numHealth]string{"unknown", "applied", "pending", "running", "stale", "blocked", "failed"}

// String returns the health's name, such as "blocked".
func (h Health) String() string {
	if h < 0 || h >= numHealth {
		return "unknown"
	}
	return healthNames[h]
}

var (
	healthGlyphs = [numHealth]string{"?", "✓", "·", "↻", "~", "⊘", "✗"}
	healthASCII  = [numHealth]string{"?", "+", ".", "*", "~", "#", "x"}
)

// Glyph is the health's one-cell symbol, in ASCII when ascii is set. Every
// health has its own, so a node never says its health by colour alone.
func (h Health) Glyph(ascii bool) string {
	if h < 0 || h >= numHealth {
		h = Unknown
	}
	if ascii {
		return healthASCII[h]
	}
	return healthGlyphs[h]
}

// Node is one task of the pipeline: its id (the engine's task id), the label
// drawn in its box (the model name), its health and a short detail shown
// after the glyph, such as "24/24" applied units.
type Node struct {
	ID     int
	Label  string
	Health Health
	Detail string
	// Cross lists the task's dependencies on tasks of other pipelines, drawn
	// as a stub beside the box ("◄─ ingest.raw_orders", "+N" for more).
	Cross []CrossEdge
	// Sub is a second line under the label, in the detail's style (the
	// lineage screen's pipeline and grain); a layout with any node's Sub
	// gives every box the line.
	Sub string
}

// CrossEdge is a dependency on a task outside the pipeline: Label names the
// upstream (say "ingest.raw_orders", pipeline and model) and Type is the
// dependency's edge type. engine.CrossEdge maps onto it directly.
type CrossEdge struct {
	Label string
	Type  graph.DependencyType
}

// Edge is a same-pipeline dependency: To waits on From, so the arrow runs
// from the upstream From down to To. A graph.TaskEdge is
// Edge{From: DependsOnTaskID, To: TaskID, Type: Type}; see EdgesOf.
type Edge struct {
	From, To int
	Type     graph.DependencyType
	// Class colours the edge with Styles.Classes[Class-1] (the lineage
	// screen's verdicts); 0 colours it by its type (Edge or CondEdge).
	Class uint8
	// Dashed draws the edge dashed, as a conditional one, whatever its
	// type: the lineage's after: task edges beside its data edges.
	Dashed bool
	// Mark is written just above the arrow head, one cell a row from the
	// top (at most two: a contract's letter over its verdict's glyph);
	// empty, a conditional type's letter is.
	Mark string
}

// maxClasses is how many colour classes edges can have; maxMark how many
// cells of a mark are drawn.
const (
	maxClasses = 8
	maxMark    = 2
)

// EdgesOf returns every same-pipeline edge of g as Edges, in task order.
func EdgesOf(g *graph.DependencyGraph) []Edge {
	var out []Edge
	for _, id := range g.TaskIDs() {
		for _, e := range g.DependenciesOf(id) {
			out = append(out, Edge{From: e.DependsOnTaskID, To: e.TaskID, Type: e.Type})
		}
	}
	return out
}

// Direction is an arrow key's direction for Neighbour.
type Direction int

// The four directions: Up and Down move between layers (waves), Left and
// Right within one.
const (
	Up Direction = iota
	Down
	Left
	Right
)

// Options tune NewLayoutWith; a zero field takes its default.
type Options struct {
	// MaxLabel is the widest a node label or a cross-pipeline stub's label
	// is drawn, in cells, before it is cut with "…". Default 20.
	MaxLabel int
	// MaxDetail is the widest a node's detail is drawn. Default 12.
	MaxDetail int
	// LeftToRight lays the layers out as columns, left to right, each a
	// column of boxes, edges leaving a box's right border and arriving on
	// the next one's left (the lineage screen where it fits across); cross
	// stubs are not drawn in it.
	LeftToRight bool
	// Roots are the nodes (ids) a depth-first first ordering grows from,
	// such as a lineage's focus; see Layout.depthFirst.
	Roots []int
}

// Styles colour the picture. Only colours and text attributes (bold,
// reverse, …) are used: widths, padding, margins and borders are ignored, so
// no style can change the picture's geometry. The zero Styles draws plain
// text with no escape sequences (NO_COLOR), and the themes package supplies
// coloured ones.
type Styles struct {
	// Per health: the node's box border and health glyph.
	Unknown, Applied, Pending, Running, Stale, Blocked, Failed lipgloss.Style
	// Selected is laid over the selected node's box, label and detail (the
	// health style still fills in what Selected leaves unset, such as the
	// foreground).
	Selected lipgloss.Style
	// Label is a node's label; Detail its detail text.
	Label, Detail lipgloss.Style
	// Edge draws SUCCESS edges; CondEdge the conditional ones (FAILURE,
	// ALWAYS, HAS_DATA), their letters and their arrow heads.
	Edge, CondEdge lipgloss.Style
	// Cross draws cross-pipeline stubs.
	Cross lipgloss.Style
	// Classes colour the edges of Edge.Class 1, 2, … (at most
	// maxClasses), their arrow heads and marks.
	Classes []lipgloss.Style
	// ASCII draws with -|+v> and plain glyphs instead of box drawing, for
	// terminals without it.
	ASCII bool
}

// Health returns the style of health h.
func (s Styles) Health(h Health) lipgloss.Style {
	switch h {
	case Applied:
		return s.Applied
	case Pending:
		return s.Pending
	case Running:
		return s.Running
	case Stale:
		return s.Stale
	case Blocked:
		return s.Blocked
	case Failed:
		return s.Failed
	}
	return s.Unknown
}

// edgeLetter is the letter written on a conditional edge just above its
// arrow head, so its type reads without colour and in ASCII; SUCCESS edges,
// the usual kind, carry none.
func edgeLetter(t graph.DependencyType) string {
	switch t {
	case graph.Failure:
		return "f"
	case graph.Always:
		return "a"
	case graph.HasData:
		return "d"
	}
	return ""
}

// Legend explains the edge drawing in one line, for a help view or a footer:
// which line is which edge type, and the cross-pipeline stub.
func Legend(st Styles) string {
	c := charsFor(st.ASCII)
	return c.v + " on success   " + c.vCond + "f on failure   " + c.vCond + "a always   " +
		c.vCond + "d has data   " + c.stubArrow + c.h + " other pipeline"
}
