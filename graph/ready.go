package graph

import "slices"

// statusOf returns task id's status under rs, or nil when it has not run.
func statusOf(rs RunState, id int) *TaskStatus {
	return rs[id].Status
}

// satisfies reports whether an upstream that ended with status (and wrote
// rows or not) satisfies an edge of type t.
func satisfies(t DependencyType, status TaskStatus, wroteRows bool) bool {
	switch t {
	case Success:
		return status == StatusSuccess
	case Failure:
		return status == StatusFailed
	case Always:
		return status.Terminal()
	case HasData:
		return status == StatusSuccess && wroteRows
	}
	return false
}

// Satisfies reports whether an upstream task in state up satisfies an edge
// of type t: the rule Ready applies to same-pipeline edges, for a caller
// that judges a cross-pipeline edge from the upstream's own run.
func Satisfies(t DependencyType, up TaskRunState) bool {
	return up.Status != nil && satisfies(t, *up.Status, up.WroteRows())
}

// edgeSatisfied reports whether e's upstream satisfies it now.
func edgeSatisfied(e TaskEdge, rs RunState) bool {
	up := rs[e.DependsOnTaskID]
	return up.Status != nil && satisfies(e.Type, *up.Status, up.WroteRows())
}

// SatisfiedEdgeCount returns how many of task id's dependencies are satisfied
// now.
//
// crossSatisfied is how many of its cross-pipeline dependencies the
// cross-pipeline gate has confirmed (clamped to [0, CrossPipelineEdgeCount],
// since the gate cannot confirm edges the task does not have). nil means they
// have not been evaluated, and they all count as satisfied: the scheduler has
// to consider the task for its gate to evaluate them, so counting them as
// unsatisfied would never start it.
func (g *DependencyGraph) SatisfiedEdgeCount(id int, rs RunState, crossSatisfied *int) int {
	n := g.nodes[id].CrossPipelineEdgeCount
	if crossSatisfied != nil {
		n = min(max(*crossSatisfied, 0), n)
	}
	for _, e := range g.deps[id] {
		if edgeSatisfied(e, rs) {
			n++
		}
	}
	return n
}

// Ready returns the sorted ids of the tasks that can start now.
//
// A task is ready when its own status allows another attempt (it has not run,
// or it FAILED: a retry resumes, so a SUCCESS or SKIPPED task is never ready
// again, and an IN_PROGRESS one is already running) and at least
// RequiredEdgeCount of its dependencies are satisfied. An edge is satisfied
// when its upstream is SUCCESS for a Success edge; FAILED for a Failure edge;
// terminal (SUCCESS, FAILED or SKIPPED) for an Always edge; SUCCESS having
// written rows (TaskRunState.WroteRows) for a HasData edge.
//
// crossSatisfied maps a task id to its confirmed cross-pipeline count; a task
// missing from it (or a nil map) counts its cross-pipeline dependencies as
// satisfied (see SatisfiedEdgeCount). That assumption alone never starts a
// task while one of its same-pipeline upstreams has not finished (has no
// status or is IN_PROGRESS): otherwise an Any task would start next to the
// upstream it waits on, find the cross-pipeline edge unsatisfied, and settle
// as SKIPPED just before the upstream would have satisfied it. A task whose
// same-pipeline edges alone reach the required count is ready either way.
func (g *DependencyGraph) Ready(rs RunState, crossSatisfied map[int]int) []int {
	var out []int
	for _, id := range g.ids {
		if s := statusOf(rs, id); s != nil && *s != StatusFailed {
			continue
		}
		required := g.RequiredEdgeCount(id)
		if confirmed, ok := crossSatisfied[id]; ok {
			if g.SatisfiedEdgeCount(id, rs, &confirmed) >= required {
				out = append(out, id)
			}
			continue
		}
		none := 0
		if g.SatisfiedEdgeCount(id, rs, &none) >= required {
			out = append(out, id)
			continue
		}
		if g.SatisfiedEdgeCount(id, rs, nil) >= required && !g.upstreamUnfinished(id, rs) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// upstreamUnfinished reports whether one of task id's same-pipeline upstreams
// has not finished: it has no status or is IN_PROGRESS.
func (g *DependencyGraph) upstreamUnfinished(id int, rs RunState) bool {
	for _, e := range g.deps[id] {
		if s := statusOf(rs, e.DependsOnTaskID); s == nil || !s.Terminal() {
			return true
		}
	}
	return false
}
