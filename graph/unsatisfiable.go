package graph

import "slices"

// Unsatisfiable returns the sorted ids of the never-run tasks that can never
// become ready in this run; the caller records them SKIPPED.
//
// A dependency is lost for good only when its upstream is settled (SUCCESS or
// SKIPPED) and does not satisfy it. A FAILED upstream may still succeed on a
// retry, unless failuresFinal says no retry will come in this run: then
// FAILED is settled too, satisfying Failure and Always edges and losing
// Success and HasData ones. An IN_PROGRESS upstream has not finished, and a
// never-run one may still end any way, so their edges stay possible, as do
// cross-pipeline dependencies always. A task is unsatisfiable when, even if
// every still-possible dependency were satisfied, it could not reach
// RequiredEdgeCount.
//
// Skipping a task settles it as SKIPPED, which can doom its own dependents
// (an Always edge onto it stays satisfied), so the search runs to a fixed
// point; walking the tasks in wave order reaches it in one pass, because a
// task's fate depends only on its upstreams. Only tasks with no status are
// reported: a task that already ran keeps its status.
func (g *DependencyGraph) Unsatisfiable(rs RunState, failuresFinal bool) []int {
	skipped := map[int]bool{}
	// settled returns the status an upstream is settled with, if it is.
	settled := func(id int) (TaskStatus, bool) {
		if skipped[id] {
			return StatusSkipped, true
		}
		s := statusOf(rs, id)
		if s == nil {
			return 0, false
		}
		switch *s {
		case StatusSuccess, StatusSkipped:
			return *s, true
		case StatusFailed:
			return *s, failuresFinal
		}
		return *s, false
	}
	var out []int
	for _, wave := range g.waves {
		for _, id := range wave {
			if statusOf(rs, id) != nil {
				continue
			}
			possible := g.nodes[id].CrossPipelineEdgeCount
			for _, e := range g.deps[id] {
				s, ok := settled(e.DependsOnTaskID)
				if !ok || satisfies(e.Type, s, rs[e.DependsOnTaskID].WroteRows()) {
					possible++
				}
			}
			if possible < g.RequiredEdgeCount(id) {
				skipped[id] = true
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}
