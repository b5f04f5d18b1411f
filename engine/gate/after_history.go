package gate

import (
	"context"
	"fmt"
	"sync"

	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// RunsScanned bounds how far back an after: edge looks for its upstream's
// run: the newest runs of the environment, newest first.
const RunsScanned = 200

// InterruptedTask is the run log's error of a task recorded FAILED only
// because its run was cancelled (Ctrl-C, SIGTERM, a UI quit) before it
// ended, none of its units having failed. It says nothing about the work,
// so an after: edge passes over it to an older run.
const InterruptedTask = "interrupted: the run was cancelled before the task ended"

// UpstreamOutcome is an after: edge's upstream task's latest attempt in the
// run that decides the edge for a window, and that run.
type UpstreamOutcome struct {
	graph.TaskRunState
	RunID int64
	// Running, with found false, says the newest run over the window is
	// still running the task: its outcome is not known yet.
	Running bool
}

// RunHistory reads, once, what judging after: edges needs: the task ids
// and pipelines of the environment's models and its newest runs, and each
// run's task log when first asked. It is safe for concurrent use; a zero
// RunHistory reads nothing until its first question.
type RunHistory struct {
	mu     sync.Mutex
	loaded bool
	ids    map[string]int
	pipes  map[string]string
	runs   []state.Run
	logs   map[int64][]state.TaskRunEntry
}

func (h *RunHistory) load(ctx context.Context, store state.Store, env string) error {
	if h.loaded {
		return nil
	}
	recs, err := store.Models(ctx, env)
	if err != nil {
		return fmt.Errorf("after: edges: reading the registry: %w", err)
	}
	h.ids, h.pipes = make(map[string]int, len(recs)), make(map[string]string, len(recs))
	for _, r := range recs {
		h.ids[r.Name], h.pipes[r.Name] = r.TaskID, r.Pipeline
	}
	if h.runs, err = store.Runs(ctx, env, RunsScanned); err != nil {
		return fmt.Errorf("after: edges: reading the runs: %w", err)
	}
	if h.logs == nil {
		h.logs = map[int64][]state.TaskRunEntry{}
	}
	for _, r := range h.runs {
		if r.Status == state.RunRunning {
			delete(h.logs, r.ID) // still being written
		}
	}
	h.loaded = true
	return nil
}

// Forget makes the next question read the registry and the runs again.
// The logs of runs that had ended are kept: a run's log changes only
// while it runs (a retry runs it again, and is read again then).
func (h *RunHistory) Forget() {
	h.mu.Lock()
	h.loaded = false
	h.mu.Unlock()
}

// Pipeline is the registered pipeline of model name; "" when it is not
// registered.
func (h *RunHistory) Pipeline(ctx context.Context, store state.Store, env, name string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.load(ctx, store, env); err != nil {
		return "", err
	}
	return h.pipes[name], nil
}

// Outcome is the latest attempt of model task's task in the newest run of
// the environment, other than skipRun, that ran it over window (a run
// without a window covers every window; a zero window takes the newest
// run), passing over a task a cancel interrupted. found is false when no
// such run has a terminal attempt, or the newest one is still running it
// (Running says so).
func (h *RunHistory) Outcome(ctx context.Context, store state.Store, env, task string, window state.Window, skipRun int64) (out UpstreamOutcome, found bool, err error) {
	err = h.walk(ctx, store, env, task, skipRun, func(r RunOutcome) bool {
		if !r.Covers(window) {
			return false
		}
		out, found = r.UpstreamOutcome, !r.Running
		return true
	})
	return out, found, err
}

// RunOutcome is an upstream task's outcome in one run that ran it, with
// that run's window.
type RunOutcome struct {
	UpstreamOutcome
	Window state.Window
}

// Covers reports whether the run's window covers w: a run without a
// window covers every window, and a zero w takes any run.
func (r RunOutcome) Covers(w state.Window) bool {
	return w.IsZero() || r.Window.IsZero() || r.Window.Covers(w)
}

// Outcomes are model task's outcomes in the environment's newest runs,
// newest first: each run's latest attempt of the task that ended (or is
// running), passing over attempts a cancel interrupted. What judges an
// after: edge for a window is the first that covers it (Outcome).
func (h *RunHistory) Outcomes(ctx context.Context, store state.Store, env, task string) ([]RunOutcome, error) {
	var out []RunOutcome
	err := h.walk(ctx, store, env, task, 0, func(r RunOutcome) bool {
		out = append(out, r)
		return false
	})
	return out, err
}

// walk calls fn with task's outcome in each run that has one, newest
// first, reading each run's log when first needed, until fn returns true.
func (h *RunHistory) walk(ctx context.Context, store state.Store, env, task string, skipRun int64, fn func(RunOutcome) bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.load(ctx, store, env); err != nil {
		return err
	}
	taskID := h.ids[task]
	if taskID == 0 {
		return nil
	}
	for _, r := range h.runs {
		if r.ID == skipRun {
			continue
		}
		log, ok := h.logs[r.ID]
		if !ok {
			var err error
			if log, err = store.TaskLog(ctx, r.ID); err != nil {
				return fmt.Errorf("after: edges: reading run %d: %w", r.ID, err)
			}
			h.logs[r.ID] = log
		}
		latest, ok := LatestEntry(log, taskID)
		if !ok {
			continue
		}
		o := RunOutcome{Window: r.Window, UpstreamOutcome: UpstreamOutcome{RunID: r.ID}}
		st, ok := ParseTaskStatus(latest.Status)
		switch {
		case r.Status == state.RunRunning && st == graph.StatusInProgress:
			o.Running = true
		case !ok || !st.Terminal():
			continue
		case st == graph.StatusFailed && latest.Error == InterruptedTask:
			// A cancelled run says nothing about the work: judge by an
			// older run. A task whose units failed before the cancel did
			// fail, and counts.
			continue
		default:
			o.TaskRunState = graph.TaskRunState{Status: &st, RowsWritten: latest.RowsWritten, TargetCount: latest.TargetCount}
		}
		if fn(o) {
			return nil
		}
	}
	return nil
}

// LatestEntry is task taskID's latest attempt in log; false when it has
// none.
func LatestEntry(log []state.TaskRunEntry, taskID int) (state.TaskRunEntry, bool) {
	var out state.TaskRunEntry
	latest := -1
	for _, e := range log {
		if e.TaskID == taskID && e.Attempt >= latest {
			latest, out = e.Attempt, e
		}
	}
	return out, latest >= 0
}

// RunStateFromLog is each task's latest attempt, as the task graph's
// RunState. An attempt left IN_PROGRESS by a crashed process did not
// finish: it reads FAILED, so it may run again.
func RunStateFromLog(log []state.TaskRunEntry) graph.RunState {
	rs := graph.RunState{}
	latest := map[int]int{}
	for _, entry := range log {
		if entry.Attempt < latest[entry.TaskID] {
			continue
		}
		latest[entry.TaskID] = entry.Attempt
		st, ok := ParseTaskStatus(entry.Status)
		if !ok || st == graph.StatusInProgress {
			st = graph.StatusFailed
		}
		rs[entry.TaskID] = graph.TaskRunState{Status: &st, RowsWritten: entry.RowsWritten, TargetCount: entry.TargetCount}
	}
	return rs
}

// ParseTaskStatus reads a run log status.
func ParseTaskStatus(s string) (graph.TaskStatus, bool) {
	for _, st := range []graph.TaskStatus{graph.StatusSuccess, graph.StatusFailed, graph.StatusSkipped, graph.StatusInProgress} {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}
