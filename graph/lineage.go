package graph

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Lineage is the model lineage DAG: which managed models read which. It is
// what `run --downstream` expands, what `why` walks upstream for a root
// cause, and what orders models that share no pipeline. Names a model reads
// that are not managed models (files, APIs, external tables) are kept as leaf
// inputs, so their readers can be found, but they are not models. A Lineage
// is immutable; its methods return copies.
type Lineage struct {
	models  []string
	isModel map[string]bool
	// reads maps a model to the distinct names it reads, as given.
	reads map[string][]string
	// upstream maps a model to the distinct models it reads, sorted.
	upstream map[string][]string
	// downstream maps any name to the distinct models reading it, sorted.
	downstream map[string][]string
	externals  []string
	topo       []string
}

// NewLineage builds the lineage of models, where upstream maps a model to the
// names it reads.
//
// It returns a GraphError for an empty or duplicate model name, an empty
// upstream name, or upstream given for a name that is not among models; and
// a LineageCycleError when models read each other in a loop, a model reading
// itself included. Reading one name twice is harmless and counts once.
func NewLineage(models []string, upstream map[string][]string) (*Lineage, error) {
	l := &Lineage{
		models:     slices.Clone(models),
		isModel:    make(map[string]bool, len(models)),
		reads:      make(map[string][]string, len(upstream)),
		upstream:   make(map[string][]string, len(upstream)),
		downstream: map[string][]string{},
	}
	for _, m := range models {
		if m == "" {
			return nil, &GraphError{Msg: "empty model name"}
		}
		if l.isModel[m] {
			return nil, &GraphError{Msg: fmt.Sprintf("duplicate model %q", m)}
		}
		l.isModel[m] = true
	}
	var strays []string
	for m := range upstream {
		if !l.isModel[m] {
			strays = append(strays, m)
		}
	}
	if len(strays) > 0 {
		// Name the smallest, so the error does not vary with map order.
		return nil, &GraphError{Msg: fmt.Sprintf("upstream given for %q, which is not a model", slices.Min(strays))}
	}
	externals := map[string]bool{}
	for _, m := range l.models {
		for _, u := range upstream[m] {
			if u == "" {
				return nil, &GraphError{Msg: fmt.Sprintf("model %q reads an empty name", m)}
			}
			if slices.Contains(l.reads[m], u) {
				continue
			}
			l.reads[m] = append(l.reads[m], u)
			l.downstream[u] = append(l.downstream[u], m)
			if l.isModel[u] {
				l.upstream[m] = append(l.upstream[m], u)
			} else {
				externals[u] = true
			}
		}
		slices.Sort(l.upstream[m])
	}
	for _, d := range l.downstream {
		slices.Sort(d)
	}
	l.externals = slices.Sorted(maps.Keys(externals))

	if cycle := l.findCycle(); cycle != nil {
		return nil, &LineageCycleError{Cycle: cycle}
	}
	l.topo = l.kahn()
	return l, nil
}

// findCycle returns the first loop met by a depth-first walk over the models
// in supplied order, following each model's reads in the order given, or nil.
func (l *Lineage) findCycle() []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make(map[string]int, len(l.models))
	var path []string
	var visit func(m string) []string
	visit = func(m string) []string {
		state[m] = onPath
		path = append(path, m)
		for _, u := range l.reads[m] {
			if !l.isModel[u] {
				continue
			}
			switch state[u] {
			case onPath:
				return slices.Clone(path[slices.Index(path, u):])
			case unvisited:
				if c := visit(u); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[m] = done
		return nil
	}
	for _, m := range l.models {
		if state[m] == unvisited {
			if c := visit(m); c != nil {
				return c
			}
		}
	}
	return nil
}

// kahn orders the acyclic model graph upstream first, smallest name first
// among the models free to go next.
func (l *Lineage) kahn() []string {
	indegree := make(map[string]int, len(l.models))
	var free []string
	for _, m := range l.models {
		indegree[m] = len(l.upstream[m])
		if indegree[m] == 0 {
			free = append(free, m)
		}
	}
	h := NewHeap(strings.Compare)
	h.Reset(free...)
	order := make([]string, 0, len(l.models))
	for h.Len() > 0 {
		m := h.Pop()
		order = append(order, m)
		for _, d := range l.downstream[m] {
			indegree[d]--
			if indegree[d] == 0 {
				h.Push(d)
			}
		}
	}
	return order
}

// Models returns the managed models in the order they were supplied.
func (l *Lineage) Models() []string {
	return slices.Clone(l.models)
}

// IsModel reports whether name is a managed model rather than an external
// input or an unknown name.
func (l *Lineage) IsModel(name string) bool {
	return l.isModel[name]
}

// Externals returns, sorted, the names models read that are not managed
// models: the lineage's leaf inputs.
func (l *Lineage) Externals() []string {
	return slices.Clone(l.externals)
}

// Upstream returns, sorted, the managed models that name reads directly.
// External inputs are left out: they have no state to wait on.
func (l *Lineage) Upstream(name string) []string {
	return slices.Clone(l.upstream[name])
}

// Downstream returns, sorted, the models that read name directly; name may be
// a model or an external input.
func (l *Lineage) Downstream(name string) []string {
	return slices.Clone(l.downstream[name])
}

// DownstreamClosure returns, sorted, every model that reads any of names
// directly or through others, leaving out names themselves: what a run with
// --downstream adds to the models it names.
func (l *Lineage) DownstreamClosure(names ...string) []string {
	return closure(names, l.downstream)
}

// UpstreamClosure returns, sorted, every managed model that any of names reads
// directly or through others, leaving out names themselves: where a root
// cause can lie.
func (l *Lineage) UpstreamClosure(names ...string) []string {
	return closure(names, l.upstream)
}

// TopologicalOrder returns every model after the models it reads. Kahn's
// algorithm breaks ties by name, so the order is the same on every call and
// every machine.
func (l *Lineage) TopologicalOrder() []string {
	return slices.Clone(l.topo)
}

// closure walks next from names and returns what it reaches, sorted, without
// names themselves.
func closure(names []string, next map[string][]string) []string {
	given := make(map[string]bool, len(names))
	for _, n := range names {
		given[n] = true
	}
	seen := map[string]bool{}
	queue := slices.Clone(names)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range next[n] {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		if !given[m] {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}
