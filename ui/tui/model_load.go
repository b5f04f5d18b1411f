package tui

import (
	"context"
	"errors"
	"fmt"
	"github.com/bollhav/bollhav/engine/executor"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// The model view's loads: its data (loadModel, with the timeline's
// coverage) and, as the cursor rests on another window, the engine's gate
// of that window's unit (loadGate), with the messages that carry them.

// unitsPage is how many units the model view asks for at a time; scrolling
// near the end asks for the next page.
const unitsPage = 500

// modelData is the model view's data.
type modelData struct {
	status engine.ModelStatus
	// def is the model's definition: the spec's, or the registration's when
	// the engine has no spec; nil when neither can be read.
	def       *spec.Model
	upstreams []upstreamInfo
	// downstream names the models that gate on this one; fresh is the
	// tightest freshness limit among their edges from it.
	downstream []string
	fresh      freshLimit
	// home is where the model's data lives (its connection's warehouse,
	// or the state store's database).
	home  executor.DataHome
	units []state.Unit
	// more is true when the store holds units after the last one loaded.
	more bool
	// failures holds, by unit id, the attempt history of the loaded units
	// waiting for their retry: "retry 2/5 at …" needs the last try.
	failures map[int64]engine.UnitFailures

	// For the timeline: the model's own coverage over want, the time the
	// load was asked for (or chose), and the engine's gate of the unit at
	// gateFor — the cursor's when the load started — nil when it was not
	// asked for or failed (the timeline then derives verdicts from the
	// coverage); fit is the range the timeline fits (fitRange), worked out
	// once a load rather than once a frame.
	fit     state.Window
	span    timelineSpan
	want    state.Window
	gate    *gate.UnitGate
	gateFor state.Window
}

// upstreamInfo is one gated upstream of the model view with its status,
// its definition and, for the timeline, its coverage over the view's time.
type upstreamInfo struct {
	src    spec.Source
	status *engine.ModelStatus
	def    *spec.Model
	span   timelineSpan
	err    error
}

// timelineUnitsLimit bounds the units that are not applied read per model
// for the timeline; applied time comes from the coverage index, one row
// per gap-free island.
const timelineUnitsLimit = 5000

// timelineLoad is what the model view's timeline asks a load for.
type timelineLoad struct {
	on bool
	// want is the time to load coverage for; zero: around the cursor.
	want state.Window
	// at is the since of the cursor's unit; nil: the unit the view will
	// put the cursor on (firstNotApplied).
	at *time.Time
	// width is the terminal's width, for the time a first load takes.
	width int
}

// notApplied are the statuses a timeline reads unit by unit.
var notApplied = []state.UnitStatus{state.Pending, state.Running, state.Blocked, state.Failed}

// loadModel reads the model view's data: the model's status, definition,
// gated upstreams and downstreams, its first limit units and, when the
// timeline asks (tl.on), the coverage it draws.
func loadModel(e *engine.Engine, name string, limit int, tl timelineLoad) func(ctx context.Context) (modelData, error) {
	return func(ctx context.Context) (modelData, error) {
		st, err := e.ModelStatus(ctx, name)
		if err != nil {
			return modelData{}, err
		}
		d := modelData{status: st}
		defs, err := definitions(ctx, e)
		if err != nil {
			return modelData{}, err
		}
		d.def = defs[name]
		if d.def != nil {
			for _, src := range d.def.Upstream {
				if !src.Gated() {
					continue
				}
				ui := upstreamInfo{src: src, def: defs[src.Name]}
				if ust, err := e.ModelStatus(ctx, src.Name); err == nil {
					ui.status = &ust
				} else {
					ui.err = err
				}
				d.upstreams = append(d.upstreams, ui)
			}
		}
		for _, m := range defs {
			for _, src := range m.Upstream {
				if src.Gated() && src.Name == name {
					d.downstream = append(d.downstream, m.Name)
					break
				}
			}
		}
		slices.Sort(d.downstream)
		d.fresh = tightestFreshness(defs, name)
		d.home = e.DataHome(ctx, name)
		if st.Registered {
			err := e.ScanUnits(ctx, name, state.Window{}, nil, func(u state.Unit) error {
				if len(d.units) == limit {
					d.more = true
					return errStopScan
				}
				d.units = append(d.units, u)
				return nil
			})
			if err != nil && !errors.Is(err, errStopScan) {
				return modelData{}, fmt.Errorf("reading the units of %s: %w", name, err)
			}
			if err := loadRetries(ctx, e, &d); err != nil {
				return modelData{}, err
			}
		}
		if tl.on {
			d.fit = fitRange(d, e.Clock())
			if err := loadTimeline(ctx, e, &d, tl); err != nil {
				return modelData{}, err
			}
		}
		return d, nil
	}
}

// loadRetries reads the attempt history of d's units that wait for their
// retry — one small read each, none for the others.
func loadRetries(ctx context.Context, e *engine.Engine, d *modelData) error {
	budget := -1
	for _, u := range d.units {
		if u.NotBefore == nil {
			continue
		}
		if budget < 0 {
			budget = e.RetryBudget(ctx, u.Model)
			if d.def != nil {
				budget = d.def.Retry.Attempts
			}
			d.failures = map[int64]engine.UnitFailures{}
		}
		f, err := e.Failures(ctx, u, budget)
		if err != nil {
			return fmt.Errorf("reading the attempts of %s %s: %w", u.Model, u.Window, err)
		}
		d.failures[u.ID] = f
	}
	return nil
}

// loadGate asks the engine for the gate of model def's unit at w (no
// window for a timeless model), as the model view's timeline marks it.
func loadGate(c *common, view int, seq uint64, def *spec.Model, w state.Window, timeless bool) tea.Cmd {
	ctx, e := c.ctx, c.eng
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		var wp *state.Window
		if !timeless {
			wp = &w
		}
		g, err := e.GateUnitFromStore(ctx, def, wp, e.Clock())
		return gateMsg{view: view, seq: seq, window: w, gate: g, err: err}
	}
}

// firstNotApplied is the index of the unit the model view's cursor starts
// on: the first that is not applied, where an on-call engineer looks
// first; -1 when every unit is applied.
func firstNotApplied(units []state.Unit) int {
	for i, u := range units {
		if u.Status != state.Applied {
			return i
		}
	}
	return -1
}

// loadTimeline reads what the timeline draws over tl.want (or, on a first
// load, a stretch around the cursor four screens wide): the model's and
// each gated upstream's coverage, and the engine's gate of the cursor's
// unit.
func loadTimeline(ctx context.Context, e *engine.Engine, d *modelData, tl timelineLoad) error {
	now := e.Clock()
	// The cursor's unit, as the view will have it.
	cursor := -1
	if tl.at != nil {
		for i, u := range d.units {
			if u.Window.Since.Equal(*tl.at) {
				cursor = i
				break
			}
		}
	}
	if cursor < 0 {
		cursor = firstNotApplied(d.units)
	}
	if cursor < 0 && len(d.units) > 0 {
		cursor = 0
	}
	d.want = tl.want
	grid, ok := gridOf(d.def)
	if !ok {
		for _, u := range d.upstreams {
			if grid, ok = gridOf(u.def); ok {
				break
			}
		}
	}
	if d.want.Empty() && ok {
		anchor := grid.WindowContaining(now).Since
		if cursor >= 0 && !d.status.Timeless() {
			anchor = d.units[cursor].Window.Since
		}
		k, n := grid.Index(anchor), max(tl.width, 20)
		d.want = state.Window{Since: grid.WindowAt(k - 2*n).Since, Until: grid.WindowAt(k + 2*n).Until}
		// The timeline opens fitted to the model's windows: read them
		// all, so the first frame is whole (the bounds on what a span
		// reads hold however long they run).
		if r := d.fit; !r.Empty() {
			d.want = state.Window{Since: state.Earlier(d.want.Since, r.Since), Until: state.Later(d.want.Until, r.Until)}
		}
	}
	if d.want.Empty() {
		return nil // a timeless model without a temporal upstream: nothing to draw on
	}
	var err error
	if d.def != nil && !d.status.Timeless() {
		if d.span, err = loadSpan(ctx, e, d.def.Name, &d.status, nil, spec.Exact, d.want, now); err != nil {
			return err
		}
		if d.fresh.Within > 0 {
			if err := loadStale(ctx, e, d.def.Name, &d.status, &d.span, now.Add(-d.fresh.Within)); err != nil {
				return err
			}
		}
		if err := loadOutdated(ctx, e, d.def.Name, &d.status, &d.span); err != nil {
			return err
		}
	}
	for i := range d.upstreams {
		up := &d.upstreams[i]
		if up.span, err = loadSpan(ctx, e, up.src.Name, up.status, up.def, up.src.Contract, d.want, now); err != nil {
			return err
		}
		if f := up.src.Freshness; f != nil && f.Within > 0 {
			if err := loadStale(ctx, e, up.src.Name, up.status, &up.span, now.Add(-f.Within)); err != nil {
				return err
			}
		}
		if err := loadOutdated(ctx, e, up.src.Name, up.status, &up.span); err != nil {
			return err
		}
	}
	// The gate of the cursor's unit: what the engine would say now.
	if d.def != nil && len(d.upstreams) > 0 && (cursor >= 0 || d.status.Timeless()) {
		var w *state.Window
		if !d.status.Timeless() {
			d.gateFor = d.units[cursor].Window
			w = &d.gateFor
		}
		if g, err := e.GateUnitFromStore(ctx, d.def, w, now); err == nil {
			d.gate = &g
		}
	}
	return nil
}

// loadSpan reads one model's coverage over want: its units that are not
// applied (at most timelineUnitsLimit; past that the span ends early and is
// partial) and its applied islands from the coverage index — for THROUGH
// and WHOLE also those from the model's start, and to its range's end for
// WHOLE, which their verdict measures. A timeless model's span is its one
// row. Nothing is read for a model that is not registered.
func loadSpan(ctx context.Context, e *engine.Engine, name string, st *engine.ModelStatus, def *spec.Model,
	level spec.ContractLevel, want state.Window, now time.Time) (timelineSpan, error) {
	sp := timelineSpan{Loaded: want}
	if st == nil || !st.Registered {
		return sp, nil
	}
	// The stored units, not ScanUnits: that reads the model's status
	// first, which the caller has already read.
	if st.Timeless() {
		err := e.ScanStoredUnits(ctx, name, state.Window{}, nil, func(u state.Unit) error {
			sp.Other = append(sp.Other, u)
			return errStopScan
		})
		if err != nil && !errors.Is(err, errStopScan) {
			return sp, fmt.Errorf("reading the unit of %s: %w", name, err)
		}
		return sp, nil
	}
	err := e.ScanStoredUnits(ctx, name, want, notApplied, func(u state.Unit) error {
		if len(sp.Other) == timelineUnitsLimit {
			sp.Partial = true
			sp.Loaded.Until = state.Later(sp.Loaded.Since, u.Window.Since)
			return errStopScan
		}
		sp.Other = append(sp.Other, u)
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return sp, fmt.Errorf("reading the units of %s: %w", name, err)
	}
	cw := sp.Loaded
	if r := rangeOf(def, now); !r.Empty() {
		switch level {
		case spec.Through:
			cw.Since = state.Earlier(cw.Since, r.Since)
		case spec.Whole:
			cw.Since, cw.Until = state.Earlier(cw.Since, r.Since), state.Later(cw.Until, r.Until)
		}
	}
	if cw.Empty() {
		return sp, nil
	}
	cov, err := e.Coverage(ctx, name, cw)
	if err != nil {
		return sp, fmt.Errorf("reading the coverage of %s: %w", name, err)
	}
	sp.Applied = cov.Windows()
	return sp, nil
}

// definitions are the models the engine knows, by name: the spec's, or,
// for an engine opened from the store alone, the registrations'.
func definitions(ctx context.Context, e *engine.Engine) (map[string]*spec.Model, error) {
	out := map[string]*spec.Model{}
	if e.Spec() != nil {
		for _, m := range e.Spec().Models {
			out[m.Name] = m
		}
		return out, nil
	}
	recs, err := e.Models(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models of %s: %w", e.Env(), err)
	}
	for _, r := range recs {
		if m, err := spec.ModelFromRecord(r); err == nil {
			out[m.Name] = m
		}
	}
	return out, nil
}

// gateTickMsg is the model view's cursor at rest: if it is still where it
// was when the tick was set (seq), the view asks for its unit's gate.
type gateTickMsg struct {
	view int
	seq  uint64
}

func (m gateTickMsg) viewID() int { return m.view }

// gateMsg is the engine's gate of one unit of a model view: the verdict of
// each gated upstream for the window.
type gateMsg struct {
	view   int
	seq    uint64
	window state.Window
	gate   gate.UnitGate
	err    error
}

func (m gateMsg) viewID() int { return m.view }
