package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// crossEdgeSpec: pipeline y alerts on pipeline x's load failing and copies it
// when it succeeded, both through explicit after: edges across pipelines.
const crossEdgeSpec = `models:
  - name: x.load
    pipeline: x
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: y.alert
    pipeline: y
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    after: [{task: x.load, on: failure}]
    run: {command: ["true"]}
  - name: y.copy
    pipeline: y
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    after: [{task: x.load, on: success}]
    run: {command: ["true"]}
`

// TestCrossPipelineEdgesAreJudged: an explicit edge onto another pipeline's
// task is judged by that task's outcome in its newest run over the window —
// the FAILURE alert fires only after the load failed, the SUCCESS copy only
// after it succeeded, and before the load ran at all both wait, saying why.
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
		for _, m := range []string{"y.alert", "y.copy"} {
			if taskStatus(res, m) != "WAITING" || !strings.Contains(reason(res, m), "x.load (another pipeline) has not run over") {
				t.Errorf("before x ran: %s %s (%q), want WAITING saying x.load has not run", m, taskStatus(res, m), reason(res, m))
			}
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
		if taskStatus(res, "y.alert") != "SKIPPED" || exec.count("y.alert") != 0 || !strings.Contains(reason(res, "y.alert"), "x.load ended SUCCESS") {
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
		if taskStatus(res, "y.copy") != "SKIPPED" || exec.count("y.copy") != 0 {
			t.Errorf("after x failed: copy %s, ran %d times; want SKIPPED", taskStatus(res, "y.copy"), exec.count("y.copy"))
		}
	})
}
