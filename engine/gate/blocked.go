package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// BlockedFilter narrows Blocked to one model or one pipeline; the zero
// filter lists every blocked unit of the environment.
type BlockedFilter struct {
	Model    string
	Pipeline string
}

// BlockedUnit is one blocked unit with its reason and what it holds downstream.
type BlockedUnit struct {
	Model    string
	Pipeline string
	// Window is the unit's window; zero for a timeless model's existence row.
	Window state.Window
	// Status is blocked, or failed in a Triage listing.
	Status state.UnitStatus
	// Reason is the blocked_reason the last gate evaluation recorded.
	Reason string
	// Error is a failed unit's error (Triage); empty for a blocked one.
	Error    string
	Attempts int
	// UpdatedAt is when the unit last changed (became blocked).
	UpdatedAt time.Time
	// Holds counts the units that wait on this one, directly or
	// transitively — what it holds (docs/semantics.md, "Held units"): units of every model downstream of this unit's model
	// through gated edges (see downstreamReach for how far a window reaches
	// through each contract level; EXISTS edges do not wait on data and are
	// not followed) whose window overlaps the reached range and whose status
	// is not applied (pending, running, blocked or failed). A timeless unit
	// reaches every unit of its downstream models, and every unit of a
	// timeless downstream model is reached. The unit itself and the other
	// units of its own model are not counted.
	Holds int
	// Readiness is what the gate says of the unit now (Ready: its
	// upstreams caught up, and a run would take it), when the caller
	// judged it — the UI's live index does (Live.Readiness); zero
	// otherwise.
	Readiness Readiness
}

// Blocked lists every blocked unit of the environment (of f.Model, or of
// the models of f.Pipeline), what holds the most first, then by model and
// since. Units are streamed from the store by status, never loaded whole:
// only the blocked units themselves and the windows of the outstanding
// units of their downstream models are held, so it stays cheap for a store
// of 100,000 units. It works from the store alone (a nil Spec) too. An
// unknown model or pipeline is an error.
func (g *Reader) Blocked(ctx context.Context, f BlockedFilter) ([]BlockedUnit, error) {
	return g.stuck(ctx, f, []state.UnitStatus{state.Blocked})
}

// Triage lists the failed and the blocked units the filter selects, each
// with what it holds counted as Blocked counts it: the units an
// operator has to look at, in one queue. What holds the most first; at equal
// holds a failed unit comes before a blocked one (a failure never heals
// by itself), then by model and since. A failed unit's Error is its error;
// its Reason is empty.
func (g *Reader) Triage(ctx context.Context, f BlockedFilter) ([]BlockedUnit, error) {
	return g.stuck(ctx, f, []state.UnitStatus{state.Failed, state.Blocked})
}

// stuck lists the units of statuses (failed, blocked) of the models f
// selects with what they hold, ordered as Triage says.
func (g *Reader) stuck(ctx context.Context, f BlockedFilter, statuses []state.UnitStatus) ([]BlockedUnit, error) {
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return nil, err
	}
	names, err := lin.selectModels(g, f)
	if err != nil {
		return nil, err
	}
	env := g.Env.Suffix
	var out []BlockedUnit
	keep := func(u state.Unit) error {
		out = append(out, blockedOf(u, lin))
		return nil
	}
	if f.Model == "" && f.Pipeline == "" {
		// Every model: one scan of the environment, not a statement a
		// model (ten thousand round trips on a large platform).
		if err := g.Store.ScanUnits(ctx, state.UnitQuery{Env: env, Statuses: statuses}, keep); err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, fmt.Errorf("reading the %s units: %w", joinStatuses(statuses), err)
		}
		names = nil
	}
	for _, name := range names {
		err := g.Store.ScanUnits(ctx, state.UnitQuery{Env: env, Model: name, Statuses: statuses}, keep)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, fmt.Errorf("reading the %s units of %s: %w", joinStatuses(statuses), name, err)
		}
	}
	counter := newReachCounter(g, lin, outstandingStatuses)
	for i := range out {
		if out[i].Holds, err = counter.count(ctx, out[i].Model, out[i].Window); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, stuckOrder)
	return out, nil
}

// stuckOrder is Triage's order: what holds the most first, a failed unit before a
// blocked one, then by model and window.
func stuckOrder(a, b BlockedUnit) int {
	if c := cmp.Compare(b.Holds, a.Holds); c != 0 {
		return c
	}
	if c := cmp.Compare(stuckRank(a.Status), stuckRank(b.Status)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Model, b.Model); c != 0 {
		return c
	}
	if c := a.Window.Since.Compare(b.Window.Since); c != 0 {
		return c
	}
	return a.Window.Until.Compare(b.Window.Until)
}

// stuckRank puts failed units before blocked ones at equal holds.
func stuckRank(s state.UnitStatus) int {
	if s == state.Failed {
		return 0
	}
	return 1
}

func joinStatuses(ss []state.UnitStatus) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " and ")
}

// outstandingStatuses are the statuses of a unit that is not applied.
var outstandingStatuses = []state.UnitStatus{state.Pending, state.Running, state.Blocked, state.Failed}

// gatedEdge is a gated upstream edge, seen from the upstream: down reads it
// at level.
type gatedEdge struct {
	down  string
	level spec.ContractLevel
}

// gatedLineage is the lineage of gated edges between the models known to
// the environment: the spec's models (their upstream lists as the spec
// declares them) and the registered ones (as their stored definitions
// declare them, for models of other specs). It is what holds and releases
// walk downstream; graph.Lineage cannot carry the contract level an edge
// waits at, which decides how far a window reaches.
type gatedLineage struct {
	// names lists every known model, sorted.
	names []string
	down  map[string][]gatedEdge
	// afterDown names, by upstream task, the models with an after: edge
	// onto it: a unit held by that edge waits on it too.
	afterDown map[string][]string
	timeless  map[string]bool
	pipeline  map[string]string
	// recs are the registrations it was built from, by name.
	recs map[string]state.ModelRecord
}

// gatedLineage builds the lineage of the environment's gated edges. An edge
// the environment does not gate (deactivate_for_dev in a suffixed run) and
// an EXISTS edge (it never waits on data) are left out.
func (g *Reader) gatedLineage(ctx context.Context) (*gatedLineage, error) {
	recs, err := g.Store.Models(ctx, g.Env.Suffix)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models: %w", err)
	}
	l := &gatedLineage{down: map[string][]gatedEdge{}, afterDown: map[string][]string{}, timeless: map[string]bool{}, pipeline: map[string]string{},
		recs: make(map[string]state.ModelRecord, len(recs))}
	models := map[string]*spec.Model{}
	for _, rec := range recs {
		l.pipeline[rec.Name] = rec.Pipeline
		l.timeless[rec.Name] = rec.Temporality == spec.Timeless.String()
		if g.Spec.Model(rec.Name) != nil {
			// The spec's definition stands for it, below, and the stored
			// one is never decoded (spec.RecordShape): it is not kept for
			// the length of a report (13 MB at 10,000 models).
			rec.Definition = nil
			l.recs[rec.Name] = rec
			continue
		}
		l.recs[rec.Name] = rec
		if m, err := spec.ModelFromRecord(rec); err == nil {
			models[rec.Name] = m
		} else {
			// A definition this bollhav cannot read still has units; it
			// only contributes no edges.
			models[rec.Name] = &spec.Model{Name: rec.Name, Pipeline: rec.Pipeline}
		}
	}
	if g.Spec != nil {
		for _, m := range g.Spec.Models {
			models[m.Name] = m
			l.pipeline[m.Name] = m.Pipeline
			if _, registered := l.timeless[m.Name]; !registered {
				l.timeless[m.Name] = m.Temporality == spec.Timeless
			}
		}
	}
	for name, m := range models {
		l.names = append(l.names, name)
		for _, src := range m.Upstream {
			if !src.Gated() || src.Contract == spec.Exists || m.GateSkipped(src, g.Env) {
				continue
			}
			l.down[src.Name] = append(l.down[src.Name], gatedEdge{down: name, level: src.Contract})
		}
		for _, a := range m.After {
			l.afterDown[a.Task] = append(l.afterDown[a.Task], name)
		}
	}
	sort.Strings(l.names)
	for _, ds := range l.down {
		slices.SortFunc(ds, func(a, b gatedEdge) int { return cmp.Compare(a.down, b.down) })
	}
	return l, nil
}

// waitsOn is every model that waits on model, directly or through others,
// by gated edges and after: edges alike: the models whose units a fix of
// model can release.
func (l *gatedLineage) waitsOn(model string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		for _, d := range l.afterDown[name] {
			if !out[d] {
				out[d] = true
				walk(d)
			}
		}
		for _, e := range l.down[name] {
			if !out[e.down] {
				out[e.down] = true
				walk(e.down)
			}
		}
	}
	walk(model)
	return out
}

// selectModels applies a BlockedFilter: the models it names, sorted.
func (l *gatedLineage) selectModels(g *Reader, f BlockedFilter) ([]string, error) {
	var out []string
	for _, n := range l.names {
		if f.Model != "" && n != f.Model {
			continue
		}
		if f.Pipeline != "" && l.pipeline[n] != f.Pipeline {
			continue
		}
		out = append(out, n)
	}
	if len(out) > 0 {
		return out, nil
	}
	if f.Model != "" {
		if _, known := l.pipeline[f.Model]; known {
			return nil, fmt.Errorf("model %s is in pipeline %s, not %s", f.Model, l.pipeline[f.Model], f.Pipeline)
		}
		if g.Spec != nil {
			return nil, spec.UnknownModelError(g.Spec, f.Model)
		}
		return nil, fmt.Errorf("unknown model %q: not registered in %s", f.Model, g.Env)
	}
	if f.Pipeline != "" {
		var ps []string
		for _, p := range l.pipeline {
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
		slices.Sort(ps)
		return nil, fmt.Errorf("unknown pipeline %q: the pipelines are %s", f.Pipeline, strings.Join(ps, ", "))
	}
	return nil, nil
}

// reachKind is how far a range of an upstream reaches into a downstream
// model's units, ordered from narrowest to widest.
type reachKind uint8

const (
	// The zero reachKind is no reach: what downstreamReach reads for a
	// model it has not reached yet, below every other.
	_ reachKind = iota
	// reachSame: the units whose window overlaps the range.
	reachSame
	// reachFrom: the units whose window ends after the range begins.
	reachFrom
	// reachAll: every unit of the model.
	reachAll
)

// widen is how far a reach into an upstream carries across a gated edge at
// level: EXACT and ENCAPSULATE look only at the downstream unit's own
// window, so the range carries as it is; THROUGH waits on the prefix up to
// the unit's until, so every unit ending after the range begins waits;
// WHOLE waits on the whole upstream, so every unit waits.
func widen(k reachKind, level spec.ContractLevel) reachKind {
	switch level {
	case spec.Through:
		return max(k, reachFrom)
	case spec.Whole:
		return reachAll
	}
	return k
}

// downstreamReach walks the gated lineage down from model, which a range
// reaches at start, and returns how far the range reaches into each
// downstream model (model itself left out). Reaches only widen, so the walk
// ends even on a cyclic lineage.
func (l *gatedLineage) downstreamReach(model string, start reachKind) map[string]reachKind {
	out := map[string]reachKind{model: start}
	queue := []string{model}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, ed := range l.down[u] {
			k := widen(out[u], ed.level)
			if l.timeless[ed.down] {
				k = reachAll // its one row waits on the whole upstream
			}
			if k > out[ed.down] {
				out[ed.down] = k
				queue = append(queue, ed.down)
			}
		}
	}
	delete(out, model)
	return out
}

// windowIndex holds the windows of one model's units of some statuses,
// sorted by since and by until separately, so the units overlapping a range
// are counted with two binary searches: overlapping [a, b) is since < b
// minus until <= a (a unit ending by a began before b).
type windowIndex struct {
	// sinces and untils in microseconds since the epoch, each sorted: a
	// third of time.Time's size, for an index that holds every outstanding
	// unit of a large platform.
	sinces, untils []int64
	// zero counts units with a zero window (a timeless existence row).
	zero int
}

func (ix *windowIndex) count(k reachKind, w state.Window) int {
	n := len(ix.sinces)
	endedBy := func(t int64) int { // untils <= t
		return sort.Search(n, func(i int) bool { return ix.untils[i] > t })
	}
	switch k {
	case reachAll:
		return n + ix.zero
	case reachFrom:
		return n - endedBy(w.Since.UnixMicro())
	case reachSame:
		until := w.Until.UnixMicro()
		begunBefore := sort.Search(n, func(i int) bool { return ix.sinces[i] >= until })
		return begunBefore - endedBy(w.Since.UnixMicro())
	}
	return 0
}

// reachCounter counts, for a window of a model, the downstream units of
// the given statuses that the window reaches. It reads each downstream
// model's units once (their windows only) and the lineage's reach once per
// upstream model, so counting for many windows costs binary searches.
type reachCounter struct {
	g        *Reader
	lin      *gatedLineage
	statuses []state.UnitStatus
	idx      map[string]*windowIndex
	reach    map[string]map[string]reachKind
	// windows, when set, reads the outstanding units' windows alone
	// (state.StuckReader.OutstandingWindows, statuses being
	// outstandingStatuses) instead of scanning whole units.
	windows state.StuckReader
}

func newReachCounter(g *Reader, lin *gatedLineage, statuses []state.UnitStatus) *reachCounter {
	return &reachCounter{g: g, lin: lin, statuses: statuses, idx: map[string]*windowIndex{}, reach: map[string]map[string]reachKind{}}
}

// count is the number of units downstream of model that w reaches; a zero
// w (a timeless existence row) reaches every unit of every downstream model.
func (c *reachCounter) count(ctx context.Context, model string, w state.Window) (int, error) {
	start := reachSame
	if w.IsZero() {
		start = reachAll
	}
	key := fmt.Sprintf("%d %s", start, model)
	reach, ok := c.reach[key]
	if !ok {
		reach = c.lin.downstreamReach(model, start)
		c.reach[key] = reach
	}
	n := 0
	for d, k := range reach {
		ix, err := c.index(ctx, d)
		if err != nil {
			return 0, err
		}
		n += ix.count(k, w)
	}
	return n, nil
}

func (c *reachCounter) index(ctx context.Context, model string) (*windowIndex, error) {
	if ix, ok := c.idx[model]; ok {
		return ix, nil
	}
	if c.windows != nil {
		if err := c.preload(ctx, []string{model}); err != nil {
			return nil, err
		}
		return c.idx[model], nil
	}
	ix := &windowIndex{}
	err := c.g.Store.ScanUnits(ctx, state.UnitQuery{Env: c.g.Env.Suffix, Model: model, Statuses: c.statuses}, func(u state.Unit) error {
		if u.Window.IsZero() {
			ix.zero++
			return nil
		}
		ix.sinces = append(ix.sinces, u.Window.Since.UnixMicro())
		ix.untils = append(ix.untils, u.Window.Until.UnixMicro())
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("reading the units of %s: %w", model, err)
	}
	slices.Sort(ix.sinces) // window order already; cheap to be sure
	slices.Sort(ix.untils)
	c.idx[model] = ix
	return ix, nil
}
