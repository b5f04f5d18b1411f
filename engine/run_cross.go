package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/graph"
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
	// stateless marks an edge of a task whose model keeps no state
	// (state: false): it has no unit windows to judge the edge for, so
	// the edge is judged once for the task.
	stateless bool
}

// perWindow reports whether the edge is judged unit by unit, for each
// unit's window, rather than once for the task: an explicit after: edge
// onto another pipeline's task, except a FAILURE edge. A window whose
// upstream ran over it and satisfied the edge runs, one it did not run over
// is held with the reason, and the task's other windows proceed. A FAILURE
// edge reacts to an event — the upstream's failure — not to a window's
// data, so it stays a task-level decision: per window, one failed run
// would fire an alert once for every window it covered. A task without
// state has no windows: its edges are task-level too.
func (oe outsideEdge) perWindow() bool {
	return oe.cross && !oe.implicit && oe.typ != graph.Failure && !oe.stateless
}

// taskLevel reports whether the cross-pipeline gate judges the edge once
// for the task.
func (oe outsideEdge) taskLevel() bool {
	return oe.cross && !oe.implicit && !oe.perWindow()
}

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

// crossSatisfied is the cross-pipeline gate for the edges judged once per
// task (taskLevel: explicit FAILURE edges onto another pipeline's task
// outside this run): for every task with one, how many of its outside edges
// hold, as graph.Ready takes it. Such an edge is judged by the upstream
// task's outcome in the newest other run of the environment that ran it
// over the run's window (gate.RunHistory.Outcome; a run without a window
// covers every window, and a task without a window takes the upstream's
// newest run). An upstream that has no such run holds nothing back from
// being settled, but cannot satisfy the edge either, so the task waits,
// with the reason. Every other outside edge counts as satisfied here:
// gated upstreams are settled by the contract gate per unit, other
// explicit cross-pipeline edges per unit window by the same gate
// (perWindow), and edges onto tasks of the same pipeline that this run
// leaves out are the operator's choice. Tasks with no task-level edge are
// left out of the map, which Ready reads as "not evaluated".
func (e *Engine) crossSatisfied(ctx context.Context, runID int64, byID map[int]runScope, outside map[int][]outsideEdge) (crossVerdicts, error) {
	var history gate.RunHistory
	v := crossVerdicts{satisfied: map[int]int{}, lost: map[int]int{}, reasons: map[int]string{}}
	for id, edges := range outside {
		judged := false
		for _, oe := range edges {
			judged = judged || oe.taskLevel()
		}
		if !judged {
			continue
		}
		window := byID[id].window
		confirmed := 0
		var why []string
		for _, oe := range edges {
			if !oe.taskLevel() {
				confirmed++
				continue
			}
			up, found, err := history.Outcome(ctx, e.store, e.opts.Env.Suffix, oe.dependsOn, window, runID)
			switch {
			case err != nil:
				return v, err
			case !found:
				why = append(why, gate.AfterReason(oe.dependsOn, oe.typ, "another pipeline's task, "+gate.NotRunDetail(window)))
			case graph.Satisfies(oe.typ, up.TaskRunState):
				confirmed++
			default:
				v.lost[id]++
				why = append(why, gate.AfterReason(oe.dependsOn, oe.typ, gate.EndedDetail(up.Status.String(), up.RunID)))
			}
		}
		v.satisfied[id] = confirmed
		if len(why) > 0 {
			v.reasons[id] = strings.Join(why, "; ")
		}
	}
	return v, nil
}
