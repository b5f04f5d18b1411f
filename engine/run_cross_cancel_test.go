package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
)

// hangingExec starts a unit, says so, and waits for its context to end.
type hangingExec struct{ started chan struct{} }

func (h *hangingExec) Execute(ctx context.Context, _ executor.UnitRun) (executor.Result, error) {
	select {
	case h.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return executor.Result{}, ctx.Err()
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
		ctx, cancel := context.WithCancel(t.Context())
		hang := &hangingExec{started: make(chan struct{}, 1)}
		done := make(chan *RunResult, 1)
		go func() {
			res, _ := e.Run(ctx, RunRequest{Pipeline: "x", Window: firstDay(), Mode: "bulldozer"}, hang, nil)
			done <- res
		}()
		<-hang.started
		cancel()
		if res := <-done; res == nil || taskStatus(res, "x.load") != "FAILED" {
			t.Fatalf("the cancelled run: %+v, want x.load FAILED", res)
		}
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

// failThenHang fails the first day's unit at once and holds the second
// until its context ends.
type failThenHang struct {
	day0    state.Window
	started chan struct{}
}

func (f *failThenHang) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	if u.Window != nil && u.Window.Equal(f.day0) {
		return executor.Result{}, errors.New("exit status 1: source down")
	}
	select {
	case f.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return executor.Result{}, ctx.Err()
}

// TestFailureBeforeACancelStillCounts: a load whose unit really failed
// before the run was cancelled did fail: the FAILURE alert fires on it.
func TestFailureBeforeACancelStillCounts(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossEdgeSpec)
		ctx, cancel := context.WithCancel(t.Context())
		exec := &failThenHang{day0: days(0, 1), started: make(chan struct{}, 1)}
		two := days(0, 2)
		done := make(chan *RunResult, 1)
		go func() {
			res, _ := e.Run(ctx, RunRequest{Pipeline: "x", Window: &two}, exec, nil)
			done <- res
		}()
		<-exec.started
		// The failed day is recorded before the cancel.
		deadline := time.Now().Add(10 * time.Second)
		for unit(t, s, "x.load", days(0, 1)).Status != state.Failed {
			if time.Now().After(deadline) {
				t.Fatal("the first day never failed")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if res := <-done; res == nil || taskStatus(res, "x.load") != "FAILED" {
			t.Fatalf("the cancelled run: %+v, want x.load FAILED", res)
		}
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
