package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// ErrWhyNeedsTime is Why asked about a temporal model without a time.
var ErrWhyNeedsTime = errors.New("a temporal model needs a time inside the window to explain")

// ErrBeforeStart is a time asked of a model before its first window.
var ErrBeforeStart = errors.New("before its first window")

// StatusMissing is the status Why gives a window the store holds no unit
// for: never prefilled, or deleted by a torch. It is not a unit status.
const StatusMissing state.UnitStatus = "missing"

// Bounds that keep Why cheap on a deep lineage or a huge backlog.
const (
	// MaxRootCauseDepth bounds the root-cause chain, the unit included.
	MaxRootCauseDepth = 32
	// MaxFrontier bounds the windows the frontier lists; the rest are
	// counted in WhyReport.FrontierMore.
	MaxFrontier = 500
)

// WhyReport explains one unit: its state, each gated upstream's verdict as
// the gate sees it now, the chain of units upstream that holds it back, and
// the upstream windows whose application would unblock it.
type WhyReport struct {
	Model       string
	Pipeline    string
	Temporality spec.Temporality
	Flexibility spec.Flexibility
	// Interval is the grain of a fixed model, the chunk of a flexible one;
	// zero when timeless.
	Interval state.Interval
	// Window is the unit's window: the stored unit containing the asked
	// time, else the grid (or, for a flexible model, chunk) window holding
	// it; zero for a timeless model.
	Window state.Window
	// Status is the unit's status, or StatusMissing when the store holds no
	// unit for Window.
	Status        state.UnitStatus
	BlockedReason string
	Error         string
	AppliedAt     *time.Time
	Attempts      int
	// NotBefore is when the unit, failed and waiting for its retry, may
	// run again; nil otherwise.
	NotBefore *time.Time
	// Retry is where the unit, waiting for its retry, stands in its budget
	// (render it with Retry.Line); nil otherwise.
	Retry *state.RetryWait
	// Failures is the unit's attempt history, newest first: its newest
	// state.MaxAttemptHistory failed attempts.
	Failures []state.Attempt
	// Fingerprint is the definition an applied unit was built under (""
	// when unknown); Definition, set by the engine, says whether that is
	// the model's current one (current, outdated, unknown; "" unless
	// applied).
	Fingerprint string
	Definition  string
	// Change, set by the engine for an outdated unit whose definition the
	// store still keeps, is what changed since it was built; nil
	// otherwise.
	Change *DefinitionChange
	// BuiltOnOutdated, set by the engine for an applied unit, lists each
	// gated upstream with outdated or built-on-outdated windows in the
	// unit's reach; empty otherwise.
	BuiltOnOutdated []TaintedUpstream
	// Registered is false for a spec model not registered yet.
	Registered bool
	// Now is the time the gate was evaluated at (the engine's clock, so
	// --as-of answers "will this be stale tomorrow?").
	Now time.Time
	// Satisfied is true when every gated upstream is satisfied now: the
	// unit would run if it were claimed.
	Satisfied bool
	// Upstreams holds one report per gated upstream, in declaration order.
	Upstreams []UpstreamReport
	// After holds the verdict of each after: edge for the unit's window,
	// in declaration order, and AfterHeld whether they hold the unit back
	// under its run condition (Satisfied is then false).
	After     []AfterVerdict
	AfterHeld bool
	// RootCause is the chain from this unit upstream: element 0 is the
	// unit itself, each next element a unit (or a missing window) of the
	// first unsatisfied upstream (in declaration order) of the one before
	// that holds it back, and
	// the last one the root cause: a failed unit, a pending or running (or
	// blocked) unit whose own gate is satisfied now, a missing window, an
	// applied but stale upstream row (Stale), or a unit whose gate has a
	// hard error. The chain stops at an applied unit, on a cycle, and after
	// MaxRootCauseDepth links.
	RootCause []ChainLink
	// Roots are every root that holds the unit back: where the chain ends
	// following each upstream that holds it (RootCause follows the first
	// at each step). Fixing one of several roots does not release the
	// unit. Empty for an applied unit; the unit itself when nothing holds
	// it back.
	Roots []ChainLink
	// Frontier is the fewest upstream windows whose application would
	// unblock this unit, in upstream declaration order, then window order;
	// see FrontierWindow. It follows the gate evaluated now, whatever the
	// stored status: empty when every gated upstream is satisfied (or has a
	// hard error, which no application fixes).
	Frontier []FrontierWindow
	// FrontierMore counts the frontier windows left out past MaxFrontier
	// (not deduplicated, so an upper bound).
	FrontierMore int
	// UnderWay, for a unit whose gate is not satisfied only because the
	// upstream windows it lacks are being loaded now (running, or applied
	// since the gate read them: Reader.UnderWay), is what it waits on:
	// it is not blocked, and the next judgement after that work runs it.
	// Empty otherwise. Pending upstream units count only for a caller
	// that claims them, which why is not.
	UnderWay string
}

// UpstreamReport is one gated upstream's verdict for the unit, with the
// ages of the rows the level selected, measured at WhyReport.Now.
type UpstreamReport struct {
	Verdict
	Freshness *spec.Freshness
	// NewestAge and OldestAge are Now minus the newest and oldest
	// applied_at of the selected rows, when the level selected any.
	NewestAge, OldestAge *time.Duration
}

// ChainLink is one unit of a root-cause chain.
type ChainLink struct {
	Model string
	// Window is zero for a timeless model's existence row.
	Window state.Window
	// Status is the unit's status, or StatusMissing.
	Status state.UnitStatus
	// Stale marks an applied upstream row whose age makes the gate stale.
	Stale bool
	// Outdated marks an applied upstream row built under an earlier
	// definition, which a require_current contract does not accept.
	Outdated bool
	// Detail is the unit's error (failed), its blocked_reason (blocked),
	// the stale verdict, or a hard gate error; empty otherwise.
	Detail string
}

// FrontierWindow is one upstream window whose application the unit waits
// on. For an upstream missing ranges, it is each unit of that upstream
// overlapping a missing range that is not applied, and each window in a
// missing range no unit covers (a grid window of a fixed upstream, the gap
// itself for a flexible one; Status StatusMissing); for a timeless upstream
// not applied, its existence row; for a stale upstream, the applied rows to
// re-apply (Stale): under LATEST the selected row with the latest window,
// under ALL every selected row older than the threshold. EXISTS is satisfied
// by registration alone and so never has a frontier.
type FrontierWindow struct {
	Model  string
	Window state.Window
	Status state.UnitStatus
	Stale  bool
	// Outdated marks an applied upstream unit built under an earlier
	// definition that a require_current contract waits to see rebuilt.
	Outdated bool
	// Releases counts the blocked units a run of this window alone
	// releases (Reader.Releases: those whose every root it loads), the
	// count a run dialog and an incident give too.
	Releases int
}

// Why explains the unit of model that contains at (at is ignored for a
// timeless model): its status, every gated upstream's verdict at the
// engine's now, the root-cause chain and the unblock frontier. It only
// reads the store. An unknown model, a temporal model without at, and a
// time before the model's start are errors.
func (g *Reader) Why(ctx context.Context, model string, at time.Time) (*WhyReport, error) {
	an := &analysis{g: g, env: g.Env.Suffix, now: g.now(), shapes: &RegistrationCache{}, models: map[string]analysisModel{}}
	m, registered, err := an.model(ctx, model)
	if err != nil {
		return nil, err
	}
	r := &WhyReport{Model: m.Name, Pipeline: m.Pipeline, Temporality: m.Temporality, Registered: registered, Now: an.now}
	if m.Temporality == spec.Temporal {
		r.Flexibility, r.Interval = m.Chunking.Flexibility, m.Chunking.Interval
	}
	unit, w, err := an.unitAt(ctx, m, at, registered)
	if err != nil {
		return nil, err
	}
	r.Window, r.Status = w, StatusMissing
	if unit != nil {
		r.Status, r.BlockedReason, r.Error, r.AppliedAt, r.Attempts = unit.Status, unit.BlockedReason, unit.Error, unit.AppliedAt, unit.Attempts
		r.NotBefore, r.Fingerprint = unit.NotBefore, unit.Fingerprint
		history, err := g.Store.Attempts(ctx, unit.ID)
		if err != nil {
			return nil, err
		}
		r.Retry, r.Failures = state.RetryWaitOf(*unit, history, m.Retry.Attempts), state.NewestFirst(history)
		if err := state.NoteEndedRun(ctx, g.Store, r.Retry, *unit); err != nil {
			return nil, err
		}
	}
	gate, err := g.CachedUnit(ctx, an.shapes, m, windowOf(m, w), an.now)
	if err != nil {
		return nil, err
	}
	r.Satisfied, r.After, r.AfterHeld = gate.Satisfied, gate.After, gate.AfterHeld
	if r.Status != state.Applied {
		if r.UnderWay, _, err = g.UnderWay(ctx, m, gate, nil); err != nil {
			return nil, err
		}
	}
	for i, src := range gatedSources(m) {
		v := gate.Verdicts[i]
		ur := UpstreamReport{Verdict: v, Freshness: src.Freshness}
		if v.Newest != nil {
			d := an.now.Sub(*v.Newest)
			ur.NewestAge = &d
		}
		if v.Oldest != nil {
			d := an.now.Sub(*v.Oldest)
			ur.OldestAge = &d
		}
		r.Upstreams = append(r.Upstreams, ur)
	}
	if r.RootCause, err = an.rootCause(ctx, m, w, unit, gate); err != nil {
		return nil, err
	}
	if r.Status != state.Applied {
		if r.Roots, err = an.allRoots(ctx, m, r.RootCause[0], &gate); err != nil {
			return nil, err
		}
	}
	if r.Frontier, r.FrontierMore, err = an.frontier(ctx, m, w, gate); err != nil {
		return nil, err
	}
	if len(r.Frontier) > 0 {
		lin, err := g.gatedLineage(ctx)
		if err != nil {
			return nil, err
		}
		for i := range r.Frontier {
			f := &r.Frontier[i]
			if f.Releases, err = an.releases(ctx, lin, map[string][]state.Window{f.Model: {f.Window}}); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// analysis reads models and units for one Why, at one now, caching model
// lookups and upstream registrations.
type analysis struct {
	g      *Reader
	env    string
	now    time.Time
	shapes *RegistrationCache
	models map[string]analysisModel
	// roots keeps each unit's roots (allRoots) by chainKey, as found.
	roots map[string][]ChainLink
	// outstanding, when not nil, keeps each model's units that are not
	// applied, read whole once (outstandingOf).
	outstanding *keptReads[state.Unit]
}

type analysisModel struct {
	m          *spec.Model
	registered bool
	err        error
}

// model is name as the analysis reads it: the spec's definition (its
// upstreams are what the next run gates on) with the registered shape (what
// its units were cut by), the registration alone for a model the spec does
// not define, or the spec's for one not registered yet.
func (an *analysis) model(ctx context.Context, name string) (*spec.Model, bool, error) {
	if am, ok := an.models[name]; ok {
		return am.m, am.registered, am.err
	}
	am := an.lookup(ctx, name)
	an.models[name] = am
	return am.m, am.registered, am.err
}

func (an *analysis) lookup(ctx context.Context, name string) analysisModel {
	rec, err := an.g.Store.Model(ctx, an.env, name)
	return an.resolve(name, rec, err)
}

// seed fills the analysis with every model of lin from the registrations
// lin was built from (recs), so that a trace over a platform of thousands
// of models makes one registry read, not one a model it meets.
func (an *analysis) seed(lin *gatedLineage) {
	an.shapes.seed(an.env, lin.recs)
	if !windowedReads.Load() {
		an.outstanding = newKeptReads[state.Unit](maxKeptOutstanding)
	}
	for _, name := range lin.names {
		if _, ok := an.models[name]; ok {
			continue
		}
		if rec, ok := lin.recs[name]; ok {
			an.models[name] = an.resolve(name, rec, nil)
		} else {
			an.models[name] = an.resolve(name, state.ModelRecord{}, state.ErrNotFound)
		}
	}
}

// resolve is name as the analysis reads it, given its registration (rec,
// or err: ErrNotFound when it is not registered).
func (an *analysis) resolve(name string, rec state.ModelRecord, err error) analysisModel {
	sp := an.g.Spec.Model(name)
	var reg *spec.Model
	switch {
	case err == nil && sp != nil:
		// The spec's definition with the registered shape: the stored
		// definition is not read (a JSON decode a model, ten thousand of
		// them in a trace of a large platform).
		m := *sp
		if m.Temporality, m.Chunking, err = spec.RecordShape(rec); err != nil {
			return analysisModel{err: err}
		}
		return analysisModel{m: &m, registered: true}
	case err == nil:
		if reg, err = spec.ModelFromRecord(rec); err != nil {
			return analysisModel{err: err}
		}
	case errors.Is(err, state.ErrNotFound):
	default:
		return analysisModel{err: fmt.Errorf("reading the registration of %s: %w", name, err)}
	}
	switch {
	case sp != nil:
		return analysisModel{m: sp}
	case reg != nil:
		return analysisModel{m: reg, registered: true}
	case an.g.Spec != nil:
		return analysisModel{err: spec.UnknownModelError(an.g.Spec, name)}
	}
	return analysisModel{err: fmt.Errorf("unknown model %q: not registered in %s", name, an.g.Env)}
}

// gatedSources are m's gated sources in declaration order: the sources
// Judge gives a verdict for, in the same order.
func gatedSources(m *spec.Model) []spec.Source {
	var out []spec.Source
	for _, s := range m.Upstream {
		if s.Gated() {
			out = append(out, s)
		}
	}
	return out
}

// windowOf is the gate's window argument for a unit of m: nil when timeless.
func windowOf(m *spec.Model, w state.Window) *state.Window {
	if m.Temporality == spec.Timeless {
		return nil
	}
	return &w
}

// unitAt finds the unit of m containing at: the stored unit holding it
// (for a fixed model the one on its grid first), else the window of m's
// grid holding it — the fixed grid, or the chunk a flexible model slices
// work by — with a nil unit. A timeless model's unit is its existence row.
func (an *analysis) unitAt(ctx context.Context, m *spec.Model, at time.Time, registered bool) (*state.Unit, state.Window, error) {
	if m.Temporality == spec.Timeless {
		if !registered {
			return nil, state.Window{}, nil
		}
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: m.Name})
		return u, state.Window{}, err
	}
	c := m.Chunking
	if at.IsZero() {
		return nil, state.Window{}, fmt.Errorf("model %s: %w", m.Name, ErrWhyNeedsTime)
	}
	if at.Before(c.Start) {
		return nil, state.Window{}, fmt.Errorf("model %s starts at %s: %s is %w", m.Name, state.FormatTime(c.Start), state.FormatTime(at), ErrBeforeStart)
	}
	grid, err := state.NewGrid(c.Start, c.Interval, c.Location)
	if err != nil {
		return nil, state.Window{}, fmt.Errorf("model %s: %w", m.Name, err)
	}
	gw := grid.WindowContaining(at)
	if !registered {
		return nil, gw, nil
	}
	var found *state.Unit
	probe := state.Window{Since: at, Until: at.Add(time.Microsecond)}
	err = an.g.Store.ScanUnits(ctx, state.UnitQuery{Env: an.env, Model: m.Name, Window: probe}, func(u state.Unit) error {
		if !u.Window.Contains(at) {
			return nil
		}
		if found == nil || (u.Window.Equal(gw) && !found.Window.Equal(gw)) {
			found = &u
		}
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, state.Window{}, fmt.Errorf("reading the units of %s: %w", m.Name, err)
	}
	if found != nil {
		return found, found.Window, nil
	}
	return nil, gw, nil
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// firstUnit is the first unit q matches, or nil.
func (an *analysis) firstUnit(ctx context.Context, q state.UnitQuery) (*state.Unit, error) {
	var found *state.Unit
	err := an.g.Store.ScanUnits(ctx, q, func(u state.Unit) error {
		found = &u
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("reading the units of %s: %w", q.Model, err)
	}
	return found, nil
}

// chainStep is a unit of the chain being walked: its model, window, stored
// unit (nil when missing) and, for the first, the gate already evaluated.
type chainStep struct {
	m    *spec.Model
	link ChainLink
	gate *UnitGate
}

func linkOf(m *spec.Model, w state.Window, u *state.Unit) ChainLink {
	l := ChainLink{Model: m.Name, Window: w, Status: StatusMissing}
	if u != nil {
		l.Window, l.Status = u.Window, u.Status
		switch u.Status {
		case state.Failed:
			l.Detail = u.Error
		case state.Blocked:
			l.Detail = u.BlockedReason
		}
	}
	return l
}

// rootCause walks from the unit upstream: while the current unit is
// outstanding and its gate (evaluated now) has an unsatisfied upstream, the
// first such upstream's unit that holds it back is the next link — a failed
// unit first, then blocked, running, pending, then a missing window, each in
// window order. See WhyReport.RootCause.
func (an *analysis) rootCause(ctx context.Context, m *spec.Model, w state.Window, u *state.Unit, gate UnitGate) ([]ChainLink, error) {
	cur := chainStep{m: m, link: linkOf(m, w, u), gate: &gate}
	links := []ChainLink{cur.link}
	seen := map[string]bool{chainKey(cur.link): true}
	for len(links) < MaxRootCauseDepth {
		switch cur.link.Status {
		case state.Applied, state.Failed, StatusMissing:
			return links, nil
		}
		g, err := an.gateOf(ctx, cur)
		if err != nil {
			return nil, err
		}
		if g.Err != nil {
			if links[len(links)-1].Detail == "" {
				links[len(links)-1].Detail = "gate: " + g.Err.Error()
			}
			return links, nil
		}
		var next *chainStep
		for i, src := range gatedSources(cur.m) {
			v := g.Verdicts[i]
			if v.Satisfied || v.Skipped {
				continue
			}
			var err error
			if next, err = an.blocker(ctx, cur.m, src, v, cur.link.Window); err != nil {
				return nil, err
			}
			if next != nil {
				break // the first unsatisfied upstream with a unit to name
			}
		}
		for _, v := range g.After {
			if next != nil {
				break
			}
			if v.Satisfied {
				continue
			}
			var err error
			if next, err = an.afterBlocker(ctx, v, cur.link.Window); err != nil {
				return nil, err
			}
		}
		if next == nil {
			return links, nil
		}
		k := chainKey(next.link)
		if seen[k] {
			return links, nil
		}
		seen[k] = true
		links = append(links, next.link)
		cur = *next
	}
	return links, nil
}

func chainKey(l ChainLink) string {
	return l.Model + " " + l.Window.String()
}

// statusRank orders the units that hold a downstream unit back by how much
// they explain: a failed unit is a root cause, a blocked one leads further
// upstream.
var statusRank = map[state.UnitStatus]int{state.Failed: 0, state.Blocked: 1, state.Running: 2, state.Pending: 3, StatusMissing: 4}

// blocker is the unit of src that most holds back a unit of m with window
// w, given src's unsatisfied verdict v; nil when there is none to name (a
// WHOLE upstream with no complete window yet).
func (an *analysis) blocker(ctx context.Context, m *spec.Model, src spec.Source, v Verdict, w state.Window) (*chainStep, error) {
	um, _, err := an.model(ctx, src.Name)
	if err != nil {
		return nil, err
	}
	if v.Stale {
		rows, err := an.staleRows(ctx, m, src, w, v)
		if err != nil || len(rows) == 0 {
			return nil, err
		}
		// Under ALL, the oldest of the rows past the threshold: the age the
		// verdict judged.
		pick := rows[0]
		for _, r := range rows[1:] {
			if r.AppliedAt.Before(pick.AppliedAt) {
				pick = r
			}
		}
		return &chainStep{m: um, link: ChainLink{Model: um.Name, Window: pick.Window, Status: state.Applied, Stale: true, Detail: v.Reason}}, nil
	}
	if um.Temporality == spec.Timeless {
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name})
		if err != nil {
			return nil, err
		}
		l := linkOf(um, state.Window{}, u)
		if len(v.Outdated) > 0 || u != nil && u.Status == state.Applied && src.RequireCurrent {
			l.Outdated, l.Detail = true, OutdatedText
		}
		return &chainStep{m: um, link: l}, nil
	}
	// A failed unit in a missing range is the answer wherever it lies.
	for _, r := range v.Missing {
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name, Window: r, Statuses: []state.UnitStatus{state.Failed}})
		if err != nil {
			return nil, err
		}
		if u != nil {
			return &chainStep{m: um, link: linkOf(um, u.Window, u)}, nil
		}
	}
	var best *chainStep
	for _, r := range v.Missing {
		err := an.walkOutstanding(ctx, um, r, func(u *state.Unit, gap state.Window) bool {
			var step chainStep
			if u != nil {
				step = chainStep{m: um, link: linkOf(um, u.Window, u)}
			} else {
				ws, _ := gapWindows(um, gap, 1)
				if len(ws) == 0 {
					return false
				}
				step = chainStep{m: um, link: ChainLink{Model: um.Name, Window: ws[0], Status: StatusMissing}}
			}
			if best == nil || statusRank[step.link.Status] < statusRank[best.link.Status] {
				best = &step
			}
			return best.link.Status == state.Blocked // nothing but failed ranks higher
		})
		if err != nil {
			return nil, err
		}
		if best != nil && best.link.Status == state.Blocked {
			break
		}
	}
	if best == nil {
		// Nothing unloaded holds it back: an applied unit built under an
		// earlier definition does, for a require_current contract.
		err := an.outdatedUnits(ctx, m, src, um, v.Outdated, func(u state.Unit) bool {
			l := linkOf(um, u.Window, &u)
			l.Outdated, l.Detail = true, OutdatedText
			best = &chainStep{m: um, link: l}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return best, nil
}

// walkOutstanding calls fn, in window order, with every unit of um that
// overlaps r and is not applied (u set), and with every part of r that no
// such unit covers (u nil, gap set), until fn returns true. r is a missing
// range of a gate, so no applied unit overlaps it. It streams the units.
func (an *analysis) walkOutstanding(ctx context.Context, um *spec.Model, r state.Window, fn func(u *state.Unit, gap state.Window) bool) error {
	cursor := r.Since
	stopped := false
	gap := func(until time.Time) bool {
		if until.After(r.Until) {
			until = r.Until
		}
		if !until.After(cursor) {
			return false
		}
		return fn(nil, state.Window{Since: cursor, Until: until})
	}
	err := an.outstandingOf(ctx, um.Name, r, func(u state.Unit) error {
		if u.Window.Since.After(cursor) && gap(u.Window.Since) {
			stopped = true
			return errStop
		}
		if u.Window.Until.After(cursor) {
			cursor = u.Window.Until
		}
		if fn(&u, state.Window{}) {
			stopped = true
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) && !errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("reading the units of %s: %w", um.Name, err)
	}
	if !stopped && cursor.Before(r.Until) {
		gap(r.Until)
	}
	return nil
}

// outstandingOf calls fn with each unit of model that overlaps r and is
// not applied, in window order: ScanUnits', or, in a trace (seed), from
// the model's outstanding units read whole once (keptReads).
func (an *analysis) outstandingOf(ctx context.Context, model string, r state.Window, fn func(state.Unit) error) error {
	q := state.UnitQuery{Env: an.env, Model: model, Window: r, Statuses: outstandingStatuses}
	if an.outstanding == nil {
		return an.g.Store.ScanUnits(ctx, q, fn)
	}
	units, ok, err := an.outstanding.get(model, func() ([]state.Unit, error) {
		var all []state.Unit
		whole := q
		whole.Window = state.Window{}
		err := an.g.Store.ScanUnits(ctx, whole, func(u state.Unit) error {
			all = append(all, u)
			return nil
		})
		if errors.Is(err, state.ErrNotFound) {
			err = nil // not registered: no unit, as walkOutstanding takes it
		}
		return all, err
	})
	if err != nil || !ok {
		if err == nil {
			err = an.g.Store.ScanUnits(ctx, q, fn)
		}
		return err
	}
	for _, u := range units {
		if r.IsZero() || u.Window.Overlaps(r) { // zero: no window asked, as ScanUnits reads it
			if err := fn(u); err != nil {
				return err
			}
		}
	}
	return nil
}

// gapWindows cuts a range no unit of um covers into the windows that would
// cover it: the grid windows of a fixed model overlapping it (at most limit
// of them, with the count of the rest), or the range itself for a flexible
// model (its coverage is not bound to a grid). The part before um's start
// can never be applied and is left out.
func gapWindows(um *spec.Model, gap state.Window, limit int) ([]state.Window, int) {
	c := um.Chunking
	if c == nil {
		return nil, 0
	}
	if gap.Since.Before(c.Start) {
		gap.Since = c.Start
	}
	if gap.Empty() {
		return nil, 0
	}
	if c.Flexibility == spec.Flex {
		return []state.Window{gap}, 0
	}
	grid, err := state.NewGrid(c.Start, c.Interval, c.Location)
	if err != nil {
		return nil, 0
	}
	first, last := grid.Index(gap.Since), grid.Index(gap.Until.Add(-time.Nanosecond))
	var out []state.Window
	for k := first; k <= last && len(out) < limit; k++ {
		if gw := grid.WindowAt(k); !gw.Empty() {
			out = append(out, gw)
		}
	}
	return out, max(0, last-first+1-len(out))
}

// staleRows are the applied rows of src that the level selects for a unit
// of m with window w and that keep it stale: under LATEST the one with the
// latest window (re-applying it renews the newest applied_at), under ALL
// every one older than the threshold.
func (an *analysis) staleRows(ctx context.Context, m *spec.Model, src spec.Source, w state.Window, v Verdict) ([]AppliedRow, error) {
	if src.Freshness == nil {
		return nil, nil
	}
	sh, err := an.g.shapeOf(ctx, an.shapes, m.RegistrationEnv(src, an.g.Env).Suffix, src.Name)
	if err != nil || !sh.registered {
		return nil, err
	}
	var need state.Window // zero: every applied row (a timeless upstream)
	if sh.temporality == spec.Temporal {
		switch src.Contract {
		case spec.Exact, spec.Encapsulate:
			need = w
		case spec.Through:
			need = state.Window{Since: state.Earlier(sh.grid.Start, w.Since), Until: w.Until}
		case spec.Whole:
			rng, _ := sh.grid.ContractRange(an.now, sh.end)
			need = rng
		}
		if need.Empty() {
			return nil, nil
		}
	}
	rows, err := an.g.Store.Applied(ctx, m.RegistrationEnv(src, an.g.Env).Suffix, src.Name, need)
	if err != nil {
		return nil, fmt.Errorf("reading applied rows of %s: %w", src.Name, err)
	}
	var sel []AppliedRow
	for _, r := range rows {
		switch {
		case sh.temporality == spec.Timeless:
			sel = append(sel, r)
		case src.Contract == spec.Exact:
			if r.Window.Equal(w) {
				sel = append(sel, r)
			}
		case r.Window.Overlaps(need):
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	if src.Freshness.Scope == spec.Latest {
		latest := sel[0]
		for _, r := range sel[1:] {
			if r.Window.Until.After(latest.Window.Until) {
				latest = r
			}
		}
		return []AppliedRow{latest}, nil
	}
	cutoff := an.now.Add(-src.Freshness.Within)
	var old []AppliedRow
	for _, r := range sel {
		if r.AppliedAt.Before(cutoff) {
			old = append(old, r)
		}
	}
	return old, nil
}

// frontier lists the upstream windows whose application would unblock a
// unit of m with window w, given its gate; see FrontierWindow. Releases
// are filled in by the caller.
func (an *analysis) frontier(ctx context.Context, m *spec.Model, w state.Window, gate UnitGate) ([]FrontierWindow, int, error) {
	var out []FrontierWindow
	more := 0
	seen := map[string]bool{}
	add := func(fw FrontierWindow) {
		if len(out) >= MaxFrontier {
			more++ // counted, not kept: an estimate past the cap
			return
		}
		k := fw.Model + " " + fw.Window.String()
		if !seen[k] {
			seen[k] = true
			out = append(out, fw)
		}
	}
	for i, src := range gatedSources(m) {
		v := gate.Verdicts[i]
		if v.Satisfied || v.Skipped || v.Err != nil {
			continue
		}
		um, _, err := an.model(ctx, src.Name)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case v.Stale:
			rows, err := an.staleRows(ctx, m, src, w, v)
			if err != nil {
				return nil, 0, err
			}
			for _, r := range rows {
				add(FrontierWindow{Model: um.Name, Window: r.Window, Status: state.Applied, Stale: true})
			}
		case um.Temporality == spec.Timeless:
			u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name})
			if err != nil {
				return nil, 0, err
			}
			l := linkOf(um, state.Window{}, u)
			if l.Status != state.Applied {
				add(FrontierWindow{Model: um.Name, Status: l.Status})
			} else if src.RequireCurrent {
				add(FrontierWindow{Model: um.Name, Status: l.Status, Outdated: true})
			}
		default:
			for _, r := range v.Missing {
				err := an.walkOutstanding(ctx, um, r, func(u *state.Unit, gap state.Window) bool {
					if u != nil {
						add(FrontierWindow{Model: um.Name, Window: u.Window, Status: u.Status})
						return false
					}
					ws, rest := gapWindows(um, gap, max(1, MaxFrontier-len(out)))
					for _, gw := range ws {
						add(FrontierWindow{Model: um.Name, Window: gw, Status: StatusMissing})
					}
					more += rest
					return false
				})
				if err != nil {
					return nil, 0, err
				}
			}
			err := an.outdatedUnits(ctx, m, src, um, v.Outdated, func(u state.Unit) bool {
				add(FrontierWindow{Model: um.Name, Window: u.Window, Status: state.Applied, Outdated: true})
				return false
			})
			if err != nil {
				return nil, 0, err
			}
		}
	}
	return out, more, nil
}
