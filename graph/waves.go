package graph

import "slices"

// Waves returns the tasks in static waves: each wave depends only on earlier
// waves, and a task sits one wave after its latest upstream.
//
// This is the guaranteed-safe order, not the earliest one: a task comes after
// every upstream, even when its Any or N condition could let it start sooner.
// `bollhav graph` prints it, generated DAGs chain it, and operator repairs use
// its topological order. Cross-pipeline edges play no part in it. Task ids
// within a wave are sorted.
func (g *DependencyGraph) Waves() [][]int {
	out := make([][]int, len(g.waves))
	for i, w := range g.waves {
		out[i] = slices.Clone(w)
	}
	return out
}

// computeWaves layers the acyclic graph by longest path from a task without
// same-pipeline dependencies.
func (g *DependencyGraph) computeWaves() [][]int {
	level := make(map[int]int, len(g.ids))
	var depth func(id int) int
	depth = func(id int) int {
		if l, ok := level[id]; ok {
			return l
		}
		l := 0
		for _, e := range g.deps[id] {
			l = max(l, depth(e.DependsOnTaskID)+1)
		}
		level[id] = l
		return l
	}
	var waves [][]int
	for _, id := range g.ids {
		l := depth(id)
		for len(waves) <= l {
			waves = append(waves, nil)
		}
		waves[l] = append(waves[l], id)
	}
	for _, w := range waves {
		slices.Sort(w)
	}
	return waves
}
