package tui

import (
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// Hooks for the two pure renderers beside this package, ui/graphview and
// ui/timeline. The app is given them as a renderers value (the standard
// ones adapt graph_hook.go and timeline_hook.go) and hands them to the
// views in their common; the views only see the small interfaces below. A
// nil renderer (a test may leave one out) falls back to a simple rendering
// (the list form, a one-line strip), and the keys that only make sense
// with it are disabled, so they are absent from the help.

// renderers are the drawing functions the views are given.
type renderers struct {
	// graph builds the graph form of one pipeline (graph_hook.go).
	graph func(in graphInput) pipelineGraph
	// timeline draws the model's per-window coverage timeline (one cell
	// per window at the model's grain, zoomed out Zoom steps) with, under
	// it, each gated upstream's strip on the same time axis and the
	// contract verdict of the cursor's window marked on it; exactly width
	// cells wide and at most height lines high (timeline_hook.go).
	timeline func(in timelineInput, width, height int) []string
	// visible is the time the timeline shows at width (what a frame
	// would draw), so the view can load what it needs before it draws.
	visible func(in timelineInput, width int) state.Window
	// lineage builds the lineage screen's picture (lineage_hook.go),
	// driven as a pipeline's graph is; nil lists the nodes instead.
	lineage func(in lineageInput) pipelineGraph
}

// standardRenderers are ui/graphview's and ui/timeline's.
func standardRenderers() renderers {
	return renderers{graph: newGraphForm, timeline: renderTimeline, visible: visibleTimeline, lineage: newLineageForm}
}

// pipelineGraph is one pipeline's task graph as the pipelines view's graph
// form drives it: drawn as layers (its waves) with edges, nodes marked by
// health, with one node selected, moved between with the arrow keys. It is
// rebuilt whenever the data changes; the selection and the scroll belong to
// the view, so a live reload keeps them.
type pipelineGraph interface {
	// Scroll is the scroll (the picture cell at the window's top-left)
	// that keeps the selected model in a width×height window, moved from
	// (x, y) as little as possible; a picture narrower than the window is
	// centred (a negative x).
	Scroll(selected string, width, height, x, y int) (int, int)
	// Render draws the graph in exactly height lines of exactly width cells
	// with the node of the model selected, scrolled to (x, y).
	Render(width, height int, selected string, x, y int) []string
	// Neighbour is the model next to selected in the direction: 0 up, 1
	// down, 2 left, 3 right; selected itself when there is none.
	Neighbour(selected string, dir int) string
	// First is the model selected when the graph opens.
	First() string
	// Legend explains the edges in one line.
	Legend() string
	// Size is the whole picture's width and height in cells.
	Size() (width, height int)
}

// graphInput is what the graph form is built from.
type graphInput struct {
	Pipeline *engine.PipelineGraph
	// Status is every model's status by name; Stale names the models a
	// gated downstream's freshness limit finds too old.
	Status map[string]engine.ModelStatus
	Stale  map[string]bool
	Theme  themes.Theme
}

// timelineInput is what the model view hands the coverage timeline.
type timelineInput struct {
	// Model is the model's status; Def its definition (the grid: chunking
	// start, interval, timezone), nil when it cannot be read.
	Model engine.ModelStatus
	Def   *spec.Model
	// Cursor is the unit under the cursor; nil for none. CursorLabel is
	// written beside it: its window, status, and when it was applied or
	// why it is not, in the times the toggle asks for (cursorLabel).
	Cursor      *state.Unit
	CursorLabel string
	// Zoom is how many steps out from the model's grain the user zoomed
	// (0: the grain); the renderer clamps it to its levels. Negative (the
	// default) fits Range: the finest level at which it fits the width.
	// At any level a range that fits is drawn whole, its cells as wide as
	// fills the width.
	Zoom int
	// Range is the time the timeline opens fitted to: the model's first
	// unit to the later of its last unit and its last complete window
	// (fitRange); zero when there is none.
	Range state.Window
	// Span is the model's own coverage over the loaded range.
	Span timelineSpan
	// Upstreams are the gated upstreams, each with its coverage over the
	// same range and the gate's verdict for the cursor's window when the
	// view has it.
	Upstreams []timelineUpstream
	Now       time.Time
	Theme     themes.Theme
	// State is the axis's position, kept by the view between frames and
	// updated by the renderer; nil starts afresh every frame.
	State *timelineState
}

// timelineSpan is one model's coverage over a range of time, as cheap to
// read as the store allows: the applied islands (from the coverage index:
// one entry per gap-free run, however many units) and the units that are
// not applied (bounded), so a strip zoomed out to months over an hourly
// model reads a few hundred rows, not a million.
type timelineSpan struct {
	// Loaded is the time the span holds completely: outside it a strip
	// cell shows nothing rather than a gap that is not there.
	Loaded state.Window
	// Applied are the applied islands inside Loaded (for THROUGH and WHOLE
	// also back to the upstream's start and on to its range's end, which
	// their verdict measures).
	Applied []state.Window
	// Other are the units inside Loaded that are not applied, in window
	// order; a timeless model's one unit whatever its status.
	Other []state.Unit
	// Partial is set when the bound on Other cut Loaded short.
	Partial bool
	// Stale are the applied windows inside Loaded whose applied_at is
	// older than the freshness limit the strip is held to (the tightest of
	// the model's downstream edges; a lane's own edge): drawn as stale.
	// StalePartial is set when the bound on the rows read for it was hit.
	Stale        []state.Window
	StalePartial bool
	// Outdated are the applied windows inside Loaded built under an
	// earlier definition than the model's current one: drawn as
	// outdated. Read only while the model has any; StalePartial covers
	// its bound too.
	Outdated []state.Window
}

// timelineUpstream is one gated upstream's strip under the model's.
type timelineUpstream struct {
	Source spec.Source
	Status *engine.ModelStatus
	// Def is the upstream's definition (its range), nil when unknown.
	Def  *spec.Model
	Span timelineSpan
	// Verdict is the gate's answer for this upstream and the cursor's
	// window; nil when the view does not have it (the renderer then
	// derives completeness from the span).
	Verdict *gate.Verdict
}

// timelineState is the timeline's axis between frames: the time at its
// first column at a zoom and width. Levels is how many zoom levels the
// model's grain offers, so the view can stop zooming at the last.
type timelineState struct {
	set   bool
	start time.Time
	// zoom and scale are the level drawn (the fitted one while the view's
	// zoom is negative) and its columns per cell.
	zoom   int
	scale  int
	width  int
	Levels int
	// tracks is the renderer's own cache of what it prepared from the
	// spans; the view clears it when new data arrives.
	tracks any
}
