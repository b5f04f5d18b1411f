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

// unitQueue hands held units to a fixed number of worker goroutines in the
// order they were claimed.
type unitQueue struct {
	units chan *heldUnit
	wg    sync.WaitGroup
}

// startUnitQueue starts workers goroutines that call run for each unit
// added, and holds up to size units waiting: add never blocks as long as the
// loop holds no more than size units.
func startUnitQueue(workers, size int, run func(*heldUnit)) *unitQueue {
	q := &unitQueue{units: make(chan *heldUnit, size)}
	for range workers {
		q.wg.Go(func() {
			for u := range q.units {
				run(u)
			}
		})
	}
	return q
}

// hold starts keeping c's lease (lease long, as it was claimed), from its
// claim on, and queues it.
func (e *Engine) hold(ctx context.Context, q *unitQueue, c state.Claim, m *spec.Model, lease time.Duration) {
	uctx, stop := e.heartbeat(ctx, c, lease)
	q.units <- &heldUnit{claim: c, model: m, ctx: uctx, stop: stop}
}

// close lets the workers finish what is queued and waits for them.
func (q *unitQueue) close() {
	close(q.units)
	q.wg.Wait()
}
