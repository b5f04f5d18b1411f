package graph

import "testing"

// fan builds task 1 and, for each edge type, a task waiting on 1 with it:
// 2 SUCCESS, 3 FAILURE, 4 ALWAYS, 5 HAS_DATA.
func fan(t *testing.T) *DependencyGraph {
	t.Helper()
	return mustBuild(t, plain(1, 2, 3, 4, 5), []TaskEdge{
		{TaskID: 2, DependsOnTaskID: 1, Type: Success},
		{TaskID: 3, DependsOnTaskID: 1, Type: Failure},
		{TaskID: 4, DependsOnTaskID: 1, Type: Always},
		{TaskID: 5, DependsOnTaskID: 1, Type: HasData},
	})
}

func TestUnsatisfiableSettledUpstream(t *testing.T) {
	// "A dependency is lost for good only when its upstream is settled
	// (SUCCESS or SKIPPED) and does not satisfy it."
	cases := []struct {
		name          string
		upstream      TaskRunState
		failuresFinal bool
		want          []int
	}{
		// SUCCESS with rows satisfies SUCCESS, ALWAYS, HAS_DATA; loses FAILURE.
		{"SUCCESS with rows loses only the FAILURE edge", succeeded(4), false, []int{3}},
		// Without rows, HAS_DATA is lost too.
		{"SUCCESS without rows loses FAILURE and HAS_DATA edges", succeeded(0), false, []int{3, 5}},
		{"SUCCESS with rows_written None stands on target_count", TaskRunState{Status: ptr(StatusSuccess), TargetCount: ptr[int64](2)}, false, []int{3}},
		// SKIPPED satisfies only ALWAYS.
		{"SKIPPED loses all but the ALWAYS edge", ran(StatusSkipped), false, []int{2, 3, 5}},
		// "a FAILED upstream may still succeed on a retry"
		{"FAILED may still succeed on a retry", ran(StatusFailed), false, nil},
		// "unless failures_final says no retry will come in this run"
		{"FAILED is settled when failures are final", ran(StatusFailed), true, []int{2, 5}},
		{"FAILED having written rows still loses HAS_DATA when final", TaskRunState{Status: ptr(StatusFailed), RowsWritten: ptr[int64](9)}, true, []int{2, 5}},
		// "an IN-PROGRESS one has not finished"
		{"IN_PROGRESS has not finished", ran(StatusInProgress), false, nil},
		{"IN_PROGRESS has not finished even when failures are final", ran(StatusInProgress), true, nil},
		{"a not-run upstream may still end any way", TaskRunState{}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			equalInts(t, "Unsatisfiable", fan(t).Unsatisfiable(RunState{1: c.upstream}, c.failuresFinal), c.want)
		})
	}
}

func TestUnsatisfiableOnlyTasksWithNoStatus(t *testing.T) {
	// "Only tasks with no status are reported; a task that already ran keeps
	// its status."
	g := mustBuild(t, plain(1, 2), []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}})
	for _, s := range []TaskStatus{StatusFailed, StatusInProgress, StatusSuccess, StatusSkipped} {
		t.Run(s.String(), func(t *testing.T) {
			equalInts(t, "Unsatisfiable", g.Unsatisfiable(RunState{1: ran(StatusSkipped), 2: ran(s)}, true), nil)
		})
	}
	t.Run("row without status", func(t *testing.T) {
		equalInts(t, "Unsatisfiable", g.Unsatisfiable(RunState{1: ran(StatusSkipped), 2: {}}, false), []int{2})
	})
}

func TestUnsatisfiableFixedPointAcrossChain(t *testing.T) {
	// "Skipping a task settles it, which can doom its own dependents, so the
	// search repeats until nothing changes."
	// 2 waits on 1 (SUCCESS), 3 on 2, 4 on 3, and 5 on 4 with ALWAYS. 1 failed
	// for good: 2 is lost, so skipped; that loses 3, then 4. A SKIPPED 4
	// satisfies 5's ALWAYS edge, so 5 can still run. Supplied backwards, so
	// one pass in supplied order would not reach the end.
	g := mustBuild(t, plain(5, 4, 3, 2, 1), []TaskEdge{
		{TaskID: 5, DependsOnTaskID: 4, Type: Always},
		{TaskID: 4, DependsOnTaskID: 3},
		{TaskID: 3, DependsOnTaskID: 2},
		{TaskID: 2, DependsOnTaskID: 1},
	})
	equalInts(t, "Unsatisfiable(final)", g.Unsatisfiable(RunState{1: ran(StatusFailed)}, true), []int{2, 3, 4})
	equalInts(t, "Unsatisfiable(not final)", g.Unsatisfiable(RunState{1: ran(StatusFailed)}, false), nil)
	// Once the caller records 2, 3, 4 SKIPPED nothing more is found, and 5 is
	// ready.
	rs := RunState{1: ran(StatusFailed), 2: ran(StatusSkipped), 3: ran(StatusSkipped), 4: ran(StatusSkipped)}
	equalInts(t, "Unsatisfiable(after skipping)", g.Unsatisfiable(rs, true), nil)
	equalInts(t, "Ready(after skipping)", g.Ready(rs, nil), []int{1, 5})
}

func TestUnsatisfiableRunConditions(t *testing.T) {
	// "A task is unsatisfiable when even if every still-possible dependency
	// were satisfied it could not reach its required count."
	g := conditionsGraph(t)
	skip := ran(StatusSkipped)
	cases := []struct {
		name string
		rs   RunState
		want []int
	}{
		{"one lost dooms ALL only", RunState{1: skip}, []int{10}},
		{"two lost doom N=2 too", RunState{1: skip, 2: skip}, []int{10, 12}},
		{"all lost doom ANY too", RunState{1: skip, 2: skip, 3: skip}, []int{10, 11, 12}},
		{"SUCCESS upstreams lose nothing", RunState{1: succeeded(0), 2: succeeded(0), 3: succeeded(0)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			equalInts(t, "Unsatisfiable", g.Unsatisfiable(c.rs, false), c.want)
		})
	}
	t.Run("ANY without dependencies is never unsatisfiable", func(t *testing.T) {
		g := mustBuild(t, []TaskNode{{ID: 1, RunCondition: Any}}, nil)
		equalInts(t, "Unsatisfiable", g.Unsatisfiable(nil, true), nil)
	})
}

func TestUnsatisfiableCrossPipelineAlwaysPossible(t *testing.T) {
	// "Cross-pipeline dependencies always count as still possible."
	// 2 is ANY over 1 and one cross-pipeline edge; 3 is ALL over the same.
	g := mustBuild(t, []TaskNode{
		{ID: 1},
		{ID: 2, RunCondition: Any, CrossPipelineEdgeCount: 1},
		{ID: 3, CrossPipelineEdgeCount: 1},
		{ID: 4, RunCondition: Any},
	}, []TaskEdge{{TaskID: 2, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 1}})
	// 1 skipped: 2 keeps its cross-pipeline edge (1 of 1 possible); 3 needs
	// 2 and has 1; 4, the same as 2 without a cross-pipeline edge, is lost.
	equalInts(t, "Unsatisfiable", g.Unsatisfiable(RunState{1: ran(StatusSkipped)}, true), []int{3, 4})
}

func TestUnsatisfiableIsSorted(t *testing.T) {
	// "Return the sorted ids of the never-run tasks that can never become
	// ready in this run."
	g := mustBuild(t, plain(1, 9, 4, 7), []TaskEdge{
		{TaskID: 9, DependsOnTaskID: 1}, {TaskID: 4, DependsOnTaskID: 1}, {TaskID: 7, DependsOnTaskID: 1},
	})
	equalInts(t, "Unsatisfiable", g.Unsatisfiable(RunState{1: ran(StatusSkipped)}, false), []int{4, 7, 9})
}
