package graph

import (
	"errors"
	"testing"
)

// wantGraphError asserts err is a *GraphError (directly or by unwrapping).
func wantGraphError(t *testing.T, err error) *GraphError {
	t.Helper()
	var ge *GraphError
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *GraphError", err, err)
	}
	return ge
}

func TestBuildRejectsInvalidRows(t *testing.T) {
	// "GraphError for a duplicate task, an unknown dependency type or an
	// invalid run condition", and the decisions taken where the design is silent.
	cases := []struct {
		name  string
		tasks []TaskNode
		edges []TaskEdge
	}{
		{"duplicate task", []TaskNode{{ID: 1}, {ID: 2}, {ID: 1}}, nil},
		{"unknown dependency type", plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: DependencyType(7)}}},
		{"negative dependency type", plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: DependencyType(-1)}}},
		{"unknown run condition", []TaskNode{{ID: 1, RunCondition: RunCondition(3)}}, nil},
		{"N with count zero", []TaskNode{{ID: 1}, {ID: 2, RunCondition: N, RunConditionCount: 0}},
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}}},
		{"N with negative count", []TaskNode{{ID: 1}, {ID: 2, RunCondition: N, RunConditionCount: -2}},
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}}},
		{"N larger than the dependency count", []TaskNode{{ID: 1}, {ID: 2, RunCondition: N, RunConditionCount: 2}},
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}}},
		{"N larger than same-pipeline plus cross-pipeline dependencies",
			[]TaskNode{{ID: 1}, {ID: 2, RunCondition: N, RunConditionCount: 4, CrossPipelineEdgeCount: 2}},
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}}},
		{"N on a task without dependencies", []TaskNode{{ID: 1, RunCondition: N, RunConditionCount: 1}}, nil},
		{"negative cross-pipeline edge count", []TaskNode{{ID: 1, CrossPipelineEdgeCount: -1}}, nil},
		{"the same edge twice", plain(1, 2),
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: Always}, {TaskID: 2, DependsOnTaskID: 1, Type: Always}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Build(c.tasks, c.edges)
			if err == nil {
				t.Fatalf("Build accepted it: %v", g.TaskIDs())
			}
			wantGraphError(t, err)
			var ce *CycleError
			var se *SelfDependencyError
			var ue *UnknownTaskError
			if errors.As(err, &ce) || errors.As(err, &se) || errors.As(err, &ue) {
				t.Errorf("error %v is a more specific error than a plain GraphError", err)
			}
		})
	}
}

func TestBuildAcceptsValidRunConditions(t *testing.T) {
	t.Run("N equal to the dependency count", func(t *testing.T) {
		mustBuild(t, []TaskNode{{ID: 1}, {ID: 2, RunCondition: N, RunConditionCount: 1}},
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
	})
	t.Run("N counts cross-pipeline dependencies too", func(t *testing.T) {
		// One same-pipeline edge and two cross-pipeline ones: three dependencies.
		g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2, RunCondition: N, RunConditionCount: 3, CrossPipelineEdgeCount: 2}},
			[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
		if got := g.RequiredEdgeCount(2); got != 3 {
			t.Errorf("RequiredEdgeCount(2) = %d, want 3", got)
		}
	})
	t.Run("run condition count is read only under N", func(t *testing.T) {
		// "run_condition_count is read only under N": under ALL and ANY it is
		// ignored, whatever it holds.
		g := mustBuild(t, []TaskNode{
			{ID: 1}, {ID: 2},
			{ID: 3, RunCondition: All, RunConditionCount: 99},
			{ID: 4, RunCondition: Any, RunConditionCount: -5},
		}, []TaskEdge{
			{TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2},
			{TaskID: 4, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 2},
		})
		if got := g.RequiredEdgeCount(3); got != 2 {
			t.Errorf("ALL RequiredEdgeCount = %d, want 2", got)
		}
		if got := g.RequiredEdgeCount(4); got != 1 {
			t.Errorf("ANY RequiredEdgeCount = %d, want 1", got)
		}
	})
	t.Run("one pair with two different edge types", func(t *testing.T) {
		g := mustBuild(t, plain(1, 2), []TaskEdge{
			{TaskID: 2, DependsOnTaskID: 1, Type: Success}, {TaskID: 2, DependsOnTaskID: 1, Type: Failure},
		})
		if got := g.TotalEdgeCount(2); got != 2 {
			t.Errorf("TotalEdgeCount(2) = %d, want 2", got)
		}
	})
	t.Run("no tasks", func(t *testing.T) {
		g := mustBuild(t, nil, nil)
		if len(g.TaskIDs()) != 0 || len(g.Waves()) != 0 {
			t.Errorf("empty graph has tasks %v, waves %v", g.TaskIDs(), g.Waves())
		}
	})
}

func TestBuildUnknownTask(t *testing.T) {
	// "An edge names a task id that is not among the graph's tasks."
	cases := []struct {
		name string
		edge TaskEdge
		want int
	}{
		{"unknown waiting task", TaskEdge{TaskID: 9, DependsOnTaskID: 1}, 9},
		{"unknown upstream", TaskEdge{TaskID: 1, DependsOnTaskID: 8}, 8},
		{"unknown self-dependency is unknown first", TaskEdge{TaskID: 7, DependsOnTaskID: 7}, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(plain(1, 2), []TaskEdge{c.edge})
			var ue *UnknownTaskError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is not an *UnknownTaskError", err)
			}
			if ue.TaskID != c.want || ue.Edge != c.edge {
				t.Errorf("UnknownTaskError = %+v, want TaskID %d, Edge %+v", ue, c.want, c.edge)
			}
			wantGraphError(t, err)
		})
	}
}

func TestBuildSelfDependency(t *testing.T) {
	// "A task depends on itself."
	_, err := Build(plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 2, DependsOnTaskID: 2, Type: Always}})
	var se *SelfDependencyError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SelfDependencyError", err)
	}
	if se.TaskID != 2 {
		t.Errorf("SelfDependencyError.TaskID = %d, want 2", se.TaskID)
	}
	if ge := wantGraphError(t, err); ge.Error() != err.Error() {
		t.Errorf("GraphError says %q, the error says %q", ge.Error(), err.Error())
	}
}

func TestBuildCycle(t *testing.T) {
	// "The dependency edges form a cycle, so no order can run them." and "Keep
	// the cycle's task ids in the order they were followed."
	cases := []struct {
		name  string
		tasks []TaskNode
		edges []TaskEdge
		want  []int
	}{
		{
			// 1 waits on 2, 2 on 3, 3 on 1: from 1 the walk follows 1, 2, 3.
			name:  "three tasks, walk starts at the first task supplied",
			tasks: plain(1, 2, 3, 4),
			edges: []TaskEdge{{TaskID: 1, DependsOnTaskID: 2}, {TaskID: 2, DependsOnTaskID: 3}, {TaskID: 3, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 1}},
			want:  []int{1, 2, 3},
		},
		{
			// Same edges, 3 supplied first: 3, 1, 2.
			name:  "supplied order picks where the walk starts",
			tasks: plain(3, 1, 2, 4),
			edges: []TaskEdge{{TaskID: 1, DependsOnTaskID: 2}, {TaskID: 2, DependsOnTaskID: 3}, {TaskID: 3, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 1}},
			want:  []int{3, 1, 2},
		},
		{
			// 4 is entered first but is not on the loop: 4, 1, 2, 3, back to 1.
			name:  "a task leading into the cycle is not part of it",
			tasks: plain(4, 1, 2, 3),
			edges: []TaskEdge{{TaskID: 1, DependsOnTaskID: 2}, {TaskID: 2, DependsOnTaskID: 3}, {TaskID: 3, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 1}},
			want:  []int{1, 2, 3},
		},
		{
			// 1 waits on 3 (first edge) and on 2; both loop back to 1.
			name:  "dependencies are followed in edge order",
			tasks: plain(1, 2, 3),
			edges: []TaskEdge{{TaskID: 1, DependsOnTaskID: 3}, {TaskID: 1, DependsOnTaskID: 2}, {TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 1}},
			want:  []int{1, 3},
		},
		{
			name:  "the other edge order finds the other cycle",
			tasks: plain(1, 2, 3),
			edges: []TaskEdge{{TaskID: 1, DependsOnTaskID: 2}, {TaskID: 1, DependsOnTaskID: 3}, {TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 1}},
			want:  []int{1, 2},
		},
		{
			name:  "two tasks through a failure edge",
			tasks: plain(5, 6),
			edges: []TaskEdge{{TaskID: 6, DependsOnTaskID: 5, Type: Failure}, {TaskID: 5, DependsOnTaskID: 6, Type: HasData}},
			want:  []int{5, 6},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(c.tasks, c.edges)
			var ce *CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CycleError", err)
			}
			equalInts(t, "Cycle", ce.Cycle, c.want)
			wantGraphError(t, err)
		})
	}
	t.Run("message names the loop", func(t *testing.T) {
		err := &CycleError{Cycle: []int{1, 2, 3}}
		if got, want := err.Error(), "graph: dependency cycle: 1 -> 2 -> 3 -> 1"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	})
}

func TestCrossPipelineEdgesStayOutOfTheGraph(t *testing.T) {
	// "Edges to tasks in other pipelines stay out of it, because they have no
	// place in the pipeline's own order; each task records only how many it
	// has, since its RUN_CONDITION counts them too."
	g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2, CrossPipelineEdgeCount: 2}}, []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
	if got := g.DependenciesOf(2); len(got) != 1 {
		t.Errorf("DependenciesOf(2) = %v, want only the same-pipeline edge", got)
	}
	if got := g.TotalEdgeCount(2); got != 3 {
		t.Errorf("TotalEdgeCount(2) = %d, want 1 + 2 = 3", got)
	}
	if got := g.RequiredEdgeCount(2); got != 3 {
		t.Errorf("RequiredEdgeCount(2) under ALL = %d, want 3", got)
	}
	lone := mustBuild(t, []TaskNode{{ID: 7, CrossPipelineEdgeCount: 4}}, nil)
	if got := lone.Waves(); len(got) != 1 || len(got[0]) != 1 || got[0][0] != 7 {
		t.Errorf("Waves() = %v, want [[7]]: cross-pipeline edges do not order", got)
	}
}
