// Package graph is pure: the same-pipeline task dependency graph of seed 002
// (validation, waves, readiness and dead ends) and the model lineage DAG. It
// does no I/O.
package graph

// RunCondition says how many of a task's dependencies must be satisfied
// before it runs. The zero value is All, the default.
type RunCondition int

// The run conditions of seed 002.
const (
	All RunCondition = iota
	Any
	N
)

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

// The four edge types of seed 002. The zero value is Success.
const (
	Success DependencyType = iota
	Failure
	Always
	HasData
)

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
