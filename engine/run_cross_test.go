package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
)

// crossEdgeSpec: pipeline y alerts on pipeline x's load failing and copies it
// when it succeeded, both through explicit after: edges across pipelines.
const crossEdgeSpec = `models:
  - {name: x.load, pipeline: x, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: y.alert, pipeline: y, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: x.load, on: failure}], run: {command: ["true"]}}
  - {name: y.copy, pipeline: y, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: x.load, on: success}], run: {command: ["true"]}}
`

// TestCrossPipelineEdgesAreJudged: an explicit edge onto another pipeline's
// task is judged by that task's outcome in its newest run over the window —
// the FAILURE alert fires only after the load failed, the SUCCESS copy only
// after it succeeded. Before the load ran at all the alert's task waits
// (a FAILURE edge is judged once per task) and the copy's unit is held
// with the reason (a SUCCESS edge is judged per window); both say why.
func TestCrossPipelineEdgesAreJudged(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossEdgeSpec)
		runY := func(t *testing.T) (*RunResult, *fakeExec) {
			t.Helper()
			exec := &fakeExec{}
			res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: firstDay()}, exec, nil)
			if err != nil {
				t.Fatal(err)
			}
			return res, exec
		}
		reason := func(res *RunResult, model string) string {
			for _, tr := range res.Tasks {
				if tr.Model == model {
					return tr.Reason
				}
			}
			return ""
		}

		res, exec := runY(t)
		if taskStatus(res, "y.alert") != "WAITING" || !strings.Contains(reason(res, "y.alert"), "x.load (after FAILURE): another pipeline's task, has not run over") {
			t.Errorf("before x ran: y.alert %s (%q), want WAITING saying x.load has not run", taskStatus(res, "y.alert"), reason(res, "y.alert"))
		}
		wantHeld := "x.load (after SUCCESS): has not run over " + firstDay().String()
		if u := unit(t, s, "y.copy", *firstDay()); u.Status != state.Blocked || u.BlockedReason != wantHeld {
			t.Errorf("before x ran: y.copy's day is %s (%q), want blocked with %q", u.Status, u.BlockedReason, wantHeld)
		}
		if u := unit(t, s, "y.alert", *firstDay()); u.Status != state.Blocked || !strings.Contains(u.BlockedReason, "has not run over") {
			t.Errorf("before x ran: y.alert's day is %s (%q), want held with the task's reason", u.Status, u.BlockedReason)
		}
		if exec.count("y.alert")+exec.count("y.copy") != 0 {
			t.Errorf("before x ran, y ran %v", exec.calls)
		}

		if _, err := e.Run(t.Context(), RunRequest{Pipeline: "x", Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		res, exec = runY(t)
		if taskStatus(res, "y.copy") != "SUCCESS" || exec.count("y.copy") != 1 {
			t.Errorf("after x succeeded: copy %s, ran %d times; want SUCCESS once", taskStatus(res, "y.copy"), exec.count("y.copy"))
		}
		if taskStatus(res, "y.alert") != "SKIPPED" || exec.count("y.alert") != 0 || !strings.Contains(reason(res, "y.alert"), "x.load (after FAILURE): ended SUCCESS in run") {
			t.Errorf("after x succeeded: alert %s (%q), ran %d times; want SKIPPED, never run", taskStatus(res, "y.alert"), reason(res, "y.alert"), exec.count("y.alert"))
		}
		if res.Failed() {
			t.Error("an alert that did not fire is no failure of the run")
		}

		failing := &fakeExec{fail: func(model string, _ *state.Window) error { return errors.New("exit status 1: source down") }}
		if _, err := e.Run(t.Context(), RunRequest{Pipeline: "x", Window: firstDay()}, failing, nil); err != nil {
			t.Fatal(err)
		}
		res, exec = runY(t)
		if taskStatus(res, "y.alert") != "SUCCESS" || exec.count("y.alert") != 1 {
			t.Errorf("after x failed: alert %s, ran %d times; want it to fire once", taskStatus(res, "y.alert"), exec.count("y.alert"))
		}
		if exec.count("y.copy") != 0 {
			t.Errorf("after x failed: copy ran %d times; want it held", exec.count("y.copy"))
		}
		if u := unit(t, s, "y.copy", *firstDay()); u.Status != state.Blocked || !strings.Contains(u.BlockedReason, "x.load (after SUCCESS): ended FAILED in run") {
			t.Errorf("after x failed: y.copy's day is %s (%q), want held: x.load ended FAILED", u.Status, u.BlockedReason)
		}
	})
}

// hangingExec starts a unit, says so, and waits for its context to end;
// a unit of the window fail (when set) fails at once instead.
type hangingExec struct {
	started chan struct{}
	fail    *state.Window
}

func (h *hangingExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	if h.fail != nil && u.Window != nil && u.Window.Equal(*h.fail) {
		return executor.Result{}, errors.New("exit status 1: source down")
	}
	select {
	case h.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return executor.Result{}, ctx.Err()
}

// cancelRun runs req of pipeline x with hang, and once hang has started a
// unit and then waited (when given) returned, cancels it; the run must
// record x.load FAILED.
func cancelRun(t *testing.T, e *Engine, req RunRequest, hang *hangingExec, then func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan *RunResult, 1)
	go func() {
		res, _ := e.Run(ctx, req, hang, nil)
		done <- res
	}()
	<-hang.started
	if then != nil {
		then()
	}
	cancel()
	if res := <-done; res == nil || taskStatus(res, "x.load") != "FAILED" {
		t.Fatalf("the cancelled run: %+v, want x.load FAILED", res)
	}
}

// TestCancelledRunIsNoFailureForOtherPipelines: a run of x cancelled
// mid-load (Ctrl-C, SIGTERM, a UI quit) records x.load FAILED, but that
// says nothing about the load: y's FAILURE alert must not fire on it, and
// y is judged by x.load's newest run that ended on its own.
func TestCancelledRunIsNoFailureForOtherPipelines(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossEdgeSpec)
		if _, err := e.Run(t.Context(), RunRequest{Pipeline: "x", Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		cancelRun(t, e, RunRequest{Pipeline: "x", Window: firstDay(), Mode: "bulldozer"}, &hangingExec{started: make(chan struct{}, 1)}, nil)
		runs, err := s.Runs(t.Context(), "", 1)
		if err != nil || len(runs) != 1 || runs[0].Status != state.RunCancelled {
			t.Fatalf("newest run %+v %v, want cancelled", runs, err)
		}

		exec := &fakeExec{}
		res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: firstDay()}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if taskStatus(res, "y.alert") != "SKIPPED" || exec.count("y.alert") != 0 {
			t.Errorf("alert %s, ran %d times: a cancelled load fired the failure alert", taskStatus(res, "y.alert"), exec.count("y.alert"))
		}
		if taskStatus(res, "y.copy") != "SUCCESS" || exec.count("y.copy") != 1 {
			t.Errorf("copy %s, ran %d times; want it judged by the load that succeeded", taskStatus(res, "y.copy"), exec.count("y.copy"))
		}
	})
}

// TestFailureBeforeACancelStillCounts: a load whose unit really failed
// before the run was cancelled did fail: the FAILURE alert fires on it.
func TestFailureBeforeACancelStillCounts(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossEdgeSpec)
		// The first day's unit fails at once, the second is held.
		two := days(0, 2)
		hang := &hangingExec{started: make(chan struct{}, 1), fail: firstDay()}
		cancelRun(t, e, RunRequest{Pipeline: "x", Window: &two}, hang, func() {
			// The failed day is recorded before the cancel.
			deadline := time.Now().Add(10 * time.Second)
			for unit(t, s, "x.load", days(0, 1)).Status != state.Failed {
				if time.Now().After(deadline) {
					t.Fatal("the first day never failed")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
		y := &fakeExec{}
		res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: firstDay()}, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		if taskStatus(res, "y.alert") != "SUCCESS" || y.count("y.alert") != 1 {
			t.Errorf("alert %s, ran %d times; want it to fire on the failure before the cancel", taskStatus(res, "y.alert"), y.count("y.alert"))
		}
	})
}

type holdExec struct {
	started chan struct{}
	release chan struct{}
}

func (h *holdExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	select {
	case h.started <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
	return executor.Result{}, nil
}

// An upstream run still in progress is not a FAILED upstream.
func TestCrossPipelineUpstreamStillRunningHasNoOutcome(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossEdgeSpec)
		h := &holdExec{started: make(chan struct{}, 1), release: make(chan struct{})}
		xdone := make(chan error, 1)
		go func() {
			_, err := e.Run(context.Background(), RunRequest{Pipeline: "x", Window: firstDay()}, h, nil)
			xdone <- err
		}()
		select {
		case <-h.started:
		case <-time.After(20 * time.Second):
			t.Fatal("x never started")
		}
		exec := &fakeExec{}
		res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: firstDay()}, exec, nil)
		held := unit(t, s, "y.copy", *firstDay())
		close(h.release)
		xerr := <-xdone
		if err != nil || xerr != nil {
			t.Fatal(err, xerr)
		}
		for _, tr := range res.Tasks {
			t.Logf("%s %s %q", tr.Model, tr.Outcome(), tr.Reason)
		}
		if exec.count("y.copy") != 0 {
			t.Errorf("x.load still running: y.copy ran")
		}
		if held.Status != state.Blocked || !strings.Contains(held.BlockedReason, "x.load (after SUCCESS): is still running over") {
			t.Errorf("x.load still running: y.copy's day is %s (%q), want held: x.load is still running", held.Status, held.BlockedReason)
		}
		if exec.count("y.alert") != 0 {
			t.Errorf("x.load still running: the FAILURE alert fired")
		}
		// Once x's run has ended, the held day is released: its edge holds
		// now, and the next run of y applies it.
		if why, err := e.Why(t.Context(), "y.copy", firstDay().Since); err != nil || !why.Satisfied {
			t.Errorf("after x.load succeeded, why y.copy's day: satisfied %v (%v), want released", why != nil && why.Satisfied, err)
		}
	})
}

// ANY over one cross edge (lost) and one same-pipeline edge (lost).
const mixedLostSpec = `models:
  - {name: x.load, pipeline: x, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: y.first, pipeline: y, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: y.last, pipeline: y, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run_condition: any, after: [{task: x.load, on: success}, {task: y.first, on: success}], run: {command: ["true"]}}
`

func TestLostEdgesOfBothKindsHoldTheUnit(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, mixedLostSpec)
		failing := &fakeExec{fail: func(string, *state.Window) error { return errors.New("boom") }}
		if _, err := e.Run(t.Context(), RunRequest{Pipeline: "x", Window: firstDay()}, failing, nil); err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: firstDay()}, failing, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Tasks {
			t.Logf("%s %s %q", tr.Model, tr.Outcome(), tr.Reason)
		}
		// The cross edge is judged per window, so the task starts; its
		// unit is held, naming both lost edges.
		if failing.count("y.last") != 0 {
			t.Error("y.last ran: both of its edges are lost")
		}
		u := unit(t, s, "y.last", *firstDay())
		if u.Status != state.Blocked || !strings.Contains(u.BlockedReason, "x.load (after SUCCESS): ended FAILED") ||
			!strings.Contains(u.BlockedReason, "y.first (after SUCCESS): ended FAILED") {
			t.Errorf("y.last's day is %s (%q), want held naming x.load and y.first", u.Status, u.BlockedReason)
		}
	})
}

func TestSkippedTaskIsRecordedOnce(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, strings.Replace(mixedLostSpec, "run_condition: any", "run_condition: all", 1))
		failing := &fakeExec{fail: func(string, *state.Window) error { return errors.New("boom") }}
		if _, err := e.Run(t.Context(), RunRequest{Pipeline: "x", Window: firstDay()}, failing, nil); err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: firstDay()}, failing, nil)
		if err != nil {
			t.Fatal(err)
		}
		log, _ := s.TaskLog(t.Context(), res.RunID)
		for _, l := range log {
			t.Logf("log task %d attempt %d %s", l.TaskID, l.Attempt, l.Status)
		}
		if _, err := e.Retry(t.Context(), res.RunID, failing, 1, nil); err != nil {
			t.Fatal(err)
		}
		log, _ = s.TaskLog(t.Context(), res.RunID)
		for _, l := range log {
			t.Logf("after retry: log task %d attempt %d %s", l.TaskID, l.Attempt, l.Status)
		}
	})
}
