package graph

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomCase is a small random DAG with a run state and cross-pipeline
// confirmations.
type randomCase struct {
	tasks []TaskNode
	edges []TaskEdge
	// parallel is whether some pair of tasks has more than one edge (of
	// different types).
	parallel bool
	rs       RunState
	cross    map[int]int
}

var edgeTypes = []DependencyType{Success, Failure, Always, HasData}

func randomDAG(r *rand.Rand) randomCase {
	n := 1 + r.IntN(7)
	// Distinct ids, not 0..n-1, supplied in an order unrelated to the edges.
	ids := r.Perm(20)[:n]
	// order[i] may only wait on order[j] with j < i, so the graph is acyclic.
	order := slices.Clone(ids)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

	var c randomCase
	same := map[int]int{}
	for i := range order {
		for j := range i {
			if r.IntN(3) != 0 {
				continue
			}
			types := r.Perm(len(edgeTypes))
			k := 1
			if r.IntN(8) == 0 {
				k = 2
				c.parallel = true
			}
			for _, ti := range types[:k] {
				c.edges = append(c.edges, TaskEdge{TaskID: order[i], DependsOnTaskID: order[j], Type: edgeTypes[ti]})
				same[order[i]]++
			}
		}
	}
	r.Shuffle(len(c.edges), func(i, j int) { c.edges[i], c.edges[j] = c.edges[j], c.edges[i] })

	for _, id := range ids {
		t := TaskNode{ID: id}
		if r.IntN(3) == 0 {
			t.CrossPipelineEdgeCount = 1 + r.IntN(2)
		}
		total := same[id] + t.CrossPipelineEdgeCount
		switch r.IntN(3) {
		case 1:
			t.RunCondition = Any
		case 2:
			if total > 0 {
				t.RunCondition = N
				t.RunConditionCount = 1 + r.IntN(total)
			}
		}
		c.tasks = append(c.tasks, t)
	}

	c.rs = RunState{}
	for _, id := range ids {
		switch r.IntN(7) {
		case 0: // no row
		case 1:
			c.rs[id] = TaskRunState{}
		case 2:
			c.rs[id] = ran(StatusFailed)
		case 3:
			c.rs[id] = ran(StatusSkipped)
		case 4:
			c.rs[id] = ran(StatusInProgress)
		default:
			s := TaskRunState{Status: ptr(StatusSuccess)}
			switch r.IntN(4) {
			case 0:
				s.RowsWritten = ptr(int64(r.IntN(2)))
			case 1:
				s.TargetCount = ptr(int64(r.IntN(2)))
			case 2:
				s.RowsWritten = ptr(int64(r.IntN(2)))
				s.TargetCount = ptr(int64(r.IntN(2)))
			}
			c.rs[id] = s
		}
	}
	c.cross = map[int]int{}
	for _, t := range c.tasks {
		if r.IntN(2) == 0 {
			c.cross[t.ID] = r.IntN(t.CrossPipelineEdgeCount + 2)
		}
	}
	return c
}

// buildRandomDAG draws case iter's random DAG and builds it, failing the
// test when Build refuses it.
func buildRandomDAG(t *testing.T, r *rand.Rand, iter int) (randomCase, *DependencyGraph) {
	t.Helper()
	c := randomDAG(r)
	g, err := Build(c.tasks, c.edges)
	if err != nil {
		t.Fatalf("case %d: Build on a DAG: %v", iter, err)
	}
	return c, g
}

// edgeMet is the design's edge table, written out independently of the package.
func edgeMet(t DependencyType, up TaskRunState) bool {
	if up.Status == nil {
		return false
	}
	s := *up.Status
	switch t {
	case Success:
		return s == StatusSuccess
	case Failure:
		return s == StatusFailed
	case Always:
		return s == StatusSuccess || s == StatusFailed || s == StatusSkipped
	case HasData:
		if s != StatusSuccess {
			return false
		}
		if up.RowsWritten != nil {
			return *up.RowsWritten > 0
		}
		return up.TargetCount != nil && *up.TargetCount > 0
	}
	return false
}

func requiredOf(t TaskNode, total int) int {
	switch t.RunCondition {
	case Any:
		return min(total, 1)
	case N:
		return t.RunConditionCount
	}
	return total
}

// bruteDoomed returns the never-run tasks that can never become ready, found
// by enumerating every joint outcome of each task's direct upstreams.
//
// An upstream's reachable outcomes: settled tasks keep their own; a task
// found doomed ends SKIPPED; a never-run one may end SUCCESS (with or without
// rows), FAILED or SKIPPED; an IN_PROGRESS one, or a FAILED one that may be
// retried, may end SUCCESS (with or without rows) or FAILED. Cross-pipeline
// edges are all assumed confirmed. A task is doomed when no joint outcome
// reaches its required count; the search repeats until nothing changes.
func bruteDoomed(c randomCase, failuresFinal bool) []int {
	succ := func(rows int64) TaskRunState { return TaskRunState{Status: ptr(StatusSuccess), RowsWritten: ptr(rows)} }
	doomed := map[int]bool{}
	reach := func(id int) []TaskRunState {
		if doomed[id] {
			return []TaskRunState{ran(StatusSkipped)}
		}
		st := c.rs[id]
		if st.Status == nil {
			return []TaskRunState{succ(1), succ(0), ran(StatusFailed), ran(StatusSkipped)}
		}
		switch *st.Status {
		case StatusInProgress:
			return []TaskRunState{succ(1), succ(0), ran(StatusFailed)}
		case StatusFailed:
			if !failuresFinal {
				return []TaskRunState{succ(1), succ(0), ran(StatusFailed)}
			}
		}
		return []TaskRunState{st}
	}
	for changed := true; changed; {
		changed = false
		for _, t := range c.tasks {
			if c.rs[t.ID].Status != nil || doomed[t.ID] {
				continue
			}
			var edges []TaskEdge
			var ups []int
			for _, e := range c.edges {
				if e.TaskID == t.ID {
					edges = append(edges, e)
					if !slices.Contains(ups, e.DependsOnTaskID) {
						ups = append(ups, e.DependsOnTaskID)
					}
				}
			}
			required := requiredOf(t, len(edges)+t.CrossPipelineEdgeCount)
			options := make([][]TaskRunState, len(ups))
			for i, u := range ups {
				options[i] = reach(u)
			}
			best := -1
			choice := make([]int, len(ups))
			for {
				outcome := map[int]TaskRunState{}
				for i, u := range ups {
					outcome[u] = options[i][choice[i]]
				}
				met := t.CrossPipelineEdgeCount
				for _, e := range edges {
					if edgeMet(e.Type, outcome[e.DependsOnTaskID]) {
						met++
					}
				}
				best = max(best, met)
				// Next combination, odometer style.
				i := 0
				for ; i < len(ups); i++ {
					choice[i]++
					if choice[i] < len(options[i]) {
						break
					}
					choice[i] = 0
				}
				if i == len(ups) {
					break
				}
			}
			if best < required {
				doomed[t.ID] = true
				changed = true
			}
		}
	}
	return slices.Sorted(maps.Keys(doomed))
}

func isSubset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func TestPropertiesOnRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 719158))
	for iter := range 600 {
		c, g := buildRandomDAG(t, r, iter)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("case %d (tasks %+v, edges %+v, rs %v, cross %v): "+format,
				append([]any{iter, c.tasks, c.edges, c.rs, c.cross}, args...)...)
		}
		node := map[int]TaskNode{}
		for _, tn := range c.tasks {
			node[tn.ID] = tn
		}
		upstreams := func(id int) []TaskEdge {
			var out []TaskEdge
			for _, e := range c.edges {
				if e.TaskID == id {
					out = append(out, e)
				}
			}
			return out
		}

		// Waves partition TaskIDs, are sorted, and every task sits exactly one
		// wave after its latest upstream.
		waveOf := map[int]int{}
		for w, wave := range g.Waves() {
			if len(wave) == 0 || !slices.IsSorted(wave) {
				fail("wave %d = %v is empty or unsorted", w, wave)
			}
			for _, id := range wave {
				if _, dup := waveOf[id]; dup {
					fail("task %d in two waves", id)
				}
				waveOf[id] = w
			}
		}
		if len(waveOf) != len(c.tasks) {
			fail("waves hold %d tasks, the graph %d", len(waveOf), len(c.tasks))
		}
		for _, id := range g.TaskIDs() {
			latest := -1
			for _, e := range upstreams(id) {
				if waveOf[e.DependsOnTaskID] >= waveOf[id] {
					fail("task %d in wave %d, its upstream %d in wave %d", id, waveOf[id], e.DependsOnTaskID, waveOf[e.DependsOnTaskID])
				}
				latest = max(latest, waveOf[e.DependsOnTaskID])
			}
			if waveOf[id] != latest+1 {
				fail("task %d in wave %d, its latest upstream in wave %d", id, waveOf[id], latest)
			}
		}

		// DownstreamOf is reachability over reversed edges.
		for _, id := range g.TaskIDs() {
			reach := map[int]bool{}
			for changed := true; changed; {
				changed = false
				for _, e := range c.edges {
					if (e.DependsOnTaskID == id || reach[e.DependsOnTaskID]) && !reach[e.TaskID] {
						reach[e.TaskID] = true
						changed = true
					}
				}
			}
			want := slices.Sorted(maps.Keys(reach))
			if got := g.DownstreamOf(id); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				fail("DownstreamOf(%d) = %v, want %v", id, got, want)
			}
		}

		// Ready is exactly the design's rule.
		ready := g.Ready(c.rs, c.cross)
		if !slices.IsSorted(ready) {
			fail("Ready %v unsorted", ready)
		}
		for _, tn := range c.tasks {
			id := tn.ID
			ups := upstreams(id)
			sameMet, unfinished := 0, false
			for _, e := range ups {
				if edgeMet(e.Type, c.rs[e.DependsOnTaskID]) {
					sameMet++
				}
				if s := c.rs[e.DependsOnTaskID].Status; s == nil || *s == StatusInProgress {
					unfinished = true
				}
			}
			required := requiredOf(tn, len(ups)+tn.CrossPipelineEdgeCount)
			own := c.rs[id].Status
			want := own == nil || *own == StatusFailed
			var crossPtr *int
			if confirmed, ok := c.cross[id]; ok {
				crossPtr = &confirmed
				want = want && sameMet+min(confirmed, tn.CrossPipelineEdgeCount) >= required
			} else {
				want = want && (sameMet >= required ||
					(sameMet+tn.CrossPipelineEdgeCount >= required && !unfinished))
			}
			if got := slices.Contains(ready, id); got != want {
				fail("task %d ready = %v, want %v", id, got, want)
			}
			if want && g.SatisfiedEdgeCount(id, c.rs, crossPtr) < g.RequiredEdgeCount(id) {
				fail("ready task %d has %d satisfied of %d required", id, g.SatisfiedEdgeCount(id, c.rs, crossPtr), g.RequiredEdgeCount(id))
			}
		}

		for _, final := range []bool{false, true} {
			unsat := g.Unsatisfiable(c.rs, final)
			if !slices.IsSorted(unsat) {
				fail("Unsatisfiable(%v) %v unsorted", final, unsat)
			}
			for _, id := range unsat {
				if c.rs[id].Status != nil {
					fail("Unsatisfiable(%v) reports task %d, which has status %v", final, id, *c.rs[id].Status)
				}
				if slices.Contains(ready, id) {
					fail("task %d both ready and unsatisfiable(%v)", id, final)
				}
			}
			// Per-edge counting equals the joint enumeration when no upstream
			// has two edges onto one task; with such parallel edges it may
			// only be more hopeful (it counts both as possible at once, while
			// one outcome may satisfy only one), so it can only report less.
			brute := bruteDoomed(c, final)
			if c.parallel {
				if !isSubset(unsat, brute) {
					fail("Unsatisfiable(%v) = %v is not within the brute force %v", final, unsat, brute)
				}
			} else if !slices.Equal(unsat, brute) && len(unsat)+len(brute) > 0 {
				fail("Unsatisfiable(%v) = %v, brute force %v", final, unsat, brute)
			}
			// A fixed point: once recorded SKIPPED, nothing more is found.
			after := RunState{}
			for id, s := range c.rs {
				after[id] = s
			}
			for _, id := range unsat {
				after[id] = ran(StatusSkipped)
			}
			if again := g.Unsatisfiable(after, final); len(again) != 0 {
				fail("Unsatisfiable(%v) after skipping %v finds %v", final, unsat, again)
			}
		}
		// Final failures settle more, so they can only doom more.
		if !isSubset(g.Unsatisfiable(c.rs, false), g.Unsatisfiable(c.rs, true)) {
			fail("Unsatisfiable(false) %v not within Unsatisfiable(true) %v", g.Unsatisfiable(c.rs, false), g.Unsatisfiable(c.rs, true))
		}
	}
}

// TestRunsAlwaysFinish simulates whole runs from an empty run state: each
// round, tasks found unsatisfiable are recorded SKIPPED and every ready task
// runs once, ending SUCCESS or FAILED at random, with no retry (so failures
// are final) and every cross-pipeline edge confirmed. No task may be left
// without a status, none may run twice, and every task must start satisfied.
func TestRunsAlwaysFinish(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2))
	for iter := range 400 {
		c, g := buildRandomDAG(t, r, iter)
		cross := map[int]int{}
		if r.IntN(2) == 0 {
			// Half the runs confirm everything; the other half leave the gate
			// unevaluated, so the assumption and its rule are exercised.
			for _, tn := range c.tasks {
				cross[tn.ID] = tn.CrossPipelineEdgeCount
			}
		}
		rs := RunState{}
		for round := 0; ; round++ {
			if round > len(c.tasks)+1 {
				t.Fatalf("case %d: run does not finish: %v", iter, rs)
			}
			for _, id := range g.Unsatisfiable(rs, true) {
				rs[id] = ran(StatusSkipped)
			}
			// A FAILED task is ready again for a retry; this run has none.
			var ready []int
			for _, id := range g.Ready(rs, cross) {
				switch s := rs[id].Status; {
				case s == nil:
					ready = append(ready, id)
				case *s != StatusFailed:
					t.Fatalf("case %d: task %d ready again with status %v", iter, id, *s)
				}
			}
			if len(ready) == 0 {
				break
			}
			for _, id := range ready {
				var confirmed *int
				if n, ok := cross[id]; ok {
					confirmed = &n
				}
				if g.SatisfiedEdgeCount(id, rs, confirmed) < g.RequiredEdgeCount(id) {
					t.Fatalf("case %d: task %d started unsatisfied", iter, id)
				}
			}
			for _, id := range ready {
				if r.IntN(3) == 0 {
					rs[id] = ran(StatusFailed)
				} else {
					rs[id] = succeeded(int64(r.IntN(2)))
				}
			}
		}
		for _, id := range g.TaskIDs() {
			if rs[id].Status == nil {
				t.Fatalf("case %d: task %d left without a status: %v", iter, id, rs)
			}
		}
	}
}

func TestCycleErrorsOnRandomGraphs(t *testing.T) {
	// Closing a path back on itself must give a CycleError whose ids really
	// form a loop: each waits on the next, the last on the first.
	r := rand.New(rand.NewPCG(3, 5))
	for iter := range 300 {
		c := randomDAG(r)
		if len(c.edges) == 0 {
			continue
		}
		e := c.edges[r.IntN(len(c.edges))]
		back := TaskEdge{TaskID: e.DependsOnTaskID, DependsOnTaskID: e.TaskID, Type: Always}
		_, err := Build(c.tasks, append(slices.Clone(c.edges), back))
		var ce *CycleError
		if !errors.As(err, &ce) {
			t.Fatalf("case %d: error %v, want a CycleError", iter, err)
		}
		all := append(slices.Clone(c.edges), back)
		for i, from := range ce.Cycle {
			to := ce.Cycle[(i+1)%len(ce.Cycle)]
			if !slices.ContainsFunc(all, func(e TaskEdge) bool { return e.TaskID == from && e.DependsOnTaskID == to }) {
				t.Fatalf("case %d: cycle %v: %d does not wait on %d", iter, ce.Cycle, from, to)
			}
		}
		seen := map[int]bool{}
		for _, id := range ce.Cycle {
			if seen[id] {
				t.Fatalf("case %d: cycle %v repeats %d", iter, ce.Cycle, id)
			}
			seen[id] = true
		}
	}
}
