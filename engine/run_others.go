package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bollhav/bollhav/state"
)

// otherWorkersPoll is how often a task waiting on units held elsewhere looks
// again when the store's wake-up hint stays silent.
const otherWorkersPoll = time.Second

// otherWorkers is a task's view of the workers it shares units with: it
// waits for their commits and, afterwards, counts the units they ran.
type otherWorkers struct {
	e    *Engine
	wake <-chan struct{}
	// cancel ends the subscription to the run's wake.
	cancel func()
	// since is the wall-clock start of the task: units finished after it
	// by someone else belong to this task's outcome.
	since time.Time
	mu    sync.Mutex
	mine  map[int64]bool
}

// newOtherWorkers hears the store's changes through the run's wake (one
// listener for every task of the run).
func (e *Engine) newOtherWorkers(wake *runWake) *otherWorkers {
	ch, unsubscribe := wake.subscribe()
	return &otherWorkers{e: e, wake: ch, cancel: unsubscribe, since: e.leaseNow(), mine: map[int64]bool{}}
}

func (o *otherWorkers) stop() { o.cancel() }

// ran notes a unit this task ran itself.
func (o *otherWorkers) ran(id int64) {
	o.mu.Lock()
	o.mine[id] = true
	o.mu.Unlock()
}

// wait blocks until the store changes or the poll interval passes, then
// returns expired leases to pending, so a worker that died mid-unit does not
// stall the run. It returns false when ctx is done.
func (o *otherWorkers) wait(ctx context.Context) bool {
	t := time.NewTimer(otherWorkersPoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-o.wake:
	case <-t.C:
	}
	if _, err := o.e.store.ReleaseExpired(ctx, o.e.leaseNow()); err != nil && ctx.Err() == nil {
		o.e.logger().Warn("releasing expired leases failed; waiting again", "err", err)
	}
	return ctx.Err() == nil
}

// countOthers adds to res the units of the task's scope that another
// worker failed after the task started: the task is FAILED over them as if
// it had run them itself. Applied and blocked units of other workers are
// theirs to report.
func (e *Engine) countOthers(ctx context.Context, sc runScope, o *otherWorkers, res *TaskResult) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []string
	err := e.retryStore(ctx, "count units of other workers", func() error {
		errs = nil
		return e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: sc.model.Name, Window: sc.window,
			Statuses: []state.UnitStatus{state.Failed}}, func(u state.Unit) error {
			if o.mine[u.ID] || u.UpdatedAt.Before(o.since) {
				return nil
			}
			errs = append(errs, fmt.Sprintf("%s (run by another worker): %s", u.Window, u.Error))
			return nil
		})
	})
	if err != nil {
		return err
	}
	res.Failed += len(errs)
	res.Errors = append(res.Errors, errs...)
	return nil
}
