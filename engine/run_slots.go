package engine

import "sync"

// unitsAtOnce is the most units a run's tasks hold at once between them,
// claimed ahead included: the process's ceiling, MaxWorkers. A test lowers
// it to see the bound without a thousand tasks.
var unitsAtOnce = MaxWorkers

// tasksAtOnce is the most tasks a run has in flight at once with workers
// workers each: as many as the process's ceiling of units lets each run
// its workers. The rest of the ready tasks start as tasks end. Every task
// in flight costs goroutines, a completer and a claim loop on the store's
// writer, and its units a heartbeat each: a run of a 60,000-model spec
// started its 3,000 ready roots at once and held 16,000 goroutines and
// 11,000 claimed units, queued on SQLite's one writer (issue 35).
func tasksAtOnce(workers int) int {
	return max(1, unitsAtOnce/max(workers, 1))
}

// unitSlots bounds the units a run's tasks hold at once between them
// (unitsAtOnce): a task takes a slot for each unit it claims and gives it
// back once the unit's outcome is recorded or the claim came up short, so
// however many tasks claim ahead, the run holds no more units — each with
// its lease kept by a heartbeat of its own — than a process runs at once.
// A nil *unitSlots bounds nothing (a `bollhav worker`, whose workers are
// the bound).
type unitSlots struct {
	mu   sync.Mutex
	free int
	// given is closed when slots are given back while a taker waits, then
	// replaced.
	given   chan struct{}
	waiting bool
}

func newUnitSlots(n int) *unitSlots {
	return &unitSlots{free: n, given: make(chan struct{})}
}

// take takes up to n slots and returns how many it took. When none is free
// it takes none and returns a channel that is closed once some are given
// back.
func (s *unitSlots) take(n int) (int, <-chan struct{}) {
	if s == nil {
		return n, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := min(n, s.free)
	s.free -= k
	if k == 0 {
		s.waiting = true
	}
	return k, s.given
}

// give gives n slots back.
func (s *unitSlots) give(n int) {
	if s == nil || n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free += n
	if s.waiting {
		close(s.given)
		s.given, s.waiting = make(chan struct{}), false
	}
}
