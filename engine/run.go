package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/engine/tick"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// Lease timing for units claimed by this process: a worker that dies leaves
// a lease that expires after DefaultLease; a live one extends it every
// DefaultLease/3.
const DefaultLease = 2 * time.Minute

// TaskResult is one task's outcome in a run.
type TaskResult struct {
	Model    string
	TaskID   int
	Pipeline string
	// Status is SUCCESS, FAILED or SKIPPED.
	Status                   graph.TaskStatus
	Applied, Blocked, Failed int
	// RowsWritten sums the units' rows; nil when no unit reported any.
	RowsWritten *int64
	// HardErrors counts units failed by a gate-time hard error.
	HardErrors int
	// Errors holds the distinct unit errors, hard gate errors first
	// (prefixed "gate: ").
	Errors []string
	// Waiting marks a task that did not run in this call: a cross-pipeline
	// upstream has no outcome for the window yet, or its outcome does not
	// hold the edge. It has no status in the run log and is considered
	// again when the run is retried (Status is meaningless then).
	Waiting bool
	// Reason says why a task waits or was skipped: each edge its upstream's
	// outcome does not satisfy (gate.AfterReason); empty otherwise. The
	// task's pending units in the run window are held (blocked) with it.
	Reason string
	// SkippedByFailure marks a SKIPPED task that an upstream's failure
	// skipped (directly, or through a task it skipped): once that is fixed
	// it has work to pick up. A task skipped because nothing failed (a
	// FAILURE edge on a good day) has none.
	SkippedByFailure bool
}

// TaskTally counts the run's tasks by outcome (SUCCESS, FAILED, SKIPPED,
// WAITING), in that order, leaving out the outcomes no task had.
func (r *RunResult) TaskTally() []TaskCount {
	var out []TaskCount
	for _, o := range []string{"SUCCESS", "FAILED", "SKIPPED", "WAITING"} {
		n := 0
		for _, t := range r.Tasks {
			if t.Outcome() == o {
				n++
			}
		}
		if n > 0 {
			out = append(out, TaskCount{Outcome: o, Count: n})
		}
	}
	return out
}

// TaskCount is how many of a run's tasks had one outcome.
type TaskCount struct {
	Outcome string
	Count   int
}

// Outcome is the task's status as the run log spells it (SUCCESS, FAILED,
// SKIPPED), or WAITING for a task that did not run because an upstream failed.
func (t TaskResult) Outcome() string {
	if t.Waiting {
		return "WAITING"
	}
	return t.Status.String()
}

// RunResult is what a run came to.
type RunResult struct {
	RunID int64
	Mode  spec.StateMode
	// Window is the run's window; zero when it has none.
	Window state.Window
	Tasks  []TaskResult
	// HardErrors counts units failed by a gate-time hard error.
	HardErrors int
	// Released are the blocked units downstream of what the run applied
	// whose upstreams caught up: their reason rewritten to say so
	// (releaseCaughtUp), for the next run. A run with Downstream applies
	// them itself, in Then.
	Released []ReleasedModel
	// Then are the discover runs, one per released model, a run with
	// Downstream started over what it released; none when it released
	// nothing or was not asked to.
	Then []*RunResult
}

// Failed reports whether a task failed or a hard gate error occurred: the
// CLI's exit code 1.
func (r *RunResult) Failed() bool {
	if r.HardErrors > 0 {
		return true
	}
	for _, t := range r.Tasks {
		if t.Waiting || t.Status == graph.StatusFailed {
			return true
		}
	}
	return false
}

// Progress is a live report from a running task, for the CLI's progress
// lines and the UI.
type Progress struct {
	RunID                           int64
	Model                           string
	Applied, Blocked, Failed, Total int
	Done                            bool
	Status                          graph.TaskStatus
}

// runScope is one task of a run: a model and the window its units are
// claimed in (zero: every pending unit of the model).
type runScope struct {
	model    *spec.Model
	taskID   int
	pipeline string
	window   state.Window
	// perWindow names the upstream tasks of the after: edges that the
	// task's units are gated on one by one, each for its own window
	// (outsideEdge.perWindow); the task graph settles the others.
	perWindow map[string]bool
	// settled are the verdicts of the task's same-pipeline after: edges
	// when it started, which a unit's run condition folds with the edges
	// judged per window.
	settled map[string]gate.AfterVerdict
	// inFlight are the run's tasks in progress, shared by all of them.
	inFlight *modelsInFlight
	// slots bound the units the run's tasks hold between them.
	slots *unitSlots
}

// Run registers the spec, plans the request, applies the plan's state changes
// and executes the run over its task graph: ready tasks start, unsatisfiable
// ones are recorded SKIPPED, each task claims its units in the run window,
// gates every unit against its upstreams, executes it and records the
// outcome.
// progress, when not nil, is called from the run's goroutines.
func (e *Engine) Run(ctx context.Context, req RunRequest, exec executor.Executor, progress func(Progress)) (res *RunResult, err error) {
	if err := e.refuseReadOnly(ctx, "run", runArgs(req)); err != nil {
		return nil, err
	}
	started, clock := e.runClock()
	begun := e.leaseNow() // units others finish from here on are the run's to count
	audit := e.newRunAudit(ctx, "run", runArgs(req))
	var (
		runID int64
		done  []string
	)
	defer func() { audit.failed(runID, err, done) }()
	if e.spec == nil {
		return nil, errors.New("run needs a spec: the engine was opened from the store alone")
	}
	applied, err := e.ApplyFor(ctx, req)
	if err != nil {
		return nil, err
	}
	// Units left running by a worker that died come back to pending (with
	// attempts+1) once their lease has expired, before the plan looks at
	// them: an expired lease must not block a reset.
	if _, err := e.rescue(ctx); err != nil {
		return nil, fmt.Errorf("releasing expired leases: %w", err)
	}
	var plan *Plan
	if req.Confirmed != nil {
		// Planned at the confirmed plan's clock, so that only a change in
		// the store — not an hour passing while the operator typed — can
		// make it differ.
		if plan, err = e.plan(ctx, req, req.Confirmed.Now); err == nil {
			err = samePlan(req.Confirmed, plan)
		}
	} else {
		plan, err = e.Plan(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	mode := cmp.Or(req.Mode, spec.Bulldozer)
	scopes, err := e.scopes(ctx, plan.ModelNames(), req.Window, applied.taskIDs())
	if err != nil {
		return nil, err
	}
	if req.Outdated {
		outdatedScopes(scopes, plan)
	}
	run := state.Run{Env: e.opts.Env.Suffix, Pipeline: req.Pipeline, Models: plan.ModelNames(), StateMode: string(mode),
		Status: state.RunRunning, Actor: e.opts.Actor, StartedAt: started, Heartbeat: e.leaseNow()}
	if req.Window != nil {
		run.Window = *req.Window
	}
	if runID, err = e.store.CreateRun(ctx, run); err != nil {
		return nil, fmt.Errorf("recording the run: %w", err)
	}
	// The run beats its heartbeat from here until it is recorded ended,
	// so that no rescuer takes it for abandoned while it lives.
	beat := e.beatRun(ctx, runID)
	defer beat.stop()
	if err := e.applyPlan(ctx, plan, runID, &done, true); err != nil {
		_ = e.store.FinishRun(context.WithoutCancel(ctx), runID, state.RunFailed, clock())
		return nil, err
	}
	if err := audit.started(runID, fmt.Sprintf("%s run %d started", mode, runID), done); err != nil {
		_ = e.store.FinishRun(context.WithoutCancel(ctx), runID, state.RunFailed, clock())
		return nil, err
	}
	res, err = e.execute(ctx, runID, begun, mode, scopes, graph.RunState{}, exec, req.Workers, progress, clock)
	beat.stop()
	if res != nil {
		res.Window = run.Window
	}
	if err == nil && (req.Downstream || req.RunReleased) && ctx.Err() == nil {
		// What the run released downstream runs in the same command: for
		// each model, a discover run over its released windows (each on
		// its own grid), which applies what is ready, re-judges the rest,
		// and runs in turn what it releases.
		for _, r := range res.Released {
			then := RunRequest{Models: []string{r.Model}, Mode: spec.Discover, Workers: req.Workers, RunReleased: true}
			if !r.Span.IsZero() {
				w := r.Span
				then.Window = &w
			}
			next, nerr := e.Run(ctx, then, exec, progress)
			if next != nil {
				res.Then = append(res.Then, next)
			}
			if nerr != nil {
				return res, nerr
			}
		}
	}
	return res, err
}

// Retry resumes a run that did not succeed: SUCCESS and SKIPPED tasks never
// run again, FAILED tasks get a new attempt in which their failed units run
// again, and tasks that never started are scheduled as usual. No reset is
// repeated: a retry never throws away what the first attempt applied.
func (e *Engine) Retry(ctx context.Context, runID int64, exec executor.Executor, workers int, progress func(Progress)) (res *RunResult, err error) {
	if err := e.refuseReadOnly(ctx, "retry", map[string]string{"run": strconv.FormatInt(runID, 10)}); err != nil {
		return nil, err
	}
	_, clock := e.runClock()
	begun := e.leaseNow()
	audit := e.newRunAudit(ctx, "retry", map[string]string{})
	var reset []string
	defer func() { audit.failed(runID, err, reset) }()
	if e.spec == nil {
		return nil, errors.New("retry needs a spec: the engine was opened from the store alone")
	}
	if err := CheckWorkers(workers); err != nil {
		return nil, err
	}
	run, err := e.store.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", runID, err)
	}
	if run.Status == state.RunSucceeded {
		return nil, fmt.Errorf("run %d succeeded: there is nothing to retry", runID)
	}
	if run.Env != e.opts.Env.Suffix {
		return nil, fmt.Errorf("run %d belongs to environment %q, not %q: retry it there", runID, run.Env, e.opts.Env.Suffix)
	}
	var window *state.Window
	if !run.Window.Empty() {
		window = &run.Window
	}
	scopes, err := e.scopes(ctx, run.Models, window, nil)
	if err != nil {
		return nil, err
	}
	log, err := e.store.TaskLog(ctx, runID)
	if err != nil {
		return nil, err
	}
	if len(log) == 0 {
		// The run stopped before any task ran: its resets may be half
		// applied, and resuming would run nothing. Only a new run can
		// redo its plan.
		return nil, fmt.Errorf("run %d stopped before any task ran (its plan may be half applied): start a new run instead", runID)
	}
	if _, err := e.rescue(ctx); err != nil {
		return nil, fmt.Errorf("releasing expired leases: %w", err)
	}
	rs := gate.RunStateFromLog(log)
	for _, sc := range scopes {
		if st := rs[sc.taskID].Status; st != nil && *st == graph.StatusFailed {
			// The task gets a new attempt: until it ends, its dependents
			// wait for that outcome instead of the failed one.
			delete(rs, sc.taskID)
			n, err := e.store.SetStatus(ctx, state.StatusChange{Env: e.opts.Env.Suffix, Model: sc.model.Name, Window: sc.window,
				From: []state.UnitStatus{state.Failed}, To: state.Pending, RunID: runID, Now: e.now()})
			if err != nil {
				return nil, err
			}
			reset = append(reset, fmt.Sprintf("%s: reset %d failed", sc.model.Name, n))
		}
	}
	if err := audit.started(runID, fmt.Sprintf("%s run %d retried", run.StateMode, runID), reset); err != nil {
		return nil, err
	}
	beat := e.beatRun(ctx, runID)
	res, err = e.execute(ctx, runID, begun, spec.StateMode(run.StateMode), scopes, rs, exec, workers, progress, clock)
	beat.stop()
	if res != nil {
		res.Window = run.Window
	}
	return res, err
}

// scopes resolves the run's models to tasks with their registered ids:
// ids, the ids the run's apply registered, or, when nil, the store's
// registrations.
func (e *Engine) scopes(ctx context.Context, names []string, window *state.Window, ids map[string]int) ([]runScope, error) {
	if ids == nil {
		recs, err := e.store.ModelHeads(ctx, e.opts.Env.Suffix)
		if err != nil {
			return nil, err
		}
		ids = make(map[string]int, len(recs))
		for _, r := range recs {
			ids[r.Name] = r.TaskID
		}
	}
	out := make([]runScope, 0, len(names))
	for _, name := range names {
		m := e.spec.Model(name)
		if m == nil {
			return nil, fmt.Errorf("unknown model %q", name)
		}
		id, ok := ids[name]
		if !ok {
			return nil, fmt.Errorf("model %s is not registered in %s", name, e.opts.Env)
		}
		sc := runScope{model: m, taskID: id, pipeline: m.Pipeline}
		if window != nil && m.Temporality == spec.Temporal {
			sc.window = *window
		}
		out = append(out, sc)
	}
	return out, nil
}

// runGraph builds one task graph over the run's tasks, whatever their
// pipelines: an edge onto a task in this run is a real edge (so a gated
// upstream in another pipeline still runs first), and an edge onto a task
// outside the run counts like a cross-pipeline edge — the run condition counts
// it, and outside returns it for the cross-pipeline gate (crossSatisfied).
//
// The edge of a gated upstream (no after: entry) only orders the tasks: the
// downstream waits until its upstream's task is terminal, whatever the
// outcome, and the contract gate then decides each of its windows — one
// failed upstream hour blocks the windows that need it, never the whole
// task. Explicit after: edges keep their type.
func (e *Engine) runGraph(scopes []runScope) (g *graph.DependencyGraph, outside map[int][]outsideEdge, err error) {
	in := map[string]runScope{}
	for _, sc := range scopes {
		in[sc.model.Name] = sc
	}
	outside = map[int][]outsideEdge{}
	var nodes []graph.TaskNode
	var edges []graph.TaskEdge
	for _, sc := range scopes {
		same, cross := modelEdges(e.spec, sc.model)
		link := func(oe outsideEdge) {
			typ := oe.typ
			if oe.implicit {
				typ = graph.Always
			}
			if up, ok := in[oe.dependsOn]; ok {
				edges = append(edges, graph.TaskEdge{TaskID: sc.taskID, DependsOnTaskID: up.taskID, Type: typ})
				return
			}
			outside[sc.taskID] = append(outside[sc.taskID], oe)
		}
		for _, edge := range same {
			link(outsideEdge{dependsOn: edge.DependsOn, typ: edge.Type, implicit: edge.Implicit})
		}
		for _, edge := range cross {
			link(outsideEdge{dependsOn: edge.DependsOn, typ: edge.Type, implicit: edge.Implicit, cross: true, stateless: !sc.model.State})
		}
		nodes = append(nodes, graph.TaskNode{ID: sc.taskID, RunCondition: sc.model.RunCondition,
			RunConditionCount: sc.model.RunConditionCount, CrossPipelineEdgeCount: len(outside[sc.taskID])})
	}
	g, err = graph.Build(nodes, edges)
	return g, outside, err
}

type taskDone struct {
	scope  runScope
	result TaskResult
	err    error
}

// execute schedules the run's tasks until none is ready: ready tasks start
// (each at most once per call, so a failed task runs again only through
// Retry) and unsatisfiable ones are recorded SKIPPED. A task is FAILED only
// once a unit's retry budget is spent, so its failure is final in this call
// (failuresFinal is true): SUCCESS and HAS_DATA dependents are SKIPPED, and
// tasks that wait on another pipeline's outcome are left without a status.
func (e *Engine) execute(ctx context.Context, runID int64, begun time.Time, mode spec.StateMode, scopes []runScope, rs graph.RunState,
	exec executor.Executor, workers int, progress func(Progress), clock func() time.Time) (res *RunResult, runErr error) {
	res = &RunResult{RunID: runID, Mode: mode}
	g, outside, err := e.runGraph(scopes)
	if err != nil {
		_ = e.store.FinishRun(context.WithoutCancel(ctx), runID, state.RunFailed, clock())
		return nil, err
	}
	byID := map[int]runScope{}
	for _, sc := range scopes {
		for _, oe := range outside[sc.taskID] {
			if oe.perWindow() {
				if sc.perWindow == nil {
					sc.perWindow = map[string]bool{}
				}
				sc.perWindow[oe.dependsOn] = true
			}
		}
		byID[sc.taskID] = sc
	}
	cross, err := e.crossSatisfied(ctx, runID, byID, outside)
	if err != nil {
		_ = e.store.FinishRun(context.WithoutCancel(ctx), runID, state.RunFailed, clock())
		return nil, err
	}
	results := map[int]TaskResult{}
	started := map[int]bool{}
	wakeCtx, stopWake := context.WithCancel(ctx)
	defer stopWake()
	wake := e.startRunWake(wakeCtx)
	wake.since = begun // before the plan's prefill: a worker may take a unit at once
	done := make(chan taskDone)
	running := 0
	inFlight := newModelsInFlight()
	slots := newUnitSlots(unitsAtOnce)
	most := tasksAtOnce(workers)
	for {
		if runErr == nil && ctx.Err() == nil {
			// No attempt of a failed unit comes later in this run (a
			// failed task gets another only from run --retry), so its
			// failure is final here: SUCCESS and HAS_DATA dependents are
			// skipped, ALWAYS and FAILURE ones run, and the run ends.
			for _, id := range append(g.Unsatisfiable(rs, true), cross.doomed(g, rs)...) {
				if rs[id].Status != nil {
					continue // in both lists
				}
				if err := e.retryStore(ctx, "record skipped task", func() error { return e.recordSkipped(ctx, runID, id, clock()) }); err != nil {
					runErr = err
				}
				sc := byID[id]
				reason, byFailure := skipReason(g, rs, byID, runID, id, cross.reasons[id])
				held, err := e.holdUnits(ctx, runID, sc, reason)
				if err != nil && runErr == nil {
					runErr = err
				}
				skipped := graph.StatusSkipped
				rs[id] = graph.TaskRunState{Status: &skipped}
				results[id] = TaskResult{Model: sc.model.Name, TaskID: id, Pipeline: sc.pipeline, Status: skipped, Reason: reason, Blocked: held,
					SkippedByFailure: byFailure}
			}
			var wave []runScope
			for _, id := range g.Ready(rs, cross.satisfied) {
				if started[id] {
					continue
				}
				if running == most {
					break // the rest start as tasks end
				}
				started[id] = true
				inProgress := graph.StatusInProgress
				rs[id] = graph.TaskRunState{Status: &inProgress}
				running++
				sc := byID[id]
				if len(sc.perWindow) > 0 {
					sc.settled = settledEdges(g, rs, byID, runID, id)
				}
				sc.inFlight, sc.slots = inFlight, slots
				wave = append(wave, sc)
			}
			// Every task of the wave is in flight before any of them judges
			// a unit: one that needs another's pending units waits for them.
			for _, sc := range wave {
				inFlight.start(sc.model.Name)
			}
			for _, sc := range wave {
				go func(sc runScope) {
					var r TaskResult
					var err error
					if sc.model.State {
						r, err = e.runTask(ctx, runID, mode, sc, exec, workers, wake, progress, clock)
					} else {
						r, err = e.runStateless(ctx, runID, mode, sc, exec, progress, clock)
					}
					done <- taskDone{scope: sc, result: r, err: err}
				}(sc)
			}
		}
		if running == 0 {
			break
		}
		d := <-done
		running--
		inFlight.end(d.scope.model.Name)
		if d.err != nil && runErr == nil {
			runErr = d.err
		}
		st := d.result.Status
		rs[d.scope.taskID] = graph.TaskRunState{Status: &st, RowsWritten: d.result.RowsWritten}
		results[d.scope.taskID] = d.result
		res.HardErrors += d.result.HardErrors
	}
	for _, sc := range scopes {
		switch r, ok := results[sc.taskID]; {
		case ok:
			res.Tasks = append(res.Tasks, r)
		case rs[sc.taskID].Status != nil:
			// Settled by an earlier attempt of this run (a retry). Why an
			// earlier attempt skipped it is not in the log; a task with an
			// edge a failure can lose was skipped by one, as far as
			// picking it up goes.
			st := *rs[sc.taskID].Status
			res.Tasks = append(res.Tasks, TaskResult{Model: sc.model.Name, TaskID: sc.taskID, Pipeline: sc.pipeline, Status: st,
				SkippedByFailure: st == graph.StatusSkipped && !failureEdgesOnly(sc.model)})
		default:
			held := 0
			if runErr == nil && ctx.Err() == nil {
				// Waiting on another pipeline's outcome, not cut short by
				// a cancel or an error: its units wait with the reason.
				var err error
				if held, err = e.holdUnits(ctx, runID, sc, cross.reasons[sc.taskID]); err != nil {
					runErr = err
				}
			}
			res.Tasks = append(res.Tasks, TaskResult{Model: sc.model.Name, TaskID: sc.taskID, Pipeline: sc.pipeline, Waiting: true,
				Reason: cross.reasons[sc.taskID], Blocked: held})
		}
	}
	if runErr == nil && ctx.Err() == nil {
		var applied []string
		for _, t := range res.Tasks {
			if t.Applied > 0 {
				applied = append(applied, t.Model)
			}
		}
		if res.Released, err = e.releaseCaughtUp(ctx, runID, applied); err != nil {
			runErr = err
		}
	}
	status := state.RunSucceeded
	if res.Failed() || runErr != nil {
		status = state.RunFailed
	}
	if ctx.Err() != nil {
		status = state.RunCancelled
	}
	if err := e.retryStore(context.WithoutCancel(ctx), "finish run", func() error {
		return e.store.FinishRun(context.WithoutCancel(ctx), runID, status, clock())
	}); err != nil && runErr == nil {
		runErr = err
	}
	return res, runErr
}

// hardErrorPrefix marks a unit error that came from the gate, not the work.
const hardErrorPrefix = "gate: "

func (e *Engine) recordSkipped(ctx context.Context, runID int64, taskID int, now time.Time) error {
	attempt, err := e.store.StartTask(ctx, runID, taskID, now)
	if err != nil {
		return err
	}
	return e.store.FinishTask(ctx, state.TaskRunEntry{RunID: runID, TaskID: taskID, Attempt: attempt,
		Status: graph.StatusSkipped.String(), StartedAt: now, FinishedAt: &now})
}

// outstanding counts the scope's units that are still pending or running.
func (e *Engine) outstanding(ctx context.Context, sc runScope) (int, error) {
	n := 0
	err := e.retryStore(ctx, "count outstanding units", func() error {
		n = 0
		return e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: sc.model.Name, Window: sc.window,
			Statuses: []state.UnitStatus{state.Pending, state.Running}}, func(state.Unit) error { n++; return nil })
	})
	return n, err
}

// unitVerdict is what running a claimed unit came to, before its outcome is
// recorded.
type unitVerdict struct {
	out state.Outcome
	// hard marks a unit failed on a gate-time hard error.
	hard bool
	// recorded is true when nothing is left to record: the executor
	// recorded the unit applied in its own data transaction, or found
	// that the lease was lost.
	recorded bool
	// err fails the task; when recorded is false, out (a release) is still
	// recorded first.
	err error
}

// runUnit gates one claimed unit and, when every upstream is satisfied,
// executes it under unitCtx, the context the unit's heartbeat cancels when
// its lease is lost. The outcome is left for the caller to record under the
// claim's fence, except by an executor that records the unit itself. A
// unit whose gate fails only on upstream work under way — running, or
// pending in a model claimsPending says the caller loads — waits instead of
// blocking (underWay).
func (e *Engine) runUnit(ctx, unitCtx context.Context, gates *gate.Reader, cache *gate.RegistrationCache, claimsPending func(string) bool, runID int64, mode spec.StateMode, m *spec.Model, c state.Claim, exec executor.Executor) unitVerdict {
	if unitCtx.Err() != nil && ctx.Err() == nil {
		// The heartbeat heard, while the unit waited in the queue, that
		// another worker owns it now. Running it would run it twice; the
		// store refuses this outcome, which reports the lost lease.
		return unitVerdict{out: state.Outcome{Status: state.Failed, Error: "the lease was lost before the unit started", At: e.now()}}
	}
	var w *state.Window
	if m.Temporality == spec.Temporal {
		w = &c.Unit.Window
	}
	var judged gate.UnitGate
	err := e.retryStore(ctx, "gate", func() (err error) {
		judged, err = gates.CachedUnit(ctx, cache, m, w, e.now())
		return err
	})
	var v unitVerdict
	switch {
	case err != nil:
		// The store could not be read: leave the unit for another attempt.
		return unitVerdict{out: state.Outcome{Status: state.Pending, At: e.now()}, err: err}
	case judged.Err != nil:
		v = unitVerdict{out: state.Outcome{Status: state.Failed, Error: judged.Err.Error()}, hard: true}
	case !judged.Satisfied:
		v.out = state.Outcome{Status: state.Blocked, BlockedReason: judged.BlockedReason}
		if reason, ok := e.underWay(ctx, gates, m, judged, claimsPending); ok {
			v.out = state.Outcome{Status: state.Pending, BlockedReason: reason, NotBefore: e.leaseNow().Add(underWayWait)}
		}
	default:
		// The definition this unit is built under, recorded with its
		// applied outcome so a later change of the model shows it outdated.
		fp := spec.Fingerprint(m)
		u := executor.UnitRun{Model: m, Env: e.opts.Env, Window: w, RunID: runID, StateMode: mode, SpecDir: e.opts.SpecDir, Fingerprint: fp}
		if ua, ok := exec.(executor.Applier); ok && ua.AppliesItself(m) {
			at := e.now()
			r, xerr := ua.ExecuteAndApply(unitCtx, u, c, at)
			for try := 1; try < dataTries && connectionLost(xerr) && unitCtx.Err() == nil; try++ {
				// The connection went away mid-transaction. The unit is
				// still running under this claim only if the transaction
				// did not commit (a commit marks it applied), which a
				// heartbeat under the claim's fence tells: then running
				// it again cannot apply it twice.
				xerr = e.retryStore(unitCtx, "heartbeat", func() error {
					return e.store.Heartbeat(unitCtx, c, e.leaseNow().Add(e.lease()))
				})
				if xerr != nil {
					break
				}
				at = e.now()
				r, xerr = ua.ExecuteAndApply(unitCtx, u, c, at)
			}
			if xerr == nil {
				// A warehouse unit's data committed there; its store record
				// goes with the batched completions (r.Unrecorded).
				return unitVerdict{out: state.Outcome{Status: state.Applied, At: at, RowsWritten: r.RowsWritten, Fingerprint: fp}, recorded: !r.Unrecorded}
			}
			if errors.Is(xerr, state.ErrLeaseLost) {
				e.logger().Warn("lost the lease: another worker owns the unit now; its work was rolled back",
					"model", m.Name, "window", c.Unit.Window.String(), "fence", c.Fence)
				return unitVerdict{recorded: true, err: fmt.Errorf("recording %s %s: %w", m.Name, c.Unit.Window, xerr)}
			}
			v.out = failedOrReleased(ctx, xerr)
			break
		}
		r, xerr := exec.Execute(unitCtx, u)
		if xerr != nil {
			v.out = failedOrReleased(ctx, xerr)
		} else {
			v.out = state.Outcome{Status: state.Applied, RowsWritten: r.RowsWritten, Fingerprint: fp}
		}
	}
	v.out.At = e.now()
	return v
}

// settle hands v to the completer, unless nothing is left to record, and
// calls done with the unit's error once its outcome is in the store: nil, a
// lost lease (logged: the outcome is dropped), or v's own error.
func (e *Engine) settle(comp *completer, h *heldUnit, v unitVerdict, done func(*heldUnit, unitVerdict, error)) {
	if v.recorded {
		done(h, v, v.err)
		return
	}
	comp.record(finished{claim: h.claim, out: v.out, then: func(err error) {
		if err != nil {
			if errors.Is(err, state.ErrLeaseLost) {
				e.logger().Warn("lost the lease: another worker owns the unit now; its outcome is dropped",
					"model", h.model.Name, "window", h.claim.Unit.Window.String(), "fence", h.claim.Fence)
			}
			err = fmt.Errorf("recording %s %s: %w", h.model.Name, h.claim.Unit.Window, err)
		}
		if v.err != nil {
			err = v.err // the gate's error, whatever the release came to
		}
		done(h, v, err)
	}})
}

// failedOrReleased is the outcome of a unit whose work returned err: failed,
// unless the run itself was cancelled (SIGINT, SIGTERM) — then the unit did
// not fail, it was interrupted, and goes back to pending without counting an
// attempt, for a retry or another worker.
func failedOrReleased(ctx context.Context, err error) state.Outcome {
	if ctx.Err() != nil {
		return state.Outcome{Status: state.Pending}
	}
	return state.Outcome{Status: state.Failed, Error: err.Error()}
}

// heartbeat extends the claim's lease every third of the lease until stopped. A
// transient error is retried on the next tick; a lost lease (another worker
// owns the unit now) cancels the returned context, so the work stops rather
// than run twice.
func (e *Engine) heartbeat(ctx context.Context, c state.Claim, lease time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go tick.Every(ctx, lease/3, func() bool {
		err := e.store.Heartbeat(ctx, c, e.leaseNow().Add(lease))
		if errors.Is(err, state.ErrLeaseLost) {
			e.logger().Warn("lost the lease while running: stopping the unit", "window", c.Unit.Window.String(), "fence", c.Fence)
			cancel()
			return false
		}
		if err != nil && ctx.Err() == nil {
			e.logger().Warn("heartbeat failed; retrying on the next tick", "window", c.Unit.Window.String(), "err", err)
		}
		return true
	})
	return ctx, cancel
}

// lease is how long a claim holds a unit without a heartbeat.
func (e *Engine) lease() time.Duration {
	if e.opts.Lease > 0 {
		return e.opts.Lease
	}
	return DefaultLease
}

// leaseClock is the wall clock, which leases always use: workers in other
// processes judge expiry by it, so an engine evaluating as of another time
// (--as-of, tests) must not hand out leases that are already expired, or
// never expire.
func leaseClock() time.Time { return time.Now().UTC() }

// leaseNow is the clock of claims, leases, heartbeats and retry times:
// e.LeaseClock when set (a test drives backoff with it), else the wall
// clock — never the engine's --as-of clock, which judges gates: a lease
// must expire in real time for another worker to take the unit over.
func (e *Engine) leaseNow() time.Time {
	if e.opts.LeaseClock != nil {
		return e.opts.LeaseClock().UTC()
	}
	return leaseClock()
}

// runClock is the clock of a run's own record — its end, each task
// attempt's start and end — started now at start, the engine's clock,
// and moving on with the wall clock from there. With the wall clock that
// is the wall clock; under a fixed clock (--as-of, the demo's past, tests)
// a run still takes the time it took, not 0s. The run's own start is
// start exactly, so runs under one fixed clock keep starting at the same
// instant and the store orders them by id as it did.
func (e *Engine) runClock() (start time.Time, clock func() time.Time) {
	start = e.now()
	if e.opts.Now == nil {
		return start, e.now
	}
	wall := time.Now()
	return start, func() time.Time { return start.Add(time.Since(wall)) }
}

func workerName(runID int64) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:run%d", host, os.Getpid(), runID)
}

// runArgs describes a run request for the audit log.
func runArgs(req RunRequest) map[string]string {
	args := map[string]string{"mode": req.Mode.String()}
	if len(req.Models) > 0 {
		args["models"] = strings.Join(req.Models, ",")
	}
	if req.Pipeline != "" {
		args["pipeline"] = req.Pipeline
	}
	if req.Window != nil {
		args["window"] = req.Window.String()
	}
	if req.Downstream {
		args["downstream"] = "true"
	}
	if req.Outdated {
		args["outdated"] = "true"
	}
	return args
}

// SkippedPending names the tasks of the run that a failure SKIPPED: they
// never run again in this run, so their held units wait for a new run of
// those models once the failure is fixed, which the CLI's summary spells
// out. A task skipped because nothing failed is not among them: running it
// would fire a FAILURE edge's alert for a failure that did not happen.
func (r *RunResult) SkippedPending() []string {
	var out []string
	for _, t := range r.Tasks {
		if !t.Waiting && t.Status == graph.StatusSkipped && t.SkippedByFailure {
			out = append(out, t.Model)
		}
	}
	return out
}
