package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// A model's lineage across pipelines at one time (`bollhav lineage`, the
// blast radius of a failure): the models it reads and those that read it,
// N hops each way, each with the unit that holds the time, and each edge
// with its verdict for the reading unit — the same verdicts `why` gives,
// judged by the same gate.

// LineageReport is a model's neighbourhood at At.
type LineageReport struct {
	Focus string
	At    time.Time
	// Up and Down are the hops asked for each way.
	Up, Down int
	// Nodes are the models reached, by layer (the farthest upstream
	// first, the focus at layer 0, downstream after it), then by name.
	Nodes []LineageNode
	// Edges run from an upstream to the model that reads or follows it,
	// between nodes of the report, by reader then declaration order.
	Edges []LineageEdge
}

// LineageNode is one model of a lineage.
type LineageNode struct {
	Model, Pipeline string
	// Shape is spec.ShapeText's words: "fixed 1h grid", "timeless".
	Shape string
	// Layer is the hops from the focus: negative upstream, positive
	// downstream.
	Layer int
	// Window is the model's unit holding At (zero for a timeless model),
	// Status that unit's status (gate.StatusMissing without one).
	Window state.Window
	Status state.UnitStatus
	// Counts are the model's units by status, as `status` counts them.
	Counts map[state.UnitStatus]int
	// Problem says why the model was not judged at At (At before its
	// start); empty otherwise.
	Problem string
	// Strip is the statuses of the model's units around Window, in
	// window order: at most LineageStripSide before and after it (the
	// lineage screen's status strip). StripAt is Window's own unit's
	// place in it; -1 when it has none (the window is missing).
	Strip   []state.UnitStatus
	StripAt int
}

// LineageStripSide is how many units either side of a node's own unit its
// Strip holds: seven cells in all, which fit a box beside a model's name.
const LineageStripSide = 3

// LineageEdge is one dependency of a lineage and its verdict at At.
type LineageEdge struct {
	From, To string
	// After marks an explicit after: task edge; otherwise the reader
	// reads From as a data source.
	After bool
	// Contract is the data edge's level (EXACT, ENCAPSULATE, THROUGH,
	// WHOLE, EXISTS; "" for an ungated source) or the after: edge's type
	// (SUCCESS, FAILURE, ALWAYS, HAS_DATA).
	Contract string
	// Verdict is satisfied, missing, stale, outdated, skipped (a dev
	// environment trusts the upstream), error (a hard gate error),
	// ungated, or "" when the reader was not judged (Problem).
	Verdict string
	// Reason is the reader's blocked_reason entry for the edge; empty
	// when satisfied.
	Reason string
}

// The lineage verdicts.
const (
	VerdictSatisfied = "satisfied"
	VerdictMissing   = "missing"
	VerdictStale     = "stale"
	VerdictOutdated  = "outdated"
	VerdictSkipped   = "skipped"
	VerdictError     = "error"
	VerdictUngated   = "ungated"
)

// ErrLineageNeedsSpec is a lineage asked of an engine without a spec: the
// edges are the spec's.
var ErrLineageNeedsSpec = errors.New("lineage needs the spec: its edges are the spec's sources and after: entries")

// Lineage reports model's lineage, up hops upstream and down downstream,
// judged at at (the engine's clock when zero).
func (e *Engine) Lineage(ctx context.Context, model string, up, down int, at time.Time) (*LineageReport, error) {
	if e.spec == nil {
		return nil, ErrLineageNeedsSpec
	}
	if e.spec.Model(model) == nil {
		return nil, fmt.Errorf("lineage: %w", state.ModelNotFound(e.opts.Env.Suffix, model))
	}
	if up < 0 || down < 0 {
		return nil, fmt.Errorf("lineage: hops must not be negative (up %d, down %d)", up, down)
	}
	if at.IsZero() {
		at = e.now()
	}
	reads, readBy := lineageAdjacency(e.spec)
	layers := map[string]int{model: 0}
	walkLayers(layers, model, reads, -1, up)
	walkLayers(layers, model, readBy, 1, down)
	rep := &LineageReport{Focus: model, At: at, Up: up, Down: down}
	statuses, err := e.Status(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string]map[state.UnitStatus]int{}
	for _, st := range statuses {
		counts[st.Name] = st.Counts
	}
	names := make([]string, 0, len(layers))
	for n := range layers {
		names = append(names, n)
	}
	slices.Sort(names) // by name within a layer
	slices.SortStableFunc(names, func(a, b string) int { return layers[a] - layers[b] })
	for _, name := range names {
		m := e.spec.Model(name)
		node := LineageNode{Model: name, Pipeline: m.Pipeline, Shape: modelShape(m), Layer: layers[name], Counts: counts[name], StripAt: -1}
		r, err := e.Why(ctx, name, at)
		switch {
		case err == nil:
			node.Window, node.Status = r.Window, r.Status
			rep.Edges = append(rep.Edges, lineageEdges(m, r, layers)...)
			if node.Strip, node.StripAt, err = e.lineageStrip(ctx, name, r.Window); err != nil {
				return nil, fmt.Errorf("lineage: %s: %w", name, err)
			}
		case errors.Is(err, gate.ErrBeforeStart):
			node.Problem = err.Error()
		default:
			return nil, fmt.Errorf("lineage: %s: %w", name, err)
		}
		rep.Nodes = append(rep.Nodes, node)
	}
	return rep, nil
}

// lineageStrip is the statuses of model's units around w, and where w's
// own unit is among them (-1: none); a timeless model's is its one unit.
func (e *Engine) lineageStrip(ctx context.Context, model string, w state.Window) ([]state.UnitStatus, int, error) {
	span := w
	if !w.IsZero() {
		d := time.Duration(LineageStripSide) * w.Until.Sub(w.Since)
		span = state.Window{Since: w.Since.Add(-d), Until: w.Until.Add(d)}
	}
	var before, after []state.UnitStatus
	var own []state.UnitStatus
	err := e.ScanStoredUnits(ctx, model, span, nil, func(u state.Unit) error {
		switch {
		case w.IsZero() || u.Window.Overlaps(w):
			own = append(own, u.Status)
		case !u.Window.Until.After(w.Since):
			before = append(before, u.Status)
		case len(after) < LineageStripSide:
			after = append(after, u.Status)
		}
		return nil
	})
	if err != nil {
		return nil, -1, err
	}
	before = before[max(0, len(before)-LineageStripSide):]
	strip := append(before, own[:min(len(own), 1)]...)
	at := -1
	if len(own) > 0 {
		at = len(before)
	}
	return append(strip, after...), at, nil
}

// LineageHolds is the incident rooted at model's unit w, as the Incidents
// screen has it (Engine.Incidents), nil when none is: what the lineage
// screen says the root holds and marks, so its count and the Incidents
// card's are one number (RootIncident picks it out of the report).
func (e *Engine) LineageHolds(ctx context.Context, model string, w state.Window) (*gate.Incident, error) {
	rep, err := e.Incidents(ctx)
	if err != nil {
		return nil, err
	}
	return RootIncident(rep, model, w), nil
}

// RootIncident is rep's incident of model whose span meets w (both zero
// for a timeless model), the first in the report's order (failures
// first); nil when there is none.
func RootIncident(rep *gate.IncidentReport, model string, w state.Window) *gate.Incident {
	for i := range rep.Incidents {
		inc := &rep.Incidents[i]
		if inc.Model != model {
			continue
		}
		if w.IsZero() || inc.Span.IsZero() {
			if w.IsZero() && inc.Span.IsZero() {
				return inc
			}
			continue
		}
		if inc.Span.Overlaps(w) {
			return inc
		}
	}
	return nil
}

// lineageAdjacency is what each model reads or follows (its model
// sources, then its after: tasks) and, the other way, what reads or
// follows each model.
func lineageAdjacency(sp *spec.Spec) (reads, readBy map[string][]string) {
	reads, readBy = map[string][]string{}, map[string][]string{}
	add := func(reader, upstream string) {
		if sp.Model(upstream) == nil || slices.Contains(reads[reader], upstream) {
			return
		}
		reads[reader] = append(reads[reader], upstream)
		readBy[upstream] = append(readBy[upstream], reader)
	}
	for _, m := range sp.Models {
		for _, src := range m.Upstream {
			if src.Kind == spec.KindModel {
				add(m.Name, src.Name)
			}
		}
		for _, a := range m.After {
			add(m.Name, a.Task)
		}
	}
	return reads, readBy
}

// walkLayers records, breadth first from start, every model within hops
// steps along next, at layer sign × its distance; a model already placed
// keeps its layer (the focus, or one the other direction reached).
func walkLayers(layers map[string]int, start string, next map[string][]string, sign, hops int) {
	frontier := []string{start}
	for d := 1; d <= hops && len(frontier) > 0; d++ {
		var nextFrontier []string
		for _, n := range frontier {
			for _, m := range next[n] {
				if _, seen := layers[m]; !seen {
					layers[m] = sign * d
					nextFrontier = append(nextFrontier, m)
				}
			}
		}
		frontier = nextFrontier
	}
}

// lineageEdges are the edges into m's unit from upstreams of the report,
// with the verdicts r judged.
func lineageEdges(m *spec.Model, r *gate.WhyReport, layers map[string]int) []LineageEdge {
	var out []LineageEdge
	judged := map[string]gate.UpstreamReport{}
	for _, u := range r.Upstreams {
		judged[u.Upstream] = u
	}
	for _, src := range m.Upstream {
		if _, in := layers[src.Name]; !in || src.Kind != spec.KindModel {
			continue
		}
		edge := LineageEdge{From: src.Name, To: m.Name, Verdict: VerdictUngated}
		if src.Gated() {
			edge.Contract = src.Contract.String()
			if v, ok := judged[src.Name]; ok {
				edge.Verdict, edge.Reason = verdictWord(v.Verdict), v.Reason
			}
		}
		out = append(out, edge)
	}
	for _, a := range r.After {
		if _, in := layers[a.Upstream]; !in {
			continue
		}
		edge := LineageEdge{From: a.Upstream, To: m.Name, After: true, Contract: a.Edge.String(), Verdict: VerdictSatisfied}
		if !a.Satisfied {
			edge.Verdict, edge.Reason = VerdictMissing, a.Reason
		}
		out = append(out, edge)
	}
	return out
}

// verdictWord is a gated upstream's verdict in one word.
func verdictWord(v gate.Verdict) string {
	switch {
	case v.Err != nil:
		return VerdictError
	case v.Skipped:
		return VerdictSkipped
	case v.Satisfied:
		return VerdictSatisfied
	case v.Stale:
		return VerdictStale
	case len(v.Missing) == 0 && len(v.Outdated) > 0:
		return VerdictOutdated
	}
	return VerdictMissing
}

// modelShape is m's shape in spec.ShapeText's words.
func modelShape(m *spec.Model) string {
	var interval string
	flex := spec.Fix
	if m.Chunking != nil {
		interval, flex = m.Chunking.Interval.String(), m.Chunking.Flexibility
	}
	return spec.ShapeText(m.Temporality, flex, interval)
}

// Node is the report's node of model; nil when the lineage does not reach
// it.
func (r *LineageReport) Node(model string) *LineageNode {
	for i := range r.Nodes {
		if r.Nodes[i].Model == model {
			return &r.Nodes[i]
		}
	}
	return nil
}
