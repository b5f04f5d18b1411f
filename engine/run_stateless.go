package engine

import (
	"context"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// runStateless runs one attempt of the task of a model that keeps no state
// (state: false): its work once, with the run's window (none for a
// timeless model), and no unit claimed or recorded. Its outcome is in the
// run log alone, where the after: edges onto it are judged. There is
// nothing to gate: such a model has no gated upstream (a definition-time
// error), and its after: edges were settled before it started.
func (e *Engine) runStateless(ctx context.Context, runID int64, mode spec.StateMode, sc runScope, exec executor.Executor,
	progress func(Progress), clock func() time.Time) (TaskResult, error) {
	m := sc.model
	res := TaskResult{Model: m.Name, TaskID: sc.taskID, Pipeline: sc.pipeline, Status: graph.StatusFailed}
	started := clock()
	var attempt int
	if err := e.retryStore(ctx, "start task", func() (err error) {
		attempt, err = e.store.StartTask(ctx, runID, sc.taskID, started)
		return err
	}); err != nil {
		return res, err
	}
	var w *state.Window
	if m.Temporality == spec.Temporal && !sc.window.IsZero() {
		w = &sc.window
	}
	u := executor.UnitRun{Model: m, Env: e.opts.Env, Window: w, RunID: runID, StateMode: mode, SpecDir: e.opts.SpecDir, Fingerprint: spec.Fingerprint(m)}
	r, xerr := exec.Execute(ctx, u)
	res.RowsWritten = r.RowsWritten
	finished := clock()
	entry := state.TaskRunEntry{RunID: runID, TaskID: sc.taskID, Attempt: attempt, StartedAt: started, FinishedAt: &finished, RowsWritten: r.RowsWritten}
	switch {
	case xerr == nil:
		res.Status = graph.StatusSuccess
	case ctx.Err() != nil:
		// Stopped by the run's cancel, not failed by its work.
		entry.Error = gate.InterruptedTask
	default:
		res.Errors = []string{xerr.Error()}
		entry.Error = xerr.Error()
	}
	entry.Status = res.Status.String()
	err := e.retryStore(context.WithoutCancel(ctx), "finish task", func() error {
		return e.store.FinishTask(context.WithoutCancel(ctx), entry)
	})
	if progress != nil {
		progress(Progress{RunID: runID, Model: m.Name, Done: true, Status: res.Status})
	}
	return res, err
}
