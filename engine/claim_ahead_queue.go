package engine

import (
	"context"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// heldUnit is a claimed unit on its way through a worker loop: queued, then
// run, then recorded by the completer.
type heldUnit struct {
	claim state.Claim
	model *spec.Model
	// ctx is the unit's context: cancelled when its heartbeat hears that
	// the lease is lost, and when the loop's own context ends (a run's
	// cancellation; a `bollhav worker` detaches its units from it).
	ctx context.Context
	// stop ends the heartbeat, once the unit's outcome is recorded.
	stop context.CancelFunc
}

// unitQueue hands held units to at most a fixed number of worker
// goroutines in the order they were claimed.
type unitQueue struct {
	units chan *heldUnit
	wg    sync.WaitGroup
	run   func(*heldUnit)
	// workers is the most goroutines the queue starts; started counts
	// those it did. Only the claim loop adds, so neither needs a lock.
	workers, started int
}

// startUnitQueue makes a queue whose workers call run for each unit added,
// holding up to size units waiting: add never blocks as long as the loop
// holds no more than size units. A worker starts with the first unit it
// is needed for, never before: a run of one unit with --workers 500
// starts one goroutine, not 500.
func startUnitQueue(workers, size int, run func(*heldUnit)) *unitQueue {
	return &unitQueue{units: make(chan *heldUnit, size), run: run, workers: max(workers, 1)}
}

// add queues u, first starting a worker for it while fewer than workers
// run.
func (q *unitQueue) add(u *heldUnit) {
	if q.started < q.workers {
		q.started++
		q.wg.Go(func() {
			for u := range q.units {
				q.run(u)
			}
		})
	}
	q.units <- u
}

// hold starts keeping c's lease (lease long, as it was claimed), from its
// claim on, and queues it.
func (e *Engine) hold(ctx context.Context, q *unitQueue, c state.Claim, m *spec.Model, lease time.Duration) {
	uctx, stop := e.heartbeat(ctx, c, lease)
	q.add(&heldUnit{claim: c, model: m, ctx: uctx, stop: stop})
}

// close lets the workers finish what is queued and waits for them.
func (q *unitQueue) close() {
	close(q.units)
	q.wg.Wait()
}
