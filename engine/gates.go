package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// gates is the gate reader over e's store, spec, environment and clock.
func (e *Engine) gates() *gate.Reader {
	return &gate.Reader{Store: e.store, Spec: e.spec, Env: e.opts.Env, Now: e.now}
}

// taskGates is the gate reader of a run's task: a run judges per unit
// only the after: edges its task graph does not settle (runScope.
// perWindow); a read, or a worker, which has no task graph, judges them
// all.
func (e *Engine) taskGates(sc runScope) *gate.Reader {
	r := e.gates()
	if len(sc.perWindow) == 0 {
		r.NoAfter = true
		return r
	}
	r.AfterOnly = func(_ *spec.Model, a spec.AfterEdge) bool { return sc.perWindow[a.Task] }
	r.AfterSettled = sc.settled
	return r
}

// GateSweep judges every outstanding unit the filter selects from one read
// of the environment; see gate.Reader.Sweep.
func (e *Engine) GateSweep(ctx context.Context, f gate.BlockedFilter, fn func(gate.SweptUnit) error) (*gate.SweepReport, error) {
	return e.gates().Sweep(ctx, f, fn)
}

// Blocked lists the blocked units the filter selects, with their reasons and
// downstream impact; see gate.Reader.Blocked.
func (e *Engine) Blocked(ctx context.Context, f gate.BlockedFilter) ([]gate.BlockedUnit, error) {
	return e.gates().Blocked(ctx, f)
}

// BlockedPages is Blocked a page at a time, in its order, the first page
// handed over before every blocked unit is read; see
// gate.Reader.BlockedPages.
func (e *Engine) BlockedPages(ctx context.Context, f gate.BlockedFilter, size int, fn func(gate.StuckPage) error) error {
	return e.gates().BlockedPages(ctx, f, size, fn)
}

// Triage lists the failed and blocked units the filter selects with their
// downstream impact, the UI's triage queue; see gate.Reader.Triage.
func (e *Engine) Triage(ctx context.Context, f gate.BlockedFilter) ([]gate.BlockedUnit, error) {
	return e.gates().Triage(ctx, f)
}

// TriageFirst is TriagePages' first page of at most limit units and the
// incidents report, from one grouped read; see gate.Reader.TriageFirst.
// What the Blocked view loads.
func (e *Engine) TriageFirst(ctx context.Context, limit int) (gate.StuckPage, *gate.IncidentReport, error) {
	return e.gates().TriageFirst(ctx, limit)
}

// Judge is a gate sweep of the models alone (gate.Reader.SweepModels):
// their units that are not applied and their upstreams' applied rows are
// read, not the environment's. fn receives
// each judged unit. What the Blocked view marks ready by when the
// environment is too large to keep the live index (LiveGate) in memory.
func (e *Engine) Judge(ctx context.Context, models []string, fn func(gate.SweptUnit) error) (*gate.SweepReport, error) {
	return e.gates().SweepModels(ctx, models, fn)
}

// Why explains the unit of model that holds at: its state, each gated
// upstream's verdict and the root cause of a wait; see gate.Reader.Why.
func (e *Engine) Why(ctx context.Context, model string, at time.Time) (*gate.WhyReport, error) {
	r, err := e.gates().Why(ctx, model, at)
	if err != nil || r.Status != state.Applied {
		return r, err
	}
	current, err := e.CurrentFingerprint(ctx, model)
	if err != nil {
		return nil, err
	}
	r.Definition = UnitDefinition(state.Unit{Status: r.Status, Fingerprint: r.Fingerprint}, current)
	if r.Definition == DefinitionOutdated {
		if r.Change, err = e.DefinitionChange(ctx, model, r.Fingerprint, current); err != nil {
			return nil, err
		}
	}
	mt, err := e.BuiltOnOutdated(ctx, model)
	if err != nil {
		return nil, err
	}
	if b := mt.BuiltOnAt(r.Window); b != nil {
		r.BuiltOnOutdated = b.Upstreams
	}
	return r, nil
}

// GateUnitFromStore gates one unit of m against the store at now.
func (e *Engine) GateUnitFromStore(ctx context.Context, m *spec.Model, w *state.Window, now time.Time) (gate.UnitGate, error) {
	return e.gates().Unit(ctx, m, w, now)
}

// Incidents groups what is failed, blocked or stale into root causes, most
// downstream impact first; see gate.Reader.Incidents. When it finds no
// incident and nothing untraced, it adds Recheck's report of every unit
// (IncidentReport.Recheck), so "all clear" (IncidentReport.AllClear) is
// said only when blocked --recheck finds nothing held either.
func (e *Engine) Incidents(ctx context.Context) (*gate.IncidentReport, error) {
	rep, err := e.gates().Incidents(ctx)
	if err != nil || len(rep.Incidents) > 0 || rep.Untraced > 0 {
		return rep, err
	}
	if rep.Recheck, err = e.Recheck(ctx, gate.BlockedFilter{}); err != nil {
		return nil, err
	}
	return rep, nil
}

// Recheck judges now the gate of every unit the filter selects that is not
// applied, changing nothing: the report of a live gate index built from
// one full read (LiveGate), which is, unit for unit, what a full sweep
// says. It is `blocked --recheck`, and what Incidents adds when it finds no
// incident.
func (e *Engine) Recheck(ctx context.Context, f gate.BlockedFilter) (*gate.SweepReport, error) {
	live, err := e.LiveGate(ctx)
	if err != nil {
		return nil, err
	}
	return live.Report(f)
}

// Glance is a first look at the incidents: the failed roots and how many
// blocked units wait to be traced; see gate.Reader.Glance.
func (e *Engine) Glance(ctx context.Context) (*gate.IncidentReport, error) {
	return e.gates().Glance(ctx)
}

// IncidentsReport is the incidents report alone (gate.Reader.Incidents:
// the first page and the grouped counts, never every blocked unit),
// without Incidents' recheck of a quiet store: what a caller that reads it again and again
// (the metrics refresh, the why pick) reads.
func (e *Engine) IncidentsReport(ctx context.Context) (*gate.IncidentReport, error) {
	return e.gates().Incidents(ctx)
}

// LiveGateMaxUnits bounds the environments a process keeps the live gate
// index of: it holds every unit, about 33 bytes each (333 MB at ten
// million units, docs/BENCHMARKS.md), and its build costs a full read; at
// a million units that was 0.9 s and 116 MB more than the Blocked view's
// whole load judging the units it shows (Judge), so past half a million a
// screen that shows verdicts judges the units it shows instead.
const LiveGateMaxUnits = 500_000

// LiveGateFits reports whether the environment has at most
// LiveGateMaxUnits units, by the store's kept counts (no unit is read).
func (e *Engine) LiveGateFits(ctx context.Context) (bool, error) {
	counts, err := e.store.StatusCounts(ctx, e.opts.Env.Suffix)
	if err != nil {
		return false, fmt.Errorf("reading the unit counts: %w", err)
	}
	n := 0
	for _, c := range counts {
		for _, k := range c.Counts {
			n += k
		}
	}
	return n <= LiveGateMaxUnits, nil
}

// LiveGate builds a live gate index over e's store, spec, environment and
// clock from one full read: the sweep's verdicts, kept current from the
// change feed by the caller (gate.Live.Apply) and the clock
// (gate.Live.Advance at NextChange). A process that shows verdicts for a
// long time keeps one instead of sweeping on every change.
func (e *Engine) LiveGate(ctx context.Context) (*gate.Live, error) {
	return gate.NewLive(ctx, *e.gates())
}
