package graph

import "testing"

func TestTaskNodeZeroRunConditionIsAll(t *testing.T) {
	// "run_condition is None for ALL, the default."
	var n TaskNode
	if n.RunCondition != All {
		t.Fatalf("zero RunCondition = %v, want ALL", n.RunCondition)
	}
	g := mustBuild(t, []TaskNode{{ID: 1}, {ID: 2}, {ID: 3, CrossPipelineEdgeCount: 1}},
		[]TaskEdge{{TaskID: 3, DependsOnTaskID: 1}, {TaskID: 3, DependsOnTaskID: 2}})
	if got := g.RequiredEdgeCount(3); got != 3 {
		t.Errorf("RequiredEdgeCount(3) under the default = %d, want all 3", got)
	}
}

func TestWroteRows(t *testing.T) {
	// "rows_written is what the attempt inserted, updated or deleted; None on a
	// row recorded before it was kept, where target_count stands in for it."
	cases := []struct {
		name   string
		rows   *int64
		target *int64
		want   bool
	}{
		{"rows written positive", ptr[int64](3), nil, true},
		{"rows written zero", ptr[int64](0), nil, false},
		{"rows written negative", ptr[int64](-1), nil, false},
		{"rows written zero wins over target count", ptr[int64](0), ptr[int64](9), false},
		{"rows written positive wins over zero target count", ptr[int64](4), ptr[int64](0), true},
		{"rows written None: target count positive stands in", nil, ptr[int64](9), true},
		{"rows written None: target count zero stands in", nil, ptr[int64](0), false},
		{"neither recorded", nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := TaskRunState{Status: ptr(StatusSuccess), RowsWritten: c.rows, TargetCount: c.target}
			if got := s.WroteRows(); got != c.want {
				t.Errorf("WroteRows() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestTaskStatusTerminal(t *testing.T) {
	// ALWAYS: "terminal (SUCCESS, FAILED or SKIPPED)".
	for s, want := range map[TaskStatus]bool{
		StatusSuccess: true, StatusFailed: true, StatusSkipped: true, StatusInProgress: false,
	} {
		if got := s.Terminal(); got != want {
			t.Errorf("%v.Terminal() = %v, want %v", s, got, want)
		}
	}
}

func TestStrings(t *testing.T) {
	cases := []struct{ got, want string }{
		{All.String(), "ALL"}, {Any.String(), "ANY"}, {N.String(), "N"}, {RunCondition(9).String(), "UNKNOWN"},
		{Success.String(), "SUCCESS"}, {Failure.String(), "FAILURE"}, {Always.String(), "ALWAYS"},
		{HasData.String(), "HAS_DATA"}, {DependencyType(9).String(), "UNKNOWN"},
		{StatusSuccess.String(), "SUCCESS"}, {StatusFailed.String(), "FAILED"}, {StatusSkipped.String(), "SKIPPED"},
		{StatusInProgress.String(), "IN_PROGRESS"}, {TaskStatus(9).String(), "UNKNOWN"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("String() = %q, want %q", c.got, c.want)
		}
	}
}
