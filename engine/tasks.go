package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
)

// Task is a model's task in its pipeline, with its stable integer id.
type Task struct {
	ID    int
	Model string
}

// TaskEdge is a same-pipeline dependency between two models' tasks, by name.
type TaskEdge struct {
	Task, DependsOn string
	Type            graph.DependencyType
	// Implicit marks a SUCCESS edge added for a gated upstream.
	Implicit bool
}

// CrossEdge is a dependency on a task outside the pipeline (or on a model the
// spec does not define): counted by the run condition, settled at run time by
// the contract gate.
type CrossEdge struct {
	Task, DependsOn string
	// Pipeline is the upstream's pipeline, empty when the spec lacks it.
	Pipeline string
	Type     graph.DependencyType
	// Implicit marks the edge of a gated upstream (no after: entry).
	Implicit bool
}

// PipelineGraph is one pipeline's tasks and their dependency graph.
type PipelineGraph struct {
	Name  string
	Tasks []Task
	Edges []TaskEdge
	Cross []CrossEdge
	Graph *graph.DependencyGraph
	byID  map[int]string
}

// ModelName returns the model whose task has id, or "" when it is not here.
func (p *PipelineGraph) ModelName(id int) string { return p.byID[id] }

// AssignTaskIDs gives every model of the spec a task id: the id the store
// already knows for it when there is one, otherwise the next free integer,
// in spec order. Ids are stable, so a run log keeps meaning the same task.
func AssignTaskIDs(sp *spec.Spec, known map[string]int) map[string]int {
	ids := make(map[string]int, len(sp.Models))
	next := 0
	for _, id := range known {
		next = max(next, id)
	}
	for _, m := range sp.Models {
		if id, ok := known[m.Name]; ok {
			ids[m.Name] = id
			continue
		}
		next++
		ids[m.Name] = next
	}
	return ids
}

// modelEdges derives a model's dependencies as spec.ModelEdges does, as
// the engine's edge types.
func modelEdges(sp *spec.Spec, m *spec.Model) (same []TaskEdge, cross []CrossEdge) {
	ss, cs := spec.ModelEdges(sp, m)
	for _, e := range ss {
		same = append(same, TaskEdge{Task: e.Task, DependsOn: e.DependsOn, Type: e.Type, Implicit: e.Implicit})
	}
	for _, e := range cs {
		cross = append(cross, CrossEdge{Task: e.Task, DependsOn: e.DependsOn, Pipeline: e.Pipeline, Type: e.Type, Implicit: e.Implicit})
	}
	return same, cross
}

// PipelineGraphs builds the dependency graph of every pipeline of the spec,
// upstream pipelines first (then by name), with task ids from ids (see
// AssignTaskIDs).
func PipelineGraphs(sp *spec.Spec, ids map[string]int) ([]*PipelineGraph, error) {
	byName := map[string]*PipelineGraph{}
	var order []string
	for _, m := range sp.Models {
		p := byName[m.Pipeline]
		if p == nil {
			p = &PipelineGraph{Name: m.Pipeline, byID: map[int]string{}}
			byName[m.Pipeline] = p
			order = append(order, m.Pipeline)
		}
		p.Tasks = append(p.Tasks, Task{ID: ids[m.Name], Model: m.Name})
		p.byID[ids[m.Name]] = m.Name
		same, cross := modelEdges(sp, m)
		p.Edges = append(p.Edges, same...)
		p.Cross = append(p.Cross, cross...)
	}
	order = pipelineOrder(order, byName)
	out := make([]*PipelineGraph, 0, len(order))
	var errs []error
	for _, name := range order {
		p := byName[name]
		nodes := make([]graph.TaskNode, 0, len(p.Tasks))
		for _, t := range p.Tasks {
			m := sp.Model(t.Model)
			crossCount := 0
			for _, c := range p.Cross {
				if c.Task == t.Model {
					crossCount++
				}
			}
			nodes = append(nodes, graph.TaskNode{ID: t.ID, RunCondition: m.RunCondition,
				RunConditionCount: m.RunConditionCount, CrossPipelineEdgeCount: crossCount})
		}
		edges := make([]graph.TaskEdge, 0, len(p.Edges))
		for _, e := range p.Edges {
			edges = append(edges, graph.TaskEdge{TaskID: ids[e.Task], DependsOnTaskID: ids[e.DependsOn], Type: e.Type})
		}
		g, err := graph.Build(nodes, edges)
		if err != nil {
			errs = append(errs, &PipelineError{Pipeline: name, Err: err, names: p.byID})
			continue
		}
		p.Graph = g
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// PipelineError is a pipeline whose tasks cannot form a graph; its message
// names models instead of task ids.
type PipelineError struct {
	Pipeline string
	Err      error
	names    map[int]string
}

func (e *PipelineError) Error() string {
	var ce *graph.CycleError
	if errors.As(e.Err, &ce) {
		names := make([]string, 0, len(ce.Cycle)+1)
		for _, id := range ce.Cycle {
			names = append(names, e.names[id])
		}
		if len(names) > 0 {
			names = append(names, names[0])
		}
		return fmt.Sprintf("pipeline %s: the task dependencies form a cycle, so no order can run them: %s",
			e.Pipeline, strings.Join(names, " → "))
	}
	return fmt.Sprintf("pipeline %s: %v", e.Pipeline, e.Err)
}

func (e *PipelineError) Unwrap() error { return e.Err }

// CycleModels names the models of a cycle in the order followed, or nil when
// the error is not a cycle.
func (e *PipelineError) CycleModels() []string {
	var ce *graph.CycleError
	if !errors.As(e.Err, &ce) {
		return nil
	}
	names := make([]string, len(ce.Cycle))
	for i, id := range ce.Cycle {
		names[i] = e.names[id]
	}
	return names
}

// pipelineOrder sorts pipelines so that one whose tasks depend on another's
// comes after it, the order a reader follows data in; ties, and pipelines
// that depend on each other, go by name.
func pipelineOrder(names []string, byName map[string]*PipelineGraph) []string {
	sort.Strings(names)
	needs := map[string]map[string]bool{}
	for _, n := range names {
		needs[n] = map[string]bool{}
		for _, c := range byName[n].Cross {
			if c.Pipeline != "" && c.Pipeline != n {
				needs[n][c.Pipeline] = true
			}
		}
	}
	placed := map[string]bool{}
	out := make([]string, 0, len(names))
	for len(out) < len(names) {
		progress := false
		for _, n := range names {
			if placed[n] {
				continue
			}
			ready := true
			for dep := range needs[n] {
				if !placed[dep] {
					ready = false
				}
			}
			if ready {
				placed[n], progress = true, true
				out = append(out, n)
				break
			}
		}
		if !progress { // pipelines that depend on each other
			for _, n := range names {
				if !placed[n] {
					placed[n] = true
					out = append(out, n)
					break
				}
			}
		}
	}
	return out
}

// specLineage is the model lineage DAG of the spec: each model reads the model
// sources it declares (gated or not), which is what closures and cycle checks
// follow.
func specLineage(sp *spec.Spec) (*graph.Lineage, error) {
	names := make([]string, len(sp.Models))
	reads := map[string][]string{}
	for i, m := range sp.Models {
		names[i] = m.Name
		for _, src := range m.Upstream {
			if src.Kind == spec.KindModel {
				reads[m.Name] = append(reads[m.Name], src.Name)
			}
		}
	}
	return graph.NewLineage(names, reads)
}
