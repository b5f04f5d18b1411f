package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// outsideEdge is a task's edge onto a task that is not in the run.
type outsideEdge struct {
	dependsOn string
	typ       graph.DependencyType
	// implicit marks the edge of a gated upstream: the contract gate
	// settles it per unit, so the task graph counts it as satisfied.
	implicit bool
	// cross marks an edge onto another pipeline's task.
	cross bool
}

// crossRunsScanned bounds how far back the cross-pipeline gate looks for an
// upstream's run: the newest runs of the environment, newest first.
const crossRunsScanned = 200

// crossVerdicts are the cross-pipeline gate's answers for one run.
type crossVerdicts struct {
	// satisfied is each judged task's count of outside edges that hold,
	// as graph.Ready takes it.
	satisfied map[int]int
	// lost counts, per task, the edges whose upstream's outcome is settled
	// and does not satisfy them: they never will in this run.
	lost map[int]int
	// reasons says what each judged task waits for or lost.
	reasons map[int]string
}

// doomed returns the never-run tasks that lost so many cross-pipeline
// edges that they can never reach their required count in this run: the
// caller records them SKIPPED, as it does the graph's unsatisfiable tasks.
// The graph itself counts every cross-pipeline edge as still possible; the
// engine knows better once it has read the upstream's outcome.
func (c crossVerdicts) doomed(g *graph.DependencyGraph, rs graph.RunState) []int {
	var out []int
	for id, lost := range c.lost {
		for _, e := range g.DependenciesOf(id) {
			// Same-pipeline edges already lost count too (failures are
			// final within a run).
			if up := rs[e.DependsOnTaskID]; up.Status != nil && up.Status.Terminal() && !graph.Satisfies(e.Type, up) {
				lost++
			}
		}
		if rs[id].Status == nil && g.TotalEdgeCount(id)-lost < g.RequiredEdgeCount(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// crossSatisfied is the cross-pipeline gate: for every task with an
// explicit after: edge onto another pipeline's task outside this run, how
// many of its outside edges hold, as graph.Ready takes it. Such an edge is
// judged by the upstream task's outcome in the newest other run of the
// environment that ran it over the window (a run without a window covers
// every window; a task without a window takes the upstream's newest run):
// the outcome that run recorded is the one the edge type is checked
// against. An upstream that has no such run holds nothing back from being
// settled, but cannot satisfy the edge either, so the task waits, with the
// reason in waits. Outside edges that are not explicit cross-pipeline ones
// — gated upstreams, settled by the contract gate per unit, and edges onto
// tasks of the same pipeline that this run leaves out — count as satisfied,
// as before. Tasks with no explicit cross-pipeline edge are left out of the
// map, which Ready reads as "not evaluated".
func (e *Engine) crossSatisfied(ctx context.Context, runID int64, byID map[int]runScope, outside map[int][]outsideEdge) (crossVerdicts, error) {
	var ids map[string]int
	var runs []state.Run
	var err error
	logs := map[int64][]state.TaskRunEntry{}
	v := crossVerdicts{satisfied: map[int]int{}, lost: map[int]int{}, reasons: map[int]string{}}
	for id, edges := range outside {
		judged := false
		for _, oe := range edges {
			judged = judged || (oe.cross && !oe.implicit)
		}
		if !judged {
			continue
		}
		if ids == nil {
			if ids, runs, err = e.crossContext(ctx); err != nil {
				return v, err
			}
		}
		window := byID[id].window
		confirmed := 0
		var why []string
		for _, oe := range edges {
			if !oe.cross || oe.implicit {
				confirmed++
				continue
			}
			up, found, err := e.upstreamOutcome(ctx, runID, runs, logs, ids[oe.dependsOn], window)
			switch {
			case err != nil:
				return v, err
			case !found:
				why = append(why, fmt.Sprintf("%s (another pipeline) has not run over %s", oe.dependsOn, windowText(window)))
			case graph.Satisfies(oe.typ, up.TaskRunState):
				confirmed++
			default:
				v.lost[id]++
				why = append(why, fmt.Sprintf("%s ended %s in run %d, which does not satisfy its %s edge", oe.dependsOn, up.Status, up.RunID, oe.typ))
			}
		}
		v.satisfied[id] = confirmed
		if len(why) > 0 {
			v.reasons[id] = strings.Join(why, "; ")
		}
	}
	return v, nil
}

// crossContext reads what the cross-pipeline gate needs once per run: the
// task ids of the environment's models and its newest runs.
func (e *Engine) crossContext(ctx context.Context) (map[string]int, []state.Run, error) {
	recs, err := e.store.Models(ctx, e.opts.Env.Suffix)
	if err != nil {
		return nil, nil, fmt.Errorf("cross-pipeline edges: reading the registry: %w", err)
	}
	ids := make(map[string]int, len(recs))
	for _, r := range recs {
		ids[r.Name] = r.TaskID
	}
	runs, err := e.store.Runs(ctx, e.opts.Env.Suffix, crossRunsScanned)
	if err != nil {
		return nil, nil, fmt.Errorf("cross-pipeline edges: reading the runs: %w", err)
	}
	return ids, runs, nil
}

// upstreamState is a cross-pipeline upstream's outcome and the run it came
// from.
type upstreamState struct {
	graph.TaskRunState
	RunID int64
}

// upstreamOutcome is task taskID's latest attempt in the newest run other
// than runID that ran it over window, passing over a task a cancel
// interrupted (interruptedTask).
func (e *Engine) upstreamOutcome(ctx context.Context, runID int64, runs []state.Run, logs map[int64][]state.TaskRunEntry,
	taskID int, window state.Window) (upstreamState, bool, error) {
	if taskID == 0 {
		return upstreamState{}, false, nil
	}
	for _, r := range runs {
		if r.ID == runID || !(window.IsZero() || r.Window.IsZero() || r.Window.Covers(window)) {
			continue
		}
		log, ok := logs[r.ID]
		if !ok {
			var err error
			if log, err = e.store.TaskLog(ctx, r.ID); err != nil {
				return upstreamState{}, false, fmt.Errorf("cross-pipeline edges: reading run %d: %w", r.ID, err)
			}
			logs[r.ID] = log
		}
		if r.Status == state.RunRunning && latestInProgress(log, taskID) {
			// Still running: its outcome is not known yet.
			return upstreamState{}, false, nil
		}
		rs := runStateFromLog(log)
		st, ok := rs[taskID]
		if !ok || st.Status == nil || !st.Status.Terminal() {
			continue
		}
		if *st.Status == graph.StatusFailed && latestEntry(log, taskID).Error == interruptedTask {
			// A cancelled run (Ctrl-C, SIGTERM, a UI quit) records a task
			// it interrupted FAILED, which says nothing about the work:
			// judge by an older run. A task whose units failed before the
			// cancel did fail, and counts.
			continue
		}
		return upstreamState{TaskRunState: st, RunID: r.ID}, true, nil
	}
	return upstreamState{}, false, nil
}

// windowText names a run window, or its absence.
func windowText(w state.Window) string {
	if w.IsZero() {
		return "any window"
	}
	return w.String()
}

// latestEntry is task taskID's latest attempt in log.
func latestEntry(log []state.TaskRunEntry, taskID int) state.TaskRunEntry {
	var out state.TaskRunEntry
	latest := -1
	for _, e := range log {
		if e.TaskID == taskID && e.Attempt >= latest {
			latest, out = e.Attempt, e
		}
	}
	return out
}

func latestInProgress(log []state.TaskRunEntry, taskID int) bool {
	latest, st := -1, ""
	for _, e := range log {
		if e.TaskID == taskID && e.Attempt >= latest {
			latest, st = e.Attempt, e.Status
		}
	}
	return st == "IN_PROGRESS"
}
