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
