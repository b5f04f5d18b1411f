package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// runTask runs one attempt of a task: it claims the task's pending units in
// the run window — for its idle workers, and ahead of them while units are
// short (holdings) — runs them on workers goroutines, and records their
// outcomes in batches (completer), until none is left.
func (e *Engine) runTask(ctx context.Context, runID int64, mode spec.StateMode, sc runScope, exec executor.Executor, workers int, wake *runWake, progress func(Progress), clock func() time.Time) (TaskResult, error) {
	t := &taskRun{e: e, ctx: ctx, runID: runID, mode: mode, sc: sc, exec: exec, progress: progress, clock: clock,
		res: TaskResult{Model: sc.model.Name, TaskID: sc.taskID, Pipeline: sc.pipeline}, errSeen: map[string]bool{}}
	if err := t.start(); err != nil {
		t.res.Status = graph.StatusFailed
		return t.res, err
	}
	workers = max(workers, 1)
	t.worker = workerName(runID)
	t.cache = &gate.RegistrationCache{}
	t.gates = e.taskGates(sc)
	t.retries = newRetries()
	t.others = e.newOtherWorkers(wake)
	defer t.others.stop()
	t.held = newHoldings(workers, !appliesItself(exec, sc.model))
	t.held.slots = sc.slots
	t.comp = e.startCompleter(ctx)
	q := startUnitQueue(workers, t.held.limit(), t.runHeld)
	t.claimLoop(q)
	// Every unit claimed is run (or given back) and its outcome recorded
	// before the task finishes: no worker or completer goroutine touches
	// the task after this.
	q.close()
	t.comp.close()
	return t.finish()
}

// taskRun is one attempt of a task in flight; it lives for one call of
// runTask, whose context it keeps. Three kinds of goroutine share it: the
// claim loop (claimLoop, on runTask's goroutine), the queue's workers
// (runHeld), and the completer, which calls record once an outcome is in
// the store (a worker calls it for a unit its executor recorded itself).
// What they share is guarded by mu; finish runs after the workers and the
// completer have ended, and owns it alone.
type taskRun struct {
	e        *Engine
	ctx      context.Context
	runID    int64
	mode     spec.StateMode
	sc       runScope
	exec     executor.Executor
	progress func(Progress)
	// clock times the attempt in the run log (Engine.runClock).
	clock func() time.Time
	// worker names the claims' holder in the store.
	worker string
	// started and attempt identify the attempt in the run log.
	started time.Time
	attempt int

	// gates judges the task's units: their gated upstreams and the
	// after: edges judged per window (runScope.perWindow).
	gates   *gate.Reader
	cache   *gate.RegistrationCache
	others  *otherWorkers
	retries *retries
	held    *holdings
	comp    *completer

	mu sync.Mutex
	// res counts the recorded outcomes of the units this task ran.
	res TaskResult
	// firstErr fails the task and stops the claim loop; the rest are
	// dropped.
	firstErr error
	// errSeen keeps res.Errors distinct.
	errSeen map[string]bool
	// rows sums the units' rows written; haveRows is false until a unit
	// reported any.
	rows     int64
	haveRows bool
}

// start records the attempt's start in the run log.
func (t *taskRun) start() error {
	t.started = t.clock()
	return t.e.retryStore(t.ctx, "start task", func() (err error) {
		t.attempt, err = t.e.store.StartTask(t.ctx, t.runID, t.sc.taskID, t.started)
		return err
	})
}

// claimLoop claims the task's units and queues them for the workers until
// none is left, the task fails, or its context ends.
func (t *taskRun) claimLoop(q *unitQueue) {
	for !t.stopped() {
		room := t.held.room()
		if room == 0 {
			<-t.held.freed
			continue
		}
		room, given := t.held.slots.take(room)
		if room == 0 {
			// The run's tasks hold as many units as a process runs at
			// once: wait for one to be recorded, this task's or another's.
			select {
			case <-given:
			case <-t.held.freed:
			case <-t.ctx.Done():
			}
			continue
		}
		lease := t.held.claimLease(t.e.lease())
		claims, err := t.claim(room, lease)
		t.held.slots.give(room - len(claims))
		if err != nil {
			t.fail(fmt.Errorf("claiming units of %s: %w", t.sc.model.Name, err))
			return
		}
		if len(claims) == 0 {
			if t.held.count() > 0 {
				// A running unit may free overlapping ones of a flexible
				// model: wait for one to be recorded, then claim again.
				<-t.held.freed
				continue
			}
			// Nothing claimable is not the same as nothing left: a unit
			// held by another worker (a `bollhav worker`, another run) is
			// still outstanding. Wait for it to finish, or for its lease
			// to expire and return it to pending, then claim again.
			left, err := t.e.outstanding(t.ctx, t.sc)
			if err != nil {
				t.fail(err)
				return
			}
			if left == 0 || !t.others.wait(t.ctx) {
				return
			}
			continue
		}
		t.held.took(len(claims))
		for _, c := range claims {
			t.e.hold(t.ctx, q, c, t.sc.model, lease)
		}
	}
}

// claim claims up to limit pending units of the task's scope.
func (t *taskRun) claim(limit int, lease time.Duration) ([]state.Claim, error) {
	var claims []state.Claim
	err := t.e.retryStore(t.ctx, "claim", func() (err error) {
		claims, err = t.e.store.Claim(t.ctx, state.ClaimRequest{Env: t.e.opts.Env.Suffix, Models: []string{t.sc.model.Name},
			Window: t.sc.window, Worker: t.worker, Lease: lease, Limit: limit, RunID: t.runID, Now: t.e.leaseNow()})
		return err
	})
	return claims, err
}

// runHeld is a queue worker's turn with one held unit: it gates and runs
// the unit and hands the verdict to the completer, which calls record once
// the outcome is in the store.
func (t *taskRun) runHeld(h *heldUnit) {
	if t.stopped() {
		// Claimed ahead and never started: the run is cancelled or
		// failing, so the unit goes back to pending, not counting an
		// attempt, for a retry or another worker.
		t.comp.record(finished{claim: h.claim, out: state.Outcome{Status: state.Pending, At: t.e.now()},
			then: func(error) { h.stop(); t.held.release() }})
		return
	}
	begun := time.Now()
	v := t.e.runUnit(t.ctx, h.ctx, t.gates, t.cache, t.sc.inFlight.claims, t.runID, t.mode, t.sc.model, h.claim, t.exec)
	t.held.observe(time.Since(begun))
	t.e.settle(t.comp, h, t.retries.apply(t.sc.model, h.claim, v, t.e.leaseNow()), t.record)
}

// record adds a unit's outcome to the task's result once it is in the store
// (err nil) and reports the progress, or fails the task with err. Either
// way the unit is no longer held.
func (t *taskRun) record(h *heldUnit, v unitVerdict, err error) {
	defer t.held.release()
	h.stop()
	if v.out.Status != state.Pending {
		// A retry or a release is not this task's last word on the unit:
		// another worker may still finish it.
		t.others.ran(h.claim.Unit.ID)
	}
	if err != nil {
		t.fail(err)
		return
	}
	t.mu.Lock()
	res := &t.res
	switch v.out.Status {
	case state.Applied:
		res.Applied++
	case state.Blocked:
		res.Blocked++
	case state.Failed:
		res.Failed++
		msg := v.out.Error
		if v.hard {
			res.HardErrors++
			msg = hardErrorPrefix + msg
		}
		if !t.errSeen[msg] {
			t.errSeen[msg] = true
			res.Errors = append(res.Errors, msg)
		}
	}
	if v.out.RowsWritten != nil {
		t.rows += *v.out.RowsWritten
		t.haveRows = true
	}
	p := t.snapshot(false)
	t.mu.Unlock()
	if t.progress != nil {
		t.progress(p)
	}
}

// fail fails the task with err, unless it has failed already.
func (t *taskRun) fail(err error) {
	t.mu.Lock()
	if t.firstErr == nil {
		t.firstErr = err
	}
	t.mu.Unlock()
}

// stopped reports whether the task should claim and start no more units.
func (t *taskRun) stopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.firstErr != nil || t.ctx.Err() != nil
}

// snapshot is the task's progress, taken under mu (or by finish). progress is
// called outside mu, once the unit's outcome is in the store, on a worker's
// or the completer's goroutine; both have ended before the final report, so
// no report arrives after it.
func (t *taskRun) snapshot(final bool) Progress {
	r := t.res
	return Progress{RunID: t.runID, Model: t.sc.model.Name, Applied: r.Applied, Blocked: r.Blocked, Failed: r.Failed,
		Total: r.Applied + r.Blocked + r.Failed, Done: final, Status: r.Status}
}

// finish settles the task's status, records it in the run log and sends
// the final progress report. It runs after the workers and the completer
// have ended.
func (t *taskRun) finish() (TaskResult, error) {
	ctx, res := t.ctx, &t.res
	if t.haveRows {
		res.RowsWritten = &t.rows
	}
	if t.firstErr == nil && ctx.Err() == nil {
		// Units other workers ran while this task waited count toward its
		// outcome: one of them failing fails the task.
		if err := t.e.countOthers(ctx, t.runID, t.sc, t.others, res); err != nil {
			t.firstErr = err
		}
	}
	res.Status = graph.StatusSuccess
	if res.Failed > 0 || t.firstErr != nil || ctx.Err() != nil {
		res.Status = graph.StatusFailed
	}
	sort.SliceStable(res.Errors, func(i, j int) bool {
		return strings.HasPrefix(res.Errors[i], hardErrorPrefix) && !strings.HasPrefix(res.Errors[j], hardErrorPrefix)
	})
	finished := t.clock()
	entry := state.TaskRunEntry{RunID: t.runID, TaskID: t.sc.taskID, Attempt: t.attempt, Status: res.Status.String(),
		StartedAt: t.started, FinishedAt: &finished, RowsWritten: res.RowsWritten}
	switch {
	case ctx.Err() != nil && res.Failed == 0 && (t.firstErr == nil || errors.Is(t.firstErr, context.Canceled) || errors.Is(t.firstErr, context.DeadlineExceeded)):
		// FAILED only because the run was cancelled: the log says so, and
		// the cross-pipeline gate does not read it as the work failing.
		entry.Error = gate.InterruptedTask
	case t.firstErr != nil:
		entry.Error = t.firstErr.Error()
	case len(res.Errors) > 0:
		entry.Error = fmt.Sprintf("%d unit(s) failed: %s", res.Failed, res.Errors[0])
	}
	if err := t.e.retryStore(context.WithoutCancel(ctx), "finish task", func() error {
		return t.e.store.FinishTask(context.WithoutCancel(ctx), entry)
	}); err != nil && t.firstErr == nil {
		t.firstErr = err
	}
	if t.progress != nil {
		t.progress(t.snapshot(true))
	}
	return *res, t.firstErr
}
