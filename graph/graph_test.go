package graph

import (
	"slices"
	"testing"
)

func TestTaskIDsInSuppliedOrder(t *testing.T) {
	// "The task ids, in the order they were supplied."
	g := mustBuild(t, plain(30, 10, 20), []TaskEdge{{TaskID: 30, DependsOnTaskID: 20}})
	equalInts(t, "TaskIDs()", g.TaskIDs(), []int{30, 10, 20})
}

func TestDependenciesOfIndexesEdgesByWaitingTask(t *testing.T) {
	// "Index the edges by the task that waits on them." / "Return the edges
	// task_id waits on."
	e31 := TaskEdge{TaskID: 3, DependsOnTaskID: 1, Type: Success}
	e21 := TaskEdge{TaskID: 2, DependsOnTaskID: 1, Type: Failure}
	e32 := TaskEdge{TaskID: 3, DependsOnTaskID: 2, Type: Always}
	g := mustBuild(t, plain(1, 2, 3), []TaskEdge{e31, e21, e32})
	if got := g.DependenciesOf(3); !slices.Equal(got, []TaskEdge{e31, e32}) {
		t.Errorf("DependenciesOf(3) = %v, want %v", got, []TaskEdge{e31, e32})
	}
	if got := g.DependenciesOf(2); !slices.Equal(got, []TaskEdge{e21}) {
		t.Errorf("DependenciesOf(2) = %v, want %v", got, []TaskEdge{e21})
	}
	if got := g.DependenciesOf(1); len(got) != 0 {
		t.Errorf("DependenciesOf(1) = %v, want none", got)
	}
	if got := g.DependenciesOf(99); len(got) != 0 {
		t.Errorf("DependenciesOf(99) = %v, want none for a task not in the graph", got)
	}
}

func TestTaskEdgeDirection(t *testing.T) {
	// "task_id waits on depends_on_task_id."
	g := mustBuild(t, plain(2, 1), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
	equalInts(t, "DownstreamOf(1)", g.DownstreamOf(1), []int{2})
	equalInts(t, "DownstreamOf(2)", g.DownstreamOf(2), nil)
	if got := g.Waves(); len(got) != 2 || got[0][0] != 1 || got[1][0] != 2 {
		t.Errorf("Waves() = %v, want [[1] [2]]", got)
	}
	equalInts(t, "Ready(empty)", g.Ready(RunState{}, nil), []int{1})
}

func TestDownstreamOf(t *testing.T) {
	// "Return every task that waits on task_id, directly or through others."
	// 1 <- 2, 1 <- 3, {2, 3} <- 4 <- 5; 6 <- 7 apart.
	g := mustBuild(t, plain(1, 2, 3, 4, 5, 6, 7), []TaskEdge{
		{TaskID: 4, DependsOnTaskID: 2}, {TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 1},
		{TaskID: 4, DependsOnTaskID: 3}, {TaskID: 5, DependsOnTaskID: 4, Type: Failure}, {TaskID: 7, DependsOnTaskID: 6},
	})
	equalInts(t, "DownstreamOf(1)", g.DownstreamOf(1), []int{2, 3, 4, 5})
	equalInts(t, "DownstreamOf(2)", g.DownstreamOf(2), []int{4, 5})
	equalInts(t, "DownstreamOf(6)", g.DownstreamOf(6), []int{7})
	equalInts(t, "DownstreamOf(5)", g.DownstreamOf(5), nil)
	equalInts(t, "DownstreamOf(42)", g.DownstreamOf(42), nil)
}

func TestDependencyGraphIsImmutable(t *testing.T) {
	// "A validated, immutable same-pipeline task graph."
	tasks := plain(1, 2, 3)
	edges := []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}}
	g := mustBuild(t, tasks, edges)
	tasks[0].ID = 100
	tasks[2].RunCondition = Any
	edges[0].Type = Failure

	ids := g.TaskIDs()
	ids[0] = 55
	deps := g.DependenciesOf(2)
	deps[0].DependsOnTaskID = 3
	waves := g.Waves()
	waves[0][0] = 77
	down := g.DownstreamOf(1)
	down[0] = 66

	equalInts(t, "TaskIDs()", g.TaskIDs(), []int{1, 2, 3})
	if got := g.DependenciesOf(2); !slices.Equal(got, []TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: Success}}) {
		t.Errorf("DependenciesOf(2) = %v, changed from outside", got)
	}
	if got := g.Waves(); got[0][0] != 1 {
		t.Errorf("Waves() = %v, changed from outside", got)
	}
	equalInts(t, "DownstreamOf(1)", g.DownstreamOf(1), []int{2, 3})
	if got := g.RequiredEdgeCount(3); got != 1 {
		t.Errorf("RequiredEdgeCount(3) = %d, want 1 (ALL over one edge)", got)
	}
}

func TestTotalEdgeCount(t *testing.T) {
	// "Return how many dependencies task_id has, cross-pipeline ones included."
	g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2}, {ID: 3, CrossPipelineEdgeCount: 3}},
		[]TaskEdge{{TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2, Type: HasData}})
	for id, want := range map[int]int{1: 0, 2: 0, 3: 5} {
		if got := g.TotalEdgeCount(id); got != want {
			t.Errorf("TotalEdgeCount(%d) = %d, want %d", id, got, want)
		}
	}
}

func TestRequiredEdgeCount(t *testing.T) {
	// "Every dependency under ALL, one under ANY (none when there are none),
	// and run_condition_count under N."
	cases := []struct {
		name  string
		task  TaskNode
		edges int // same-pipeline edges onto task 10 from tasks 1..edges
		want  int
	}{
		{"ALL counts every dependency", TaskNode{RunCondition: All, CrossPipelineEdgeCount: 1}, 2, 3},
		{"ALL without dependencies", TaskNode{RunCondition: All}, 0, 0},
		{"ANY needs one", TaskNode{RunCondition: Any}, 3, 1},
		{"ANY with only cross-pipeline dependencies needs one", TaskNode{RunCondition: Any, CrossPipelineEdgeCount: 2}, 0, 1},
		{"ANY without dependencies needs none", TaskNode{RunCondition: Any}, 0, 0},
		{"N needs its count", TaskNode{RunCondition: N, RunConditionCount: 2}, 3, 2},
		{"N counting a cross-pipeline dependency", TaskNode{RunCondition: N, RunConditionCount: 3, CrossPipelineEdgeCount: 1}, 2, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.task.ID = 10
			tasks := []TaskNode{c.task}
			var edges []TaskEdge
			for i := 1; i <= c.edges; i++ {
				tasks = append(tasks, TaskNode{ID: i})
				edges = append(edges, TaskEdge{TaskID: 10, DependsOnTaskID: i})
			}
			g := mustBuild(t, tasks, edges)
			if got := g.RequiredEdgeCount(10); got != c.want {
				t.Errorf("RequiredEdgeCount = %d, want %d", got, c.want)
			}
		})
	}
}
