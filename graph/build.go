package graph

import (
	"fmt"
	"maps"
	"slices"
)

// DependencyGraph is a validated, immutable same-pipeline task graph; build it
// with Build. Its methods never change it and return copies, so one graph
// can serve concurrent readers (the scheduler, the UI, `bollhav graph`).
type DependencyGraph struct {
	ids   []int
	nodes map[int]TaskNode
	// deps indexes the edges by the task that waits on them, in edge order.
	deps map[int][]TaskEdge
	// dependents maps a task to the distinct tasks that wait on it, sorted.
	dependents map[int][]int
	waves      [][]int
}

// Build validates CFG_ rows and builds their DependencyGraph.
//
// It returns an UnknownTaskError or a SelfDependencyError for a bad edge; a
// GraphError for a duplicate task, a negative CrossPipelineEdgeCount, an
// unknown run condition, an N condition whose count is below 1 or above the
// task's number of dependencies (same-pipeline edges plus
// CrossPipelineEdgeCount: that check spans two tables, so only the graph can
// make it), an unknown dependency type, or the same edge given twice; and a
// CycleError when the edges loop. Checks run tasks first, then edges in
// order, then N counts, then cycles, and the first failure is returned.
func Build(tasks []TaskNode, edges []TaskEdge) (*DependencyGraph, error) {
	g := &DependencyGraph{
		ids:        make([]int, 0, len(tasks)),
		nodes:      make(map[int]TaskNode, len(tasks)),
		deps:       make(map[int][]TaskEdge),
		dependents: make(map[int][]int),
	}
	for _, t := range tasks {
		if _, dup := g.nodes[t.ID]; dup {
			return nil, &GraphError{Msg: fmt.Sprintf("task %d: duplicate task id", t.ID)}
		}
		switch t.RunCondition {
		case All, Any:
		case N:
			if t.RunConditionCount < 1 {
				return nil, &GraphError{Msg: fmt.Sprintf("task %d: run condition N needs a count of at least 1, got %d", t.ID, t.RunConditionCount)}
			}
		default:
			return nil, &GraphError{Msg: fmt.Sprintf("task %d: unknown run condition %d", t.ID, int(t.RunCondition))}
		}
		if t.CrossPipelineEdgeCount < 0 {
			return nil, &GraphError{Msg: fmt.Sprintf("task %d: negative cross-pipeline edge count %d", t.ID, t.CrossPipelineEdgeCount)}
		}
		g.ids = append(g.ids, t.ID)
		g.nodes[t.ID] = t
	}

	seen := make(map[TaskEdge]bool, len(edges))
	for _, e := range edges {
		for _, id := range []int{e.TaskID, e.DependsOnTaskID} {
			if _, ok := g.nodes[id]; !ok {
				return nil, &UnknownTaskError{TaskID: id, Edge: e}
			}
		}
		if e.TaskID == e.DependsOnTaskID {
			return nil, &SelfDependencyError{TaskID: e.TaskID}
		}
		switch e.Type {
		case Success, Failure, Always, HasData:
		default:
			return nil, &GraphError{Msg: fmt.Sprintf("edge %d -> %d: unknown dependency type %d", e.TaskID, e.DependsOnTaskID, int(e.Type))}
		}
		if seen[e] {
			return nil, &GraphError{Msg: fmt.Sprintf("edge %d -> %d (%s) given twice", e.TaskID, e.DependsOnTaskID, e.Type)}
		}
		seen[e] = true
		g.deps[e.TaskID] = append(g.deps[e.TaskID], e)
		if !slices.Contains(g.dependents[e.DependsOnTaskID], e.TaskID) {
			g.dependents[e.DependsOnTaskID] = append(g.dependents[e.DependsOnTaskID], e.TaskID)
		}
	}
	for _, d := range g.dependents {
		slices.Sort(d)
	}

	for _, id := range g.ids {
		t := g.nodes[id]
		if t.RunCondition == N && t.RunConditionCount > g.TotalEdgeCount(id) {
			return nil, &GraphError{Msg: fmt.Sprintf("task %d: run condition N needs %d dependencies but the task has %d", id, t.RunConditionCount, g.TotalEdgeCount(id))}
		}
	}

	if cycle := g.findCycle(); cycle != nil {
		return nil, &CycleError{Cycle: cycle}
	}
	g.waves = g.computeWaves()
	return g, nil
}

// findCycle returns the first cycle met by a depth-first walk over the tasks
// in supplied order, following each task's dependencies in edge order, or nil.
func (g *DependencyGraph) findCycle() []int {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make(map[int]int, len(g.ids))
	var path []int
	var visit func(id int) []int
	visit = func(id int) []int {
		state[id] = onPath
		path = append(path, id)
		for _, e := range g.deps[id] {
			switch state[e.DependsOnTaskID] {
			case onPath:
				start := slices.Index(path, e.DependsOnTaskID)
				return slices.Clone(path[start:])
			case unvisited:
				if c := visit(e.DependsOnTaskID); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for _, id := range g.ids {
		if state[id] == unvisited {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// TaskIDs returns the task ids in the order they were supplied, so callers can
// show tasks the way the CFG_ rows list them.
func (g *DependencyGraph) TaskIDs() []int {
	return slices.Clone(g.ids)
}

// DependenciesOf returns the same-pipeline edges task id waits on, in the order
// they were supplied; nil for a task without any or not in the graph.
func (g *DependencyGraph) DependenciesOf(id int) []TaskEdge {
	return slices.Clone(g.deps[id])
}

// DownstreamOf returns, sorted, every task that waits on task id, directly or
// through others: what a failure or a reset of id can reach.
func (g *DependencyGraph) DownstreamOf(id int) []int {
	seen := map[int]bool{}
	queue := slices.Clone(g.dependents[id])
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		if seen[t] {
			continue
		}
		seen[t] = true
		queue = append(queue, g.dependents[t]...)
	}
	return slices.Sorted(maps.Keys(seen))
}

// TotalEdgeCount returns how many dependencies task id has, cross-pipeline
// ones included, since its run condition counts them all.
func (g *DependencyGraph) TotalEdgeCount(id int) int {
	return len(g.deps[id]) + g.nodes[id].CrossPipelineEdgeCount
}

// RequiredEdgeCount returns how many of task id's dependencies must be
// satisfied before it runs: every dependency under All, one under Any (none
// when there are none, so a task without dependencies can always start), and
// RunConditionCount under N.
func (g *DependencyGraph) RequiredEdgeCount(id int) int {
	t := g.nodes[id]
	total := g.TotalEdgeCount(id)
	switch t.RunCondition {
	case Any:
		return min(1, total)
	case N:
		return t.RunConditionCount
	}
	return total
}
