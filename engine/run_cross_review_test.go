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
		close(h.release)
		<-xdone
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Tasks {
			t.Logf("%s %s %q", tr.Model, tr.Outcome(), tr.Reason)
		}
		if taskStatus(res, "y.copy") != "WAITING" {
			t.Errorf("x.load still running: y.copy is %s, want WAITING", taskStatus(res, "y.copy"))
		}
		if exec.count("y.alert") != 0 {
			t.Errorf("x.load still running: the FAILURE alert fired")
		}
	})
}

// ANY over one cross edge (lost) and one same-pipeline edge (lost).
const mixedLostSpec = `models:
  - name: x.load
    pipeline: x
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: y.first
    pipeline: y
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: y.last
    pipeline: y
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    run_condition: any
    after: [{task: x.load, on: success}, {task: y.first, on: success}]
    run: {command: ["true"]}
`

func TestLostEdgesOfBothKindsSkipTheTask(t *testing.T) {
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
		if got := taskStatus(res, "y.last"); got != "SKIPPED" {
			t.Errorf("y.last is %s, want SKIPPED: both of its edges are lost", got)
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
