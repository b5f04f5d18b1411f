package ui

import (
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// Hooks for the two pure renderers being written beside this package,
// ui/graphview and ui/timeline. Each is a nil function value until its
// package is wired in; the views fall back to a simple rendering meanwhile
// (the list form, a one-line strip), and the keys that only make sense with
// them are disabled, so they are absent from the help. Wiring one in is an
// assignment in an init function of a file here (graph_hook.go,
// timeline_hook.go); nothing else in the views changes.

// pipelineGraph is one pipeline's task graph as the pipelines view's graph
// form drives it: drawn as layers (its waves) with edges, nodes marked by
// health, with one node selected, moved between with the arrow keys.
type pipelineGraph interface {
	// Render draws the graph in width×height cells (every line exactly
	// width) with the node of the model selected, scrolled so it shows.
	Render(width, height int, selected string) []string
	// Neighbour is the model next to selected in the direction: 0 up, 1
	// down, 2 left, 3 right; selected itself when there is none.
	Neighbour(selected string, dir int) string
	// First is the model selected when the graph opens.
	First() string
}

// newPipelineGraph builds the graph form of one pipeline from the engine's
// graph and its models' statuses (by model name), drawn in the theme.
//
// TODO(ui/graphview): wire it in graph_hook.go, adapting graphview's API:
//
//	newPipelineGraph = func(p *engine.PipelineGraph, st map[string]engine.ModelStatus, th themes.Theme) pipelineGraph {
//		nodes := make([]graphview.Node, len(p.Tasks)) // ID: task id, Label: model,
//		// Health: from health(st[model].Counts), Detail: "22/24", Cross: p.Cross of the task
//		l := graphview.NewLayout(nodes, graphview.EdgesOf(p.Graph), p.Graph.Waves())
//		return &graphForm{p: p, layout: l, styles: graphview.Styles{...from th...}}
//	}
//
// where graphForm.Render keeps its own scroll with Layout.ScrollTo and calls
// Layout.Render(width, height, taskID(selected), scrollX, scrollY, styles),
// Neighbour maps Layout.Neighbour(taskID, graphview.Direction(dir)) back to a
// model name, and First is Layout.First().
var newPipelineGraph func(p *engine.PipelineGraph, status map[string]engine.ModelStatus, th themes.Theme) pipelineGraph

// timelineInput is what the model view hands the coverage timeline.
type timelineInput struct {
	// Model is the model's status; Def its definition (the grid: chunking
	// start, interval, timezone), nil when it cannot be read.
	Model engine.ModelStatus
	Def   *engine.Model
	// Units are the model's loaded units in window order; Cursor indexes
	// the unit under the cursor (-1 for none).
	Units  []state.Unit
	Cursor int
	// Zoom is how many steps out from the model's grain the user zoomed
	// (0: one cell per window); the renderer clamps it to its levels.
	Zoom int
	// Upstreams are the gated upstreams, each with its units over the span
	// of the loaded units.
	Upstreams []timelineUpstream
	Theme     themes.Theme
}

// timelineUpstream is one gated upstream's strip under the model's.
type timelineUpstream struct {
	Source engine.Source
	Status *engine.ModelStatus
	Units  []state.Unit
}

// coverageTimelineRenderer draws the model's per-window coverage timeline
// (one cell per window at the model's grain, zoomed out Zoom steps) with,
// under it, each gated upstream's strip on the same time axis and the
// contract verdict of the cursor's window marked on it; at most width cells
// wide and height lines high. While it is nil the model view draws one line
// of the loaded units' glyphs and the zoom keys are disabled.
//
// TODO(ui/timeline): wire it in timeline_hook.go, adapting timeline's API:
//
//	coverageTimelineRenderer = func(in timelineInput, width, height int) []string {
//		grid := state.NewGrid(in.Def.Chunking.Start, in.Def.Chunking.Interval, in.Def.Chunking.Location)
//		zooms := timeline.Zooms(in.Def.Chunking.Interval)
//		axis := timeline.NewAxis(grid, zooms[min(in.Zoom, len(zooms)-1)], start, width)
//		v := timeline.View{Axis: axis, Model: timeline.NewTrack(segments(in.Units), extent), Cursor: ...,
//			Lanes: one per in.Upstreams (Track from its Units, Contract from Source.Contract/Freshness)}
//		return timeline.Render(v, height)
//	}
var coverageTimelineRenderer func(in timelineInput, width, height int) []string

// timelineHeight is how many lines the model view gives the timeline when
// the renderer is wired in.
const timelineHeight = 8
