package engine

import (
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"sync"
	"time"
)

// How far a worker loop claims ahead of the units it is running. A claim is a
// transaction, so claiming one unit per idle worker costs a commit per unit,
// which is what bounded the engine's throughput on short units. Claiming
// more than the workers can start at once lets one claim serve many units,
// but a claimed unit waits in the loop's queue, where no other worker can
// take it: so the loop claims ahead only as much work as its workers get
// through in claimAheadBudget, judged by how long its recent units took. A
// worker whose units take seconds claims for its idle workers only, as
// before; one whose units take microseconds holds up to claimAheadMax.
const (
	claimAheadBudget = 250 * time.Millisecond
	claimAheadMax    = 64
	// claimAheadLease is the lease of units claimed while claiming ahead,
	// renewed every third of it like any lease. A worker killed outright
	// (SIGKILL, a lost machine) leaves what it holds running until the
	// lease expires; units claimed ahead are many and short, so their
	// stake is cut from the two-minute default to this. Safe under the
	// fence: a holder that is alive but late loses the lease to a new
	// fence, its heartbeat and outcome are then refused, and a unit whose
	// lease is lost while it waits in the queue is never executed.
	claimAheadLease = 30 * time.Second
)

// holdings counts the units a worker loop holds — claimed, and not yet
// recorded by the completer — and sizes its next claim. Every held unit has
// its lease kept by a heartbeat from the moment it is claimed, so a unit
// that waits in the queue cannot lose its lease to another worker.
type holdings struct {
	workers int
	// ahead is false for units whose executor records them itself in its
	// data transaction: the completer cannot batch those, so claiming
	// ahead would save little, and a worker that dies would leave the
	// units it claimed ahead to wait out their leases.
	ahead bool
	// freed receives a value (dropped when one is already waiting)
	// whenever a held unit is recorded: the loop may claim again.
	freed chan struct{}
	// slots, when not nil, are the run's: each held unit has one, given
	// back as it is released.
	slots *unitSlots

	mu   sync.Mutex
	held int
	// mean is a moving average of how long a unit takes to gate and
	// execute; seen is false until the first unit ran.
	mean time.Duration
	seen bool
}

func newHoldings(workers int, ahead bool) *holdings {
	return &holdings{workers: max(workers, 1), ahead: ahead, freed: make(chan struct{}, 1)}
}

// limit is the most units the loop ever holds at once: the size of its
// queue.
func (h *holdings) limit() int { return max(h.workers, claimAheadMax) }

// capacity is how many units the loop may hold now: one per worker, plus
// what the workers get through in claimAheadBudget at the recent pace.
func (h *holdings) capacity() int {
	if !h.ahead || !h.seen {
		return h.workers
	}
	perWorker := int(claimAheadBudget / max(h.mean, time.Microsecond))
	return min(h.workers*(1+perWorker), h.limit())
}

// claimLease is the lease to claim with: normal, or claimAheadLease when
// shorter and the loop is claiming ahead of its workers.
func (h *holdings) claimLease(normal time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.capacity() > h.workers {
		return min(normal, claimAheadLease)
	}
	return normal
}

// room is how many units the loop should claim now, 0 to wait for held
// units to be recorded first. When claiming ahead it waits until a quarter
// of its capacity is free, so that one claim takes many units instead of
// each recorded unit costing a claim of one.
func (h *holdings) room() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	capacity := h.capacity()
	free := capacity - h.held
	if free < max(1, capacity/4) {
		return 0
	}
	return free
}

// took notes n units claimed.
func (h *holdings) took(n int) {
	h.mu.Lock()
	h.held += n
	h.mu.Unlock()
}

// count is how many units are held.
func (h *holdings) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// release notes one held unit recorded (or given up).
func (h *holdings) release() {
	h.mu.Lock()
	h.held--
	h.mu.Unlock()
	h.slots.give(1)
	select {
	case h.freed <- struct{}{}:
	default:
	}
}

// observe notes how long a unit took to gate and execute.
func (h *holdings) observe(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.seen {
		h.mean, h.seen = d, true
		return
	}
	h.mean += (d - h.mean) / 8
}

// appliesItself reports whether exec records m's units itself, in the
// transaction that writes their data. A warehouse unit does not: its data
// commits in the warehouse and its record goes with the batched
// completions, so it may be claimed ahead like any other.
func appliesItself(exec executor.Executor, m *spec.Model) bool {
	ua, ok := exec.(executor.Applier)
	return ok && ua.AppliesItself(m) && !executor.RecordedByCaller(m)
}
