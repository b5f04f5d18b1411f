package graph

import (
	"slices"
	"testing"
)

// ran returns the run state of a task that ended with s.
func ran(s TaskStatus) TaskRunState { return TaskRunState{Status: &s} }

// succeeded returns the run state of a SUCCESS attempt that wrote rows rows.
func succeeded(rows int64) TaskRunState {
	s := StatusSuccess
	return TaskRunState{Status: &s, RowsWritten: &rows}
}

func ptr[T any](v T) *T { return &v }

func mustBuild(t *testing.T, tasks []TaskNode, edges []TaskEdge) *DependencyGraph {
	t.Helper()
	g, err := Build(tasks, edges)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return g
}

// conditionsGraph is three sources (1, 2, 3) and three tasks that each
// depend on all of them: 10 under ALL, 11 under ANY, 12 under N=2.
func conditionsGraph(t *testing.T) *DependencyGraph {
	t.Helper()
	tasks := []TaskNode{
		{ID: 1}, {ID: 2}, {ID: 3},
		{ID: 10, RunCondition: All},
		{ID: 11, RunCondition: Any},
		{ID: 12, RunCondition: N, RunConditionCount: 2},
	}
	var edges []TaskEdge
	for _, down := range []int{10, 11, 12} {
		for _, up := range []int{1, 2, 3} {
			edges = append(edges, TaskEdge{TaskID: down, DependsOnTaskID: up})
		}
	}
	return mustBuild(t, tasks, edges)
}

// plain returns ALL tasks without cross-pipeline edges.
func plain(ids ...int) []TaskNode {
	out := make([]TaskNode, len(ids))
	for i, id := range ids {
		out[i] = TaskNode{ID: id}
	}
	return out
}

func equalInts(t *testing.T, what string, got, want []int) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}
