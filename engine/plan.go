package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Plan is exactly what a run or a reset would do to the state store, worked
// out without changing it: per model, the windows it would create, the units
// it would reset, delete or uncover, and the windows that would run. ApplyPlan
// performs its state changes and nothing else; docs/statemode.md records the
// rules behind each list.
type Plan struct {
	Env string
	// Request is the request planned, kept so ApplyPlan can check the store
	// still gives the same plan.
	Request RunRequest
	Mode    spec.StateMode
	// Now is the clock the contract ranges were evaluated at.
	Now    time.Time
	Models []ModelPlan
}

// ModelPlan is one model's part of a Plan. Window lists are in window order;
// a timeless model's existence row is the zero Window.
type ModelPlan struct {
	Model       string
	Temporality spec.Temporality
	Flexibility spec.Flexibility
	// Mode is the effective mode: bulldozer without a window on a temporal
	// model runs as discover (see Warnings).
	Mode spec.StateMode
	// Window is the run window for this model; nil means none (always nil
	// for a timeless model).
	Window *state.Window
	// Chunk is the grain windows are created at: a fixed model's grid
	// interval, a flexible model's slicing chunk; zero when timeless.
	Chunk state.Interval
	// ContractRange is [start, last complete window's until) or
	// [start, chunking.end); zero when timeless or empty.
	ContractRange state.Window
	// Register is set when the model's registration is written first: new,
	// changed, or migrated to a new grain (Migrate).
	Register bool
	// Migrate names the grain change a torch performs on a fixed model.
	Migrate *GrainChange
	// Delete is every unit of the model, deleted (fixed and timeless torch).
	Delete *UnitSpan
	// Uncover is the flexible coverage subtracted: the run window
	// (bulldozer), or a zero Window for everything (torch). Uncovered counts
	// the units it deletes, trims or splits.
	Uncover   []state.Window
	Uncovered *UnitSpan
	// Reset lists the units set back to pending.
	Reset Windows
	// Create lists the windows prefilled as new pending units.
	Create Windows
	// Run lists the units the run executes: pending once the plan is applied
	// and in the run window (every pending unit of the model without one).
	Run      Windows
	Warnings []string
	// Outdated marks a plan of `--outdated`: Reset lists exactly the
	// outdated units (and, with --downstream, the units built on outdated
	// ones), each reset on its own window, and Window is their hull.
	// OutdatedUnits counts the model's own outdated units among them,
	// BuiltOnOutdated the others.
	Outdated                       bool
	OutdatedUnits, BuiltOnOutdated int
	// Stateless marks a model with state: false: it keeps no state, so
	// nothing is created, reset or run as a unit; its task runs its work
	// once (runStateless). Delete clears units an older bollhav wrote.
	Stateless bool
	// RerunApplied counts the applied units the plan runs again — reset
	// (bulldozer), deleted or uncovered (torch, a flexible bulldozer) and
	// then run — what a discover never does. A model written with
	// `write: {mode: append}` adds their rows once more: the plan warns of
	// it (appendWarning), the one place the CLI and the UI read it from.
	RerunApplied int

	resetFrom []state.UnitStatus
	record    *state.ModelRecord
}

// UnitSpan is a set of units by count and hull.
type UnitSpan struct {
	Count int
	Hull  state.Window
}

// ModelNames lists the planned models, in plan order.
func (p *Plan) ModelNames() []string {
	out := make([]string, len(p.Models))
	for i, m := range p.Models {
		out[i] = m.Model
	}
	return out
}

// Warnings gathers every model's warnings, each prefixed with its model.
func (p *Plan) Warnings() []string {
	var out []string
	for _, m := range p.Models {
		for _, w := range m.Warnings {
			out = append(out, m.Model+": "+w)
		}
	}
	return out
}

// NothingToRun says why the plan runs no unit, "" when it runs one (or a
// model without state, which does its work with no unit): the first
// warning when there is one (units running, a window outside the
// contract range), else — what a discover with no warning and nothing to
// run means — that every unit in the window is applied, which a discover
// keeps and a bulldozer loads again. An operator asked to confirm "Run 0
// units" reads this instead, and is offered nothing to confirm.
func (p *Plan) NothingToRun() string {
	for _, m := range p.Models {
		if m.Run.Len() > 0 || m.Stateless {
			return ""
		}
	}
	if ws := p.Warnings(); len(ws) > 0 {
		return ws[0]
	}
	if p.Request.Outdated {
		return "no outdated windows: every applied unit was built under its model's current definition"
	}
	discover := len(p.Models) > 0
	for _, m := range p.Models {
		discover = discover && m.Mode == spec.Discover
	}
	if discover {
		return "every unit in the window is applied: discover keeps applied units, bulldozer loads them again"
	}
	return "no unit in the window"
}

// Plan works out what req would do, changing nothing. Bad input — an
// unknown model or pipeline, an unknown mode, an empty or misaligned window,
// a fixed model whose registered grain differs outside torch, a reset that
// would touch a running unit — is an error.
func (e *Engine) Plan(ctx context.Context, req RunRequest) (*Plan, error) {
	return e.plan(ctx, req, e.now())
}

func (e *Engine) plan(ctx context.Context, req RunRequest, now time.Time) (*Plan, error) {
	if e.spec == nil {
		return nil, errors.New("plan needs a spec: the engine was opened from the store alone")
	}
	mode, err := spec.ParseStateMode(string(req.Mode))
	if err != nil {
		return nil, err
	}
	if err := CheckWorkers(req.Workers); err != nil {
		return nil, err
	}
	if req.Window != nil && req.Window.Empty() {
		return nil, fmt.Errorf("window %s is empty: since must be before until", *req.Window)
	}
	if req.IntervalOverride != nil {
		if _, err := state.ParseInterval(req.IntervalOverride.String()); err != nil {
			return nil, fmt.Errorf("interval override: %w", err)
		}
	}
	var (
		names []string
		trace *OutdatedTrace
		seeds map[string]bool
	)
	if req.Outdated {
		if err := checkOutdatedRequest(req, mode); err != nil {
			return nil, err
		}
		names, trace, seeds, err = e.outdatedModels(ctx, req)
	} else {
		names, err = e.resolveModels(req)
	}
	if err != nil {
		return nil, err
	}
	existing, err := e.registered(ctx)
	if err != nil {
		return nil, err
	}
	// The plan keeps its own copy of the request, so a caller reusing its
	// window or override cannot change what ApplyPlan re-checks.
	if req.Window != nil {
		w := *req.Window
		req.Window = &w
	}
	if req.IntervalOverride != nil {
		iv := *req.IntervalOverride
		req.IntervalOverride = &iv
	}
	req.Models = slices.Clone(req.Models)
	p := &Plan{Env: e.opts.Env.Suffix, Request: req, Mode: mode, Now: now}
	if len(names) > 0 {
		p.Models = make([]ModelPlan, 0, len(names))
	}
	var errs []error
	for _, name := range names {
		var mp *ModelPlan
		if req.Outdated {
			mp, err = e.planOutdated(e.spec.Model(name), req, trace.Of(name), seeds[name])
		} else {
			mp, err = e.planModel(ctx, e.spec.Model(name), existing, req, mode, now)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if mp == nil {
			continue
		}
		p.Models = append(p.Models, *mp)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// resolveModels turns a request into model names, in spec order.
func (e *Engine) resolveModels(req RunRequest) ([]string, error) {
	sp := e.spec
	if sp == nil {
		return nil, errors.New("no spec loaded")
	}
	chosen := map[string]bool{}
	for _, n := range req.Models {
		m := sp.Model(n)
		if m == nil {
			return nil, spec.UnknownModelError(sp, n)
		}
		if req.Pipeline != "" && m.Pipeline != req.Pipeline {
			return nil, fmt.Errorf("model %s is in pipeline %s, not %s", n, m.Pipeline, req.Pipeline)
		}
		chosen[n] = true
	}
	if req.Pipeline != "" && len(req.Models) == 0 {
		var pipelines []string
		for _, m := range sp.Models {
			if m.Pipeline == req.Pipeline {
				chosen[m.Name] = true
			}
			if !slices.Contains(pipelines, m.Pipeline) {
				pipelines = append(pipelines, m.Pipeline)
			}
		}
		if len(chosen) == 0 {
			slices.Sort(pipelines)
			return nil, fmt.Errorf("unknown pipeline %q: the spec's pipelines are %s", req.Pipeline, strings.Join(pipelines, ", "))
		}
	}
	if len(req.Models) == 0 && req.Pipeline == "" {
		for _, m := range sp.Models {
			chosen[m.Name] = true
		}
	}
	if req.Downstream {
		lin, err := specLineage(sp)
		if err != nil {
			return nil, fmt.Errorf("model lineage: %w", err)
		}
		for _, n := range lin.DownstreamClosure(slices.Sorted(maps.Keys(chosen))...) {
			chosen[n] = true
		}
	}
	var out []string
	for _, m := range sp.Models {
		if chosen[m.Name] {
			out = append(out, m.Name)
		}
	}
	return out, nil
}

// units scans a model's units overlapping w (all of them when w is zero);
// an unregistered model has none.
func (e *Engine) units(ctx context.Context, model string, w state.Window) ([]state.Unit, error) {
	var out []state.Unit
	err := e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: model, Window: w}, func(u state.Unit) error {
		out = append(out, u)
		return nil
	})
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading units of %s: %w", model, err)
	}
	return out, nil
}

func (e *Engine) planModel(ctx context.Context, m *spec.Model, existing map[string]state.ModelRecord, req RunRequest, mode spec.StateMode, now time.Time) (*ModelPlan, error) {
	mp := &ModelPlan{Model: m.Name, Temporality: m.Temporality, Mode: mode}
	rec := spec.ModelRecord(e.opts.Env.Suffix, m, state.Interval{})
	old, registered := existing[m.Name]
	if !m.State {
		return e.planStateless(ctx, m, mp, rec, old, registered)
	}
	var err error
	if m.Temporality == spec.Timeless || m.Flexible() {
		mp, err = e.planLoaded(ctx, m, mp, rec, old, registered, req, mode, now)
	} else {
		mp, err = e.planGrid(ctx, m, mp, rec, old, registered, req, mode, now)
	}
	if err == nil && mp != nil {
		mp.appendWarning(m)
	}
	return mp, err
}

// appendWarning warns, before anything runs, that a model whose query
// appends its rows (write: {mode: append}) gets the rows of every applied
// window the plan runs again added once more: a bulldozer, then a torch,
// of the same days leaves three copies of each day, and nothing else says
// so (lint and the plan were silent). Nothing warns of a command or sql
// executor, whose writes bollhav cannot see.
func (mp *ModelPlan) appendWarning(m *spec.Model) {
	if mp.RerunApplied == 0 || m.Run.Kind != spec.RunQuery || m.Run.Write == nil || m.Run.Write.Mode != spec.Append {
		return
	}
	mp.warn("writes with append: the %s it runs again get their rows added once more, beside the ones already written (a %s does not delete them); delete those rows first, or write with upsert or recreate_partition",
		pluralUnits(mp.RerunApplied, "applied window"), mp.Mode)
}

// pluralUnits is "1 applied window", "3 applied windows".
func pluralUnits(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// planStateless plans a model with state: false: its registration only
// (its task and the edges onto it), no unit — and the deletion of any unit
// an older bollhav kept for it (its existence row), so none shows.
func (e *Engine) planStateless(ctx context.Context, m *spec.Model, mp *ModelPlan, rec state.ModelRecord, old state.ModelRecord, registered bool) (*ModelPlan, error) {
	all, err := e.units(ctx, m.Name, state.Window{})
	if err != nil {
		return nil, err
	}
	if running := filter(all, is(state.Running)); len(running) > 0 {
		return nil, mp.errRunning("clearing a model without state", running)
	}
	mp.Stateless = true
	mp.Register = !registered || old.ContentHash != rec.ContentHash || !sameGrain(old, rec)
	mp.keepRecord(rec)
	mp.Delete = span(all)
	return mp, nil
}

// planLoaded plans a timeless or a flexible model from all of its units,
// read into memory: a timeless model has one, and a flexible model's
// coverage arithmetic works on its units' ranges.
func (e *Engine) planLoaded(ctx context.Context, m *spec.Model, mp *ModelPlan, rec state.ModelRecord, old state.ModelRecord, registered bool,
	req RunRequest, mode spec.StateMode, now time.Time) (*ModelPlan, error) {
	all, err := e.units(ctx, m.Name, state.Window{})
	if err != nil {
		return nil, err
	}
	if m.Temporality == spec.Timeless {
		if req.Window != nil {
			mp.warn("a timeless model has no windows: the run window %s is ignored; its one existence row is planned", *req.Window)
		}
		if req.IntervalOverride != nil {
			mp.warn("INTERVAL_OVERRIDE %s is ignored: a timeless model has no chunk", *req.IntervalOverride)
		}
		if registered && !sameGrain(old, rec) && len(all) > 0 && mode != spec.Torch {
			return nil, &GrainChangeError{Env: e.opts.Env.Suffix, Models: []GrainChange{{Model: m.Name, Registered: shapeName(old), Defined: shapeName(rec), Units: len(all)}}}
		}
		mp.Register = !registered || old.ContentHash != rec.ContentHash || !sameGrain(old, rec)
		mp.keepRecord(rec)
		return mp, mp.planTimeless(all)
	}
	mp.Flexibility = m.Chunking.Flexibility
	c := m.Chunking
	home, err := state.NewGrid(c.Start, c.Interval, c.Location)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", m.Name, err)
	}
	mp.Chunk = c.Interval
	if req.IntervalOverride != nil {
		mp.Chunk = *req.IntervalOverride
	}
	mp.Register = !registered || old.ContentHash != rec.ContentHash
	mp.keepRecord(rec)
	if rng, ok := home.ContractRange(now, c.End); ok {
		mp.ContractRange = rng
	}
	grid, err := state.NewGrid(c.Start, mp.Chunk, c.Location)
	if err != nil {
		return nil, fmt.Errorf("model %s: chunk %s: %w", m.Name, mp.Chunk, err)
	}
	return mp, mp.planFlexible(req, grid, all)
}

// planGrid plans a fixed model. Its units are streamed, never loaded, and
// the windows it creates and runs are runs of grid windows (see Windows),
// so the plan's size does not grow with the backlog.
func (e *Engine) planGrid(ctx context.Context, m *spec.Model, mp *ModelPlan, rec state.ModelRecord, old state.ModelRecord, registered bool,
	req RunRequest, mode spec.StateMode, now time.Time) (*ModelPlan, error) {
	mp.Flexibility = m.Chunking.Flexibility
	c := m.Chunking
	if _, err := state.NewGrid(c.Start, c.Interval, c.Location); err != nil {
		return nil, fmt.Errorf("model %s: %w", m.Name, err)
	}
	mp.Chunk = c.Interval
	if req.IntervalOverride != nil && *req.IntervalOverride != c.Interval {
		if mode == spec.Torch {
			mp.Chunk = *req.IntervalOverride
			rec = spec.ModelRecord(e.opts.Env.Suffix, m, mp.Chunk)
		} else {
			mp.warn("INTERVAL_OVERRIDE %s is ignored: a fixed model's grain is its identity, so re-chunking it is a migration; run it with --mode torch to rebuild its grid at %s", *req.IntervalOverride, *req.IntervalOverride)
		}
	}
	grid, err := state.NewGrid(c.Start, mp.Chunk, c.Location)
	if err != nil {
		return nil, fmt.Errorf("model %s: interval %s: %w", m.Name, mp.Chunk, err)
	}
	if c.End != nil && !grid.OnGrid(*c.End) {
		w := grid.WindowContaining(*c.End)
		return nil, fmt.Errorf("model %s: chunking end %s is not a boundary of the %s (nearest %s and %s), so it cannot be re-gridded at %s",
			m.Name, state.FormatTime(*c.End), grid, state.FormatTime(w.Since), state.FormatTime(w.Until), mp.Chunk)
	}
	if registered && !sameGrain(old, rec) {
		n, err := e.countUnits(ctx, m.Name)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			gc := GrainChange{Model: m.Name, Registered: shapeName(old), Defined: shapeName(rec), Units: n}
			if mode != spec.Torch {
				return nil, &GrainChangeError{Env: e.opts.Env.Suffix, Models: []GrainChange{gc}}
			}
			mp.Migrate = &gc
		}
	}
	mp.Register = !registered || old.ContentHash != rec.ContentHash || !sameGrain(old, rec)
	mp.keepRecord(rec)
	if rng, ok := grid.ContractRange(now, c.End); ok {
		mp.ContractRange = rng
	}
	if req.Window != nil {
		if err := grid.Align(*req.Window); err != nil {
			return nil, fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	return mp, mp.planFixed(ctx, e, req, grid)
}

// keepRecord keeps rec for ApplyPlan to register first, when the plan
// registers the model at all: a plan holds its models for as long as the
// run lasts, and a definition with its hash and fingerprint for each of
// 60,000 models that are registered already was 50 MB of it.
func (mp *ModelPlan) keepRecord(rec state.ModelRecord) {
	if mp.Register {
		r := rec
		mp.record = &r
	}
}

func (mp *ModelPlan) warn(format string, args ...any) {
	mp.Warnings = append(mp.Warnings, fmt.Sprintf(format, args...))
}

// errRunning refuses a reset that would touch running units.
func (mp *ModelPlan) errRunning(what string, running []state.Unit) error {
	ws := make([]string, 0, min(len(running), 3))
	for _, u := range running[:min(len(running), 3)] {
		ws = append(ws, u.Window.String())
	}
	more := ""
	if len(running) > 3 {
		more = fmt.Sprintf(" and %d more", len(running)-3)
	}
	return fmt.Errorf("model %s: %s would reset %d running unit(s) (%s%s); a reset never interleaves with a running unit: wait for the run to finish, or let its lease expire", mp.Model, what, len(running), strings.Join(ws, ", "), more)
}

func filter(us []state.Unit, keep func(state.Unit) bool) []state.Unit {
	var out []state.Unit
	for _, u := range us {
		if keep(u) {
			out = append(out, u)
		}
	}
	return out
}

func windowsOf(us []state.Unit) []state.Window {
	var out []state.Window
	for _, u := range us {
		out = append(out, u.Window)
	}
	return out
}

func span(us []state.Unit) *UnitSpan {
	if len(us) == 0 {
		return nil
	}
	s := &UnitSpan{Count: len(us), Hull: us[0].Window}
	for _, u := range us[1:] {
		s.Hull = state.Hull(s.Hull, u.Window)
	}
	return s
}

func sortWindows(ws []state.Window) []state.Window {
	slices.SortFunc(ws, func(a, b state.Window) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return a.Until.Compare(b.Until)
	})
	return ws
}

func is(statuses ...state.UnitStatus) func(state.Unit) bool {
	return func(u state.Unit) bool { return slices.Contains(statuses, u.Status) }
}

func inside(w state.Window) func(state.Unit) bool {
	return func(u state.Unit) bool { return w.Covers(u.Window) }
}

// clip is w ∩ r, and whether it is not empty.
func clip(w, r state.Window) (state.Window, bool) {
	out := state.Window{Since: w.Since, Until: w.Until}
	if r.Since.After(out.Since) {
		out.Since = r.Since
	}
	if r.Until.Before(out.Until) {
		out.Until = r.Until
	}
	return out, !out.Empty()
}

// scope is the part of the run window inside the contract range that units
// are created in (the whole range without a window), with a warning for
// the part outside.
func (mp *ModelPlan) scope(w *state.Window) (state.Window, bool) {
	rng := mp.ContractRange
	if rng.Empty() {
		mp.warn("the contract range is empty (no window has completed yet), so nothing is created")
		return state.Window{}, false
	}
	if w == nil {
		return rng, true
	}
	s, ok := clip(*w, rng)
	if !ok {
		mp.warn("the run window %s lies outside the contract range %s: nothing is created there", *w, rng)
		return state.Window{}, false
	}
	if !s.Equal(*w) {
		mp.warn("the run window %s reaches outside the contract range %s: only %s is created", *w, rng, s)
	}
	return s, true
}

// planTimeless plans the one existence row.
func (mp *ModelPlan) planTimeless(all []state.Unit) error {
	zero := WindowsOf(state.Window{})
	var row *state.Unit
	if len(all) > 0 {
		row = &all[0]
	}
	switch mp.Mode {
	case spec.Discover:
		switch {
		case row == nil:
			mp.Create, mp.Run = zero, zero
		case row.Status == state.Blocked || row.Status == state.Failed:
			mp.Reset, mp.Run, mp.resetFrom = zero, zero, []state.UnitStatus{state.Blocked, state.Failed}
		case row.Status == state.Pending:
			mp.Run = zero
		case row.Status == state.Running:
			mp.warn("its existence row is running now; discover leaves it to its worker")
		}
	case spec.Bulldozer:
		switch {
		case row == nil:
			mp.Create = zero
		case row.Status == state.Running:
			return mp.errRunning("bulldozer", all)
		case row.Status != state.Pending:
			mp.Reset, mp.resetFrom = zero, []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
		}
		mp.Run = zero
		mp.RerunApplied = len(filter(all, is(state.Applied)))
	case spec.Torch:
		if running := filter(all, is(state.Running)); len(running) > 0 {
			return mp.errRunning("torch", running)
		}
		mp.Delete = span(all)
		mp.Create, mp.Run = zero, zero
		mp.RerunApplied = len(filter(all, is(state.Applied)))
	}
	return nil
}

// takeWindow is the run window of req as the plan records it. A bulldozer
// without one runs as discover instead, with the warning bulldozerNote.
func (mp *ModelPlan) takeWindow(req RunRequest, bulldozerNote string) *state.Window {
	w := req.Window
	if mp.Mode == spec.Bulldozer && w == nil {
		mp.Mode = spec.Discover
		mp.warn("%s", bulldozerNote)
	}
	if w != nil {
		mp.Window = &state.Window{Since: w.Since, Until: w.Until}
	}
	return w
}

// planFixed plans a grid model; the run window is aligned already. It
// walks the model's units (in window order, streamed) alongside the grid
// windows of the scope: the grid windows between two units are created,
// and created and outstanding units are run, each as runs of windows.
func (mp *ModelPlan) planFixed(ctx context.Context, e *Engine, req RunRequest, grid state.Grid) error {
	w := mp.takeWindow(req, "bulldozer without a window re-runs nothing already applied: it runs as discover over the contract range (every outstanding unit); give a window to re-run it, or use --mode torch to reload everything")
	g := &grid
	if mp.Mode == spec.Torch {
		var running []state.Unit
		var all unitSpan
		err := e.scanUnits(ctx, mp.Model, state.Window{}, func(u state.Unit) error {
			all.add(u.Window)
			if u.Status == state.Running {
				running = append(running, u)
			}
			if u.Status == state.Applied && (w == nil || w.Covers(u.Window)) {
				mp.RerunApplied++ // deleted, re-created and run
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(running) > 0 {
			return mp.errRunning("torch", running)
		}
		mp.Delete = all.span()
		if s, ok := mp.scope(nil); ok {
			mp.Create.AddGrid(g, s)
		}
		mp.runTorched(w)
		return nil
	}
	var q state.Window
	if w != nil {
		q = *w
	}
	s, create := mp.scope(w)
	cursor := s.Since
	// gap creates and runs the grid windows of the scope in [cursor, end).
	gap := func(end time.Time) {
		if !create || !end.After(cursor) {
			return
		}
		if r, ok := clip(state.Window{Since: cursor, Until: end}, s); ok {
			mp.Create.AddGrid(g, r)
			mp.Run.AddGrid(g, r)
		}
		cursor = end
	}
	if mp.Mode == spec.Discover {
		mp.resetFrom = []state.UnitStatus{state.Blocked, state.Failed}
	} else {
		mp.resetFrom = []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
	}
	var running []state.Unit
	err := e.scanUnits(ctx, mp.Model, q, func(u state.Unit) error {
		if w != nil && !w.Covers(u.Window) {
			return nil
		}
		// Every grid window starting before u is not u's: a unit holds
		// the window starting at its since (an off-grid unit holds none,
		// so the window it starts inside is still created).
		end := u.Window.Since
		onGrid := grid.OnGrid(end)
		if !onGrid {
			end = grid.WindowContaining(end).Until
		}
		gap(end)
		if onGrid {
			if held := grid.WindowContaining(u.Window.Since).Until; held.After(cursor) {
				cursor = held
			}
		}
		switch {
		case u.Status == state.Running:
			running = append(running, u)
			if mp.Mode == spec.Bulldozer {
				mp.Run.Add(g, u.Window)
			}
		case slices.Contains(mp.resetFrom, u.Status):
			mp.Reset.Add(g, u.Window)
			mp.Run.Add(g, u.Window)
			if u.Status == state.Applied {
				mp.RerunApplied++
			}
		case u.Status == state.Pending:
			mp.Run.Add(g, u.Window)
		}
		return nil
	})
	if err != nil {
		return err
	}
	gap(s.Until)
	if n := len(running); n > 0 {
		if mp.Mode == spec.Bulldozer {
			return mp.errRunning("bulldozer", running)
		}
		mp.warn("%d unit(s) are running now; discover leaves them to their workers", n)
	}
	return nil
}

// scanUnits streams a model's units overlapping w (all of them when w is
// zero) in window order; an unregistered model has none.
func (e *Engine) scanUnits(ctx context.Context, model string, w state.Window, fn func(state.Unit) error) error {
	err := e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: model, Window: w}, fn)
	if errors.Is(err, state.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading units of %s: %w", model, err)
	}
	return nil
}

// countUnits counts a model's units without keeping them.
func (e *Engine) countUnits(ctx context.Context, model string) (int, error) {
	n := 0
	err := e.scanUnits(ctx, model, state.Window{}, func(state.Unit) error { n++; return nil })
	return n, err
}

// unitSpan accumulates a UnitSpan one window at a time.
type unitSpan struct{ s *UnitSpan }

func (a *unitSpan) add(w state.Window) {
	if a.s == nil {
		a.s = &UnitSpan{Count: 1, Hull: w}
		return
	}
	a.s.Count++
	a.s.Hull = state.Hull(a.s.Hull, w)
}

func (a *unitSpan) span() *UnitSpan { return a.s }

// runTorched sets what a torch runs once everything was re-created: the
// created windows inside the run window, or all of them without one.
func (mp *ModelPlan) runTorched(w *state.Window) {
	if w == nil {
		mp.Run = mp.Create.clone()
		return
	}
	mp.Run = mp.Create.Covered(*w)
	if !mp.ContractRange.Empty() && !mp.ContractRange.Covers(*w) {
		mp.warn("the run window %s reaches outside the contract range %s: nothing is created there", *w, mp.ContractRange)
	}
}

// planFlexible plans a coverage model: how much coverage is uncovered
// before the gaps are computed and sliced by the chunk grid.
func (mp *ModelPlan) planFlexible(req RunRequest, grid state.Grid, all []state.Unit) error {
	w := mp.takeWindow(req, "bulldozer without a window re-covers nothing already applied: it runs as discover over the contract range (fills every gap, runs every outstanding unit); give a window to re-cover it, or use --mode torch to re-cover everything")
	g := &grid
	switch mp.Mode {
	case spec.Discover:
		var create []state.Window
		mp.resetFrom = []state.UnitStatus{state.Blocked, state.Failed}
		touching := all
		if w != nil {
			touching = filter(all, func(u state.Unit) bool { return u.Window.Overlaps(*w) })
		}
		if s, ok := mp.scope(w); ok {
			// Every unit, applied or not, already holds its range: gaps
			// are what no unit covers, so outstanding units are reused
			// rather than duplicated.
			held := state.NewIntervalSet(windowsOf(touching)...)
			create = state.SliceByChunk(held.Gaps(s), grid)
			mp.Create = gridWindows(g, create)
		}
		resettable := touching
		if w != nil {
			resettable = filter(touching, inside(*w))
		}
		toReset := filter(resettable, is(mp.resetFrom...))
		mp.Reset = gridWindows(g, windowsOf(toReset))
		reset := map[int64]bool{}
		for _, u := range toReset {
			reset[u.ID] = true
		}
		run := create
		for _, u := range touching {
			switch {
			case u.Status == state.Pending || reset[u.ID]:
				run = append(run, u.Window)
				if w != nil && !w.Covers(u.Window) {
					mp.warn("pending unit %s crosses the run window's edge and runs whole", u.Window)
				}
			case u.Status == state.Running:
				mp.warn("unit %s is running now; discover leaves it to its worker", u.Window)
			case u.Status != state.Applied:
				mp.warn("%s unit %s crosses the run window's edge: discover leaves it (and its part of the window) alone; re-cover the window with bulldozer", u.Status, u.Window)
			}
		}
		mp.Run = gridWindows(g, sortWindows(run))
	case spec.Bulldozer:
		touching := filter(all, func(u state.Unit) bool { return u.Window.Overlaps(*w) })
		if running := filter(touching, is(state.Running)); len(running) > 0 {
			return mp.errRunning("bulldozer", running)
		}
		if len(touching) > 0 {
			mp.Uncover = []state.Window{*w}
			mp.Uncovered = span(touching)
		}
		mp.RerunApplied = len(filter(touching, is(state.Applied)))
		if s, ok := mp.scope(w); ok {
			mp.Create = gridWindows(g, state.SliceByChunk([]state.Window{s}, grid))
		}
		mp.Run = mp.Create.clone()
	case spec.Torch:
		if running := filter(all, is(state.Running)); len(running) > 0 {
			return mp.errRunning("torch", running)
		}
		if len(all) > 0 {
			mp.Uncover = []state.Window{{}}
			mp.Uncovered = span(all)
		}
		for _, u := range filter(all, is(state.Applied)) {
			if w == nil || u.Window.Overlaps(*w) {
				mp.RerunApplied++ // uncovered, and its range run again
			}
		}
		if s, ok := mp.scope(nil); ok {
			pieces := []state.Window{s}
			if w != nil { // cut at the window's edges, so no unit crosses them
				pieces = state.NewIntervalSet(s).SubtractWindow(*w).Windows()
				if in, ok := clip(*w, s); ok {
					pieces = append(pieces, in)
				}
				pieces = sortWindows(pieces)
			}
			mp.Create = gridWindows(g, state.SliceByChunk(pieces, grid))
		}
		mp.runTorched(w)
	}
	return nil
}

// ApplyPlan performs exactly the plan's state changes — deletes and
// uncovers, registrations, resets to pending, prefills — and runs nothing.
// It first plans p's request again at p's clock and refuses, changing
// nothing, when the store no longer gives the same plan (a unit started
// running, another operator reset a window); a count that differs while
// applying is an error too. runID is recorded on the changes. Torch and
// bulldozer are audited.
func (e *Engine) ApplyPlan(ctx context.Context, p *Plan, runID int64) (err error) {
	if err := e.refuseReadOnly(ctx, p.Mode.String(), map[string]string{"models": strings.Join(p.ModelNames(), ",")}); err != nil {
		return err
	}
	var done []string
	if p.Mode == spec.Torch || p.Mode == spec.Bulldozer {
		now := e.now()
		defer func() {
			args := map[string]string{"env": p.Env, "mode": p.Mode.String(), "models": strings.Join(p.ModelNames(), ","),
				"run_id": fmt.Sprint(runID)}
			if w := p.Request.Window; w != nil {
				args["window"] = w.String()
			}
			if iv := p.Request.IntervalOverride; iv != nil {
				args["interval_override"] = iv.String()
			}
			outcome := "ok: " + strings.Join(done, "; ")
			if err != nil {
				outcome = "error: " + err.Error()
				if len(done) > 0 {
					outcome += " (done before it: " + strings.Join(done, "; ") + ")"
				}
			}
			if aerr := e.store.Audit(context.WithoutCancel(ctx), state.AuditEntry{At: now, Actor: e.opts.Actor, Action: p.Mode.String(), Args: args, Outcome: outcome}); aerr != nil && err == nil {
				err = fmt.Errorf("recording the %s in the audit log: %w", p.Mode, aerr)
			}
		}()
	}
	return e.applyPlan(ctx, p, runID, &done, false)
}

// prefillBatch is how many windows one Prefill call inserts: well within
// the stores' design point (100,000), and a bound on what a prefill of
// millions of windows holds at once. A variable only so that the
// race-detector build of the test that crosses it can cross a smaller one.
var prefillBatch = 50_000

// applyPlan is ApplyPlan without its audit entry, so that a run, which
// audits itself once, does not record its resets a second time. done
// gets a line per change made ("core.x: reset 2"), those made before an
// error included. fresh says p was just planned by the caller, after the
// spec was registered: it is applied as it is instead of being planned a
// second time to be compared (over a backlog of millions, each plan reads
// every unit of the model); the counts checked while applying still catch
// a store that changed since.
func (e *Engine) applyPlan(ctx context.Context, p *Plan, runID int64, done *[]string, fresh bool) error {
	if p.Env != e.opts.Env.Suffix {
		return fmt.Errorf("the plan is for environment %q, the engine is in %q", p.Env, e.opts.Env.Suffix)
	}
	now := e.now()
	if !fresh {
		again, err := e.plan(ctx, p.Request, p.Now)
		if err != nil {
			return fmt.Errorf("the store changed since the plan was made: %w", err)
		}
		if err := samePlan(p, again); err != nil {
			return err
		}
		p = again // carries the registration records
	}
	env := p.Env
	changed := func(model, what string, want, got int) error {
		return fmt.Errorf("model %s: %s changed %d units where the plan said %d: the store changed while the plan was applied; plan again", model, what, got, want)
	}
	for _, mp := range p.Models {
		if mp.Delete != nil {
			n, err := e.store.Delete(ctx, state.RemoveRequest{Env: env, Model: mp.Model, RunID: runID, Now: now})
			if err != nil {
				return fmt.Errorf("model %s: deleting its units: %w", mp.Model, err)
			}
			if n != mp.Delete.Count {
				return changed(mp.Model, "delete", mp.Delete.Count, n)
			}
			*done = append(*done, fmt.Sprintf("%s: deleted %d", mp.Model, n))
		}
		for _, w := range mp.Uncover {
			n, err := e.store.Uncover(ctx, state.RemoveRequest{Env: env, Model: mp.Model, Window: w, RunID: runID, Now: now})
			if err != nil {
				return fmt.Errorf("model %s: uncovering %s: %w", mp.Model, w, err)
			}
			if want := mp.Uncovered.Count; n != want {
				return changed(mp.Model, "uncover", want, n)
			}
			*done = append(*done, fmt.Sprintf("%s: uncovered %d", mp.Model, n))
		}
	}
	var recs []state.ModelRecord
	var edges []state.EdgeRecord
	for _, mp := range p.Models {
		if mp.Register {
			recs = append(recs, *mp.record)
			edges = append(edges, spec.EdgeRecords(env, e.spec, e.spec.Model(mp.Model))...)
		}
	}
	if len(recs) > 0 {
		if _, err := e.store.Register(ctx, env, recs, edges, now); err != nil {
			return fmt.Errorf("registering the planned models: %w", err)
		}
	}
	for _, mp := range p.Models {
		if mp.Outdated {
			n, err := e.resetOutdated(ctx, mp, runID, now)
			if err != nil {
				return err
			}
			*done = append(*done, fmt.Sprintf("%s: reset %d outdated", mp.Model, n))
			continue
		}
		if mp.Reset.Len() > 0 {
			var w state.Window
			if mp.Window != nil {
				w = *mp.Window
			}
			n, err := e.store.SetStatus(ctx, state.StatusChange{Env: env, Model: mp.Model, Window: w, From: mp.resetFrom,
				To: state.Pending, RunID: runID, Now: now})
			if err != nil {
				return fmt.Errorf("model %s: resetting to pending: %w", mp.Model, err)
			}
			if n != mp.Reset.Len() {
				return changed(mp.Model, "reset", mp.Reset.Len(), n)
			}
			*done = append(*done, fmt.Sprintf("%s: reset %d", mp.Model, n))
		}
		if mp.Create.Len() > 0 {
			// The windows are built and inserted a batch at a time, so a
			// prefill of millions holds one batch, not the backlog.
			n := 0
			for batch := range mp.Create.Batches(prefillBatch) {
				k, err := e.store.Prefill(ctx, state.PrefillRequest{Env: env, Model: mp.Model, Windows: batch, Now: now})
				n += k
				if err != nil {
					if n > 0 {
						// The batches before this one are committed: the
						// audit and the caller hear of them.
						*done = append(*done, fmt.Sprintf("%s: created %d", mp.Model, n))
					}
					return fmt.Errorf("model %s: prefilling (%d of %d created): %w", mp.Model, n, mp.Create.Len(), err)
				}
			}
			if n != mp.Create.Len() {
				return changed(mp.Model, "prefill", mp.Create.Len(), n)
			}
			*done = append(*done, fmt.Sprintf("%s: created %d", mp.Model, n))
		}
	}
	if len(*done) == 0 {
		*done = append(*done, "nothing to change")
	}
	return nil
}

// samePlan reports, naming the first model that differs, whether b plans the
// same changes as a.
func samePlan(a, b *Plan) error {
	stale := func(why string) error {
		return fmt.Errorf("the store changed since the plan was made (%s); plan again", why)
	}
	if len(a.Models) != len(b.Models) {
		return stale("the planned models differ")
	}
	for i := range a.Models {
		x, y := a.Models[i], b.Models[i]
		// Whether the registration is written first is not part of what
		// the plan does to units: a run registers the spec before it
		// plans again, so a plan confirmed before that (a torch's, in the
		// CLI) would otherwise never match for a new or edited model.
		x.record, y.record = nil, nil
		x.Register, y.Register = false, false
		if !reflect.DeepEqual(x, y) {
			return stale("model " + x.Model + " now plans differently")
		}
	}
	return nil
}
