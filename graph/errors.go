package graph

import (
	"fmt"
	"slices"
	"strings"
)

// GraphError reports input that does not form a valid graph: CFG_ rows that
// Build rejects, or a model list that NewLineage rejects. The Engine DB's
// CHECK constraints reject most of these on insert; the graph checks them
// again so it is safe to use without one.
//
// Every more specific error of this package (SelfDependencyError,
// UnknownTaskError, CycleError, LineageCycleError) unwraps to a GraphError,
// so errors.As(err, new(*GraphError)) catches them all.
type GraphError struct {
	Msg string
}

// Error prefixes the message with the package name.
func (e *GraphError) Error() string { return "graph: " + e.Msg }

// SelfDependencyError reports a task that depends on itself: it could never
// start, and the edge is always a typo in the CFG_ rows.
type SelfDependencyError struct {
	TaskID int
}

func (e *SelfDependencyError) msg() string {
	return fmt.Sprintf("task %d depends on itself", e.TaskID)
}

// Error prefixes the message with the package name.
func (e *SelfDependencyError) Error() string { return "graph: " + e.msg() }

// Unwrap makes a SelfDependencyError a GraphError for errors.As.
func (e *SelfDependencyError) Unwrap() error { return &GraphError{Msg: e.msg()} }

// UnknownTaskError reports an edge that names a task id that is not among the
// graph's tasks. TaskID is the unknown id; Edge is the offending row.
type UnknownTaskError struct {
	TaskID int
	Edge   TaskEdge
}

func (e *UnknownTaskError) msg() string {
	return fmt.Sprintf("edge %d -> %d names unknown task %d", e.Edge.TaskID, e.Edge.DependsOnTaskID, e.TaskID)
}

// Error prefixes the message with the package name.
func (e *UnknownTaskError) Error() string { return "graph: " + e.msg() }

// Unwrap makes an UnknownTaskError a GraphError for errors.As.
func (e *UnknownTaskError) Unwrap() error { return &GraphError{Msg: e.msg()} }

// CycleError reports dependency edges that form a cycle, so no order can run
// them.
//
// Cycle keeps the cycle's task ids in the order they were followed: each id
// waits on the next, and the last waits on the first (which is not repeated).
// Build follows tasks in the order supplied and each task's dependencies
// in edge order, so the same rows always report the same cycle.
type CycleError struct {
	Cycle []int
}

func (e *CycleError) msg() string {
	parts := make([]string, 0, len(e.Cycle)+1)
	for _, id := range e.Cycle {
		parts = append(parts, fmt.Sprint(id))
	}
	if len(e.Cycle) > 0 {
		parts = append(parts, fmt.Sprint(e.Cycle[0]))
	}
	return "dependency cycle: " + strings.Join(parts, " -> ")
}

// Error prefixes the message with the package name.
func (e *CycleError) Error() string { return "graph: " + e.msg() }

// Unwrap makes a CycleError a GraphError for errors.As.
func (e *CycleError) Unwrap() error { return &GraphError{Msg: e.msg()} }

// LineageCycleError reports models that read each other in a loop, a model
// reading itself included: no model of the loop could ever load first.
//
// Cycle keeps the model names in the order they were followed: each reads the
// next, and the last reads the first (which is not repeated).
type LineageCycleError struct {
	Cycle []string
}

func (e *LineageCycleError) msg() string {
	parts := slices.Clone(e.Cycle)
	if len(parts) > 0 {
		parts = append(parts, parts[0])
	}
	return "models read each other in a loop: " + strings.Join(parts, " -> ")
}

// Error prefixes the message with the package name.
func (e *LineageCycleError) Error() string { return "graph: " + e.msg() }

// Unwrap makes a LineageCycleError a GraphError for errors.As.
func (e *LineageCycleError) Unwrap() error { return &GraphError{Msg: e.msg()} }
