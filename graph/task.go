// Package graph is pure: the same-pipeline task dependency graph of the
// design (validation, waves, readiness and dead ends; docs/design.md, The
// task graph) and the model lineage DAG. It does no I/O.
package graph

// RunCondition says how many of a task's dependencies must be satisfied
// before it runs. The zero value is All, the default.
type RunCondition int

// The run conditions of the task graph.
const (
	All RunCondition = iota
	Any
	N
)

// String returns the CFG_TASKS spelling: ALL, ANY or N.
func (c RunCondition) String() string {
	switch c {
	case All:
		return "ALL"
	case Any:
		return "ANY"
	case N:
		return "N"
	}
	return "UNKNOWN"
}

// DependencyType is the kind of a dependency edge: which upstream outcome
// satisfies it.
type DependencyType int

// The four edge types of the task graph. The zero value is Success.
const (
	Success DependencyType = iota
	Failure
	Always
	HasData
)

// String returns the CFG_TASK_DEPENDENCY spelling, such as HAS_DATA.
func (t DependencyType) String() string {
	switch t {
	case Success:
		return "SUCCESS"
	case Failure:
		return "FAILURE"
	case Always:
		return "ALWAYS"
	case HasData:
		return "HAS_DATA"
	}
	return "UNKNOWN"
}

// TaskStatus is a task's outcome under the active run (AUD_TASK_RUN_LOG).
type TaskStatus int

// The statuses a run log row can hold.
const (
	StatusSuccess TaskStatus = iota
	StatusFailed
	StatusSkipped
	StatusInProgress
)

// String returns the AUD_TASK_RUN_LOG spelling, such as IN_PROGRESS.
func (s TaskStatus) String() string {
	switch s {
	case StatusSuccess:
		return "SUCCESS"
	case StatusFailed:
		return "FAILED"
	case StatusSkipped:
		return "SKIPPED"
	case StatusInProgress:
		return "IN_PROGRESS"
	}
	return "UNKNOWN"
}

// Terminal reports whether the status ends an attempt: SUCCESS, FAILED or
// SKIPPED. An ALWAYS edge waits for exactly this, and an upstream that is not
// terminal keeps a cross-pipeline assumption from starting its dependents.
func (s TaskStatus) Terminal() bool {
	return s == StatusSuccess || s == StatusFailed || s == StatusSkipped
}

// TaskNode is a CFG_TASKS row, reduced to what the graph needs.
//
// The zero RunCondition is All, the default. RunConditionCount is read only
// under N; under All and Any it is ignored, as the CFG_ row may carry a stale
// value there. CrossPipelineEdgeCount is how many of the task's dependencies
// are on tasks in other pipelines: those edges stay out of the graph, because
// they have no place in the pipeline's own order, but the run condition
// counts them too.
type TaskNode struct {
	ID                     int
	RunCondition           RunCondition
	RunConditionCount      int
	CrossPipelineEdgeCount int
}

// TaskEdge is a same-pipeline CFG_TASK_DEPENDENCY row: TaskID waits on
// DependsOnTaskID, and Type says which outcome of DependsOnTaskID satisfies
// the wait.
type TaskEdge struct {
	TaskID          int
	DependsOnTaskID int
	Type            DependencyType
}

// TaskRunState is what one dependency edge needs from its upstream's
// AUD_TASK_RUN_LOG row.
//
// Status is nil while the task has no row under the active run. RowsWritten
// is what the attempt inserted, updated or deleted; it is nil on a row
// recorded before it was kept, and then TargetCount stands in for it.
type TaskRunState struct {
	Status      *TaskStatus
	RowsWritten *int64
	TargetCount *int64
}

// WroteRows reports whether the attempt wrote rows, as a HAS_DATA dependency
// asks: RowsWritten > 0, or TargetCount > 0 on an older row without
// RowsWritten. With neither recorded it reports false, since nothing shows
// that data arrived.
func (s TaskRunState) WroteRows() bool {
	if s.RowsWritten != nil {
		return *s.RowsWritten > 0
	}
	return s.TargetCount != nil && *s.TargetCount > 0
}

// RunState is each task's state under the active run, by task id. A missing
// task, like one whose Status is nil, has not run.
type RunState = map[int]TaskRunState
