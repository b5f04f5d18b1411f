package graph

import (
	"slices"
	"testing"
)

func TestReadyEdgeKinds(t *testing.T) {
	// "An edge is satisfied when its upstream is: SUCCESS for a SUCCESS edge;
	// FAILED for a FAILURE edge; terminal (SUCCESS, FAILED or SKIPPED) for an
	// ALWAYS edge; SUCCESS with a positive target count for a HAS_DATA edge."
	// Task 2 waits on task 1 with one edge; 2 is ready exactly when it is
	// satisfied.
	notRun := TaskRunState{}
	cases := []struct {
		name     string
		edge     DependencyType
		upstream TaskRunState
		want     bool
	}{
		{"SUCCESS edge, upstream SUCCESS", Success, succeeded(0), true},
		{"SUCCESS edge, upstream FAILED", Success, ran(StatusFailed), false},
		{"SUCCESS edge, upstream SKIPPED", Success, ran(StatusSkipped), false},
		{"SUCCESS edge, upstream IN_PROGRESS", Success, ran(StatusInProgress), false},
		{"SUCCESS edge, upstream not run", Success, notRun, false},

		{"FAILURE edge, upstream SUCCESS", Failure, succeeded(5), false},
		{"FAILURE edge, upstream FAILED", Failure, ran(StatusFailed), true},
		{"FAILURE edge, upstream SKIPPED", Failure, ran(StatusSkipped), false},
		{"FAILURE edge, upstream IN_PROGRESS", Failure, ran(StatusInProgress), false},
		{"FAILURE edge, upstream not run", Failure, notRun, false},

		{"ALWAYS edge, upstream SUCCESS", Always, succeeded(0), true},
		{"ALWAYS edge, upstream FAILED", Always, ran(StatusFailed), true},
		{"ALWAYS edge, upstream SKIPPED", Always, ran(StatusSkipped), true},
		{"ALWAYS edge, upstream IN_PROGRESS", Always, ran(StatusInProgress), false},
		{"ALWAYS edge, upstream not run", Always, notRun, false},

		{"HAS_DATA edge, upstream SUCCESS with rows", HasData, succeeded(5), true},
		{"HAS_DATA edge, upstream SUCCESS without rows", HasData, succeeded(0), false},
		{"HAS_DATA edge, rows_written None, positive target_count", HasData,
			TaskRunState{Status: ptr(StatusSuccess), TargetCount: ptr[int64](3)}, true},
		{"HAS_DATA edge, rows_written None, zero target_count", HasData,
			TaskRunState{Status: ptr(StatusSuccess), TargetCount: ptr[int64](0)}, false},
		{"HAS_DATA edge, nothing recorded", HasData, ran(StatusSuccess), false},
		{"HAS_DATA edge, upstream FAILED having written rows", HasData,
			TaskRunState{Status: ptr(StatusFailed), RowsWritten: ptr[int64](5)}, false},
		{"HAS_DATA edge, upstream SKIPPED", HasData, ran(StatusSkipped), false},
		{"HAS_DATA edge, upstream not run", HasData, notRun, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := mustBuild(t, plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: c.edge}})
			rs := RunState{1: c.upstream}
			if got := slices.Contains(g.Ready(rs, nil), 2); got != c.want {
				t.Errorf("task 2 ready = %v, want %v", got, c.want)
			}
			want := 0
			if c.want {
				want = 1
			}
			if got := g.SatisfiedEdgeCount(2, rs, nil); got != want {
				t.Errorf("SatisfiedEdgeCount(2) = %d, want %d", got, want)
			}
		})
	}
}

func TestReadyRunConditions(t *testing.T) {
	// "at least required_edge_count of its dependencies are satisfied".
	g := conditionsGraph(t)
	ok := succeeded(1)
	cases := []struct {
		name string
		rs   RunState
		want []int
	}{
		{"no upstream done", RunState{}, []int{1, 2, 3}},
		{"one of three: ANY", RunState{1: ok}, []int{2, 3, 11}},
		{"two of three: ANY and N=2", RunState{1: ok, 2: ok}, []int{3, 11, 12}},
		{"three of three: ALL too", RunState{1: ok, 2: ok, 3: ok}, []int{10, 11, 12}},
		{"two satisfied, one lost: not ALL", RunState{1: ok, 2: ok, 3: ran(StatusFailed)}, []int{3, 11, 12}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			equalInts(t, "Ready", g.Ready(c.rs, nil), c.want)
		})
	}
	t.Run("ANY without dependencies is ready", func(t *testing.T) {
		g := mustBuild(t, []TaskNode{{ID: 1, RunCondition: Any}}, nil)
		equalInts(t, "Ready", g.Ready(nil, nil), []int{1})
	})
}

func TestReadyOwnStatus(t *testing.T) {
	// "A task is ready when its own status allows another attempt (it has not
	// run, or it FAILED)"; "A retry resumes: a task already SUCCESS or SKIPPED
	// is never ready again."
	cases := []struct {
		name string
		rs   RunState
		want bool
	}{
		{"not run: no row", RunState{}, true},
		{"not run: row without status", RunState{1: {}}, true},
		{"FAILED is ready again", RunState{1: ran(StatusFailed)}, true},
		{"SUCCESS is never ready again", RunState{1: succeeded(3)}, false},
		{"SKIPPED is never ready again", RunState{1: ran(StatusSkipped)}, false},
		{"IN_PROGRESS is not ready", RunState{1: ran(StatusInProgress)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := mustBuild(t, plain(1), nil)
			if got := slices.Contains(g.Ready(c.rs, nil), 1); got != c.want {
				t.Errorf("ready = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("FAILED still waits for its dependencies", func(t *testing.T) {
		g := mustBuild(t, plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
		equalInts(t, "Ready", g.Ready(RunState{1: ran(StatusInProgress), 2: ran(StatusFailed)}, nil), nil)
		equalInts(t, "Ready", g.Ready(RunState{1: succeeded(0), 2: ran(StatusFailed)}, nil), []int{2})
	})
}

func TestReadyIsSorted(t *testing.T) {
	// "Return the sorted ids of the tasks that can start now."
	g := mustBuild(t, plain(5, 3, 9, 4), []TaskEdge{{TaskID: 9, DependsOnTaskID: 5}})
	equalInts(t, "Ready", g.Ready(RunState{}, nil), []int{3, 4, 5})
	equalInts(t, "Ready", g.Ready(RunState{5: succeeded(0)}, nil), []int{3, 4, 9})
}

func TestRunStateMissingTaskHasNotRun(t *testing.T) {
	// "a missing task has not run."
	g := mustBuild(t, plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1, Type: Failure}})
	equalInts(t, "Ready(nil)", g.Ready(nil, nil), []int{1})
	equalInts(t, "Unsatisfiable(nil)", g.Unsatisfiable(nil, true), nil)
	// Entries for ids outside the graph are ignored.
	equalInts(t, "Ready", g.Ready(RunState{77: succeeded(1)}, map[int]int{77: 0}), []int{1})
}

func TestSatisfiedEdgeCount(t *testing.T) {
	// "cross_pipeline_satisfied is how many of its cross-pipeline dependencies
	// the cross-pipeline gate has confirmed. None means they have not been
	// evaluated, and they all count as satisfied."
	// Task 3: SUCCESS edge on 1 (satisfied), FAILURE edge on 2 (not), two
	// cross-pipeline edges.
	g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2}, {ID: 3, CrossPipelineEdgeCount: 2}},
		[]TaskEdge{{TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2, Type: Failure}})
	rs := RunState{1: succeeded(0), 2: succeeded(0)}
	cases := []struct {
		name  string
		cross *int
		want  int
	}{
		{"not evaluated: all cross-pipeline edges count", nil, 3},
		{"none confirmed", ptr(0), 1},
		{"one confirmed", ptr(1), 2},
		{"both confirmed", ptr(2), 3},
		{"more than the task has is clamped", ptr(5), 3},
		{"negative is clamped", ptr(-1), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := g.SatisfiedEdgeCount(3, rs, c.cross); got != c.want {
				t.Errorf("SatisfiedEdgeCount = %d, want %d", got, c.want)
			}
		})
	}
}

func TestReadyCrossPipeline(t *testing.T) {
	t.Run("a task missing from the map counts its cross-pipeline edges as satisfied", func(t *testing.T) {
		g := mustBuild(t, []TaskNode{{ID: 1, CrossPipelineEdgeCount: 2}}, nil)
		equalInts(t, "Ready(nil map)", g.Ready(nil, nil), []int{1})
		equalInts(t, "Ready(other task in map)", g.Ready(nil, map[int]int{5: 0}), []int{1})
	})
	t.Run("a confirmed count is used when present", func(t *testing.T) {
		g := mustBuild(t, []TaskNode{{ID: 1, CrossPipelineEdgeCount: 2}}, nil)
		equalInts(t, "Ready(1 of 2 confirmed)", g.Ready(nil, map[int]int{1: 1}), nil)
		equalInts(t, "Ready(2 of 2 confirmed)", g.Ready(nil, map[int]int{1: 2}), []int{1})
	})

	// The design's example: an ANY task waits on a same-pipeline upstream and on
	// one cross-pipeline edge. Were the assumption enough, it would start next
	// to its upstream, find the cross-pipeline edge unsatisfied and settle as
	// SKIPPED just before the upstream would have satisfied it.
	anyGraph := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2, RunCondition: Any, CrossPipelineEdgeCount: 1}},
		[]TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
	cases := []struct {
		name  string
		rs    RunState
		cross map[int]int
		want  []int
	}{
		{"the assumption alone never starts the ANY task next to its not-run upstream", RunState{}, nil, []int{1}},
		{"nor next to its IN_PROGRESS upstream", RunState{1: ran(StatusInProgress)}, nil, nil},
		{"the upstream's SUCCESS satisfies it", RunState{1: succeeded(0)}, nil, []int{2}},
		{"the upstream's SUCCESS satisfies it even with no cross-pipeline edge confirmed", RunState{1: succeeded(0)}, map[int]int{2: 0}, []int{2}},
		{"a finished upstream lets the assumption start it, so the gate can evaluate", RunState{1: ran(StatusFailed)}, nil, []int{1, 2}},
		{"a SKIPPED upstream is finished too", RunState{1: ran(StatusSkipped)}, nil, []int{2}},
		{"a confirmed cross-pipeline edge is no assumption", RunState{}, map[int]int{2: 1}, []int{1, 2}},
		{"a gate that confirmed none keeps it waiting after the upstream failed", RunState{1: ran(StatusFailed)}, map[int]int{2: 0}, []int{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			equalInts(t, "Ready", anyGraph.Ready(c.rs, c.cross), c.want)
		})
	}

	t.Run("same-pipeline edges that suffice alone start the task next to an unfinished upstream", func(t *testing.T) {
		// 3 is ANY over 1, 2 and one cross-pipeline edge; 1 succeeded, 2 has
		// not run. The SUCCESS of 1 satisfies it without any assumption.
		g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2}, {ID: 3, RunCondition: Any, CrossPipelineEdgeCount: 1}},
			[]TaskEdge{{TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}})
		equalInts(t, "Ready", g.Ready(RunState{1: succeeded(0)}, nil), []int{2, 3})
	})
	t.Run("N needing the assumption waits for every same-pipeline upstream", func(t *testing.T) {
		// 3 is N=2 over SUCCESS edges on 1 and 2 and one cross-pipeline edge.
		g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2}, {ID: 3, RunCondition: N, RunConditionCount: 2, CrossPipelineEdgeCount: 1}},
			[]TaskEdge{{TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}})
		// 1 + assumed 1 = 2, but 2 is still running.
		equalInts(t, "Ready(2 running)", g.Ready(RunState{1: succeeded(0), 2: ran(StatusInProgress)}, nil), nil)
		// 2 failed: its edge is unsatisfied, but it has finished.
		equalInts(t, "Ready(2 failed)", g.Ready(RunState{1: succeeded(0), 2: ran(StatusFailed)}, nil), []int{2, 3})
		// 2 succeeded: same-pipeline edges alone reach 2.
		equalInts(t, "Ready(2 succeeded)", g.Ready(RunState{1: succeeded(0), 2: succeeded(0)}, map[int]int{3: 0}), []int{3})
	})
}
