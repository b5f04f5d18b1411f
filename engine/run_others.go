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
	// since is the wall-clock start of the run's tasks: units of the
	// task's scope finished after it by someone else belong to this
	// task's outcome.
	since time.Time
	mu    sync.Mutex
	mine  map[int64]bool
}

// newOtherWorkers hears the store's changes through the run's wake (one
// listener for every task of the run).
func (e *Engine) newOtherWorkers(wake *runWake) *otherWorkers {
	ch, unsubscribe := wake.subscribe()
	since := e.leaseNow()
	if wake != nil && !wake.since.IsZero() {
		since = wake.since
	}
	return &otherWorkers{e: e, wake: ch, cancel: unsubscribe, since: since, mine: map[int64]bool{}}
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
	if _, err := o.e.rescue(ctx); err != nil && ctx.Err() == nil {
		o.e.logger().Warn("releasing expired leases failed; waiting again", "err", err)
	}
	return ctx.Err() == nil
}

// countOthers adds to res the units of the task's scope that another
// worker (a `bollhav worker`, another run) finished after the run's tasks
// began: the run's summary counts what its tasks' units ended as, whoever
// executed them, and one of them failing fails the task as if it had run it
// itself. Units of this run (any attempt of the task) are its own count.
func (e *Engine) countOthers(ctx context.Context, runID int64, sc runScope, o *otherWorkers, res *TaskResult) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []string
	var applied, blocked int
	err := e.retryStore(ctx, "count units of other workers", func() error {
		errs, applied, blocked = nil, 0, 0
		return e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: sc.model.Name, Window: sc.window,
			Statuses: []state.UnitStatus{state.Applied, state.Blocked, state.Failed}}, func(u state.Unit) error {
			if o.mine[u.ID] || (runID != 0 && u.RunID == runID) || u.UpdatedAt.Before(o.since) {
				return nil
			}
			switch u.Status {
			case state.Applied:
				applied++
			case state.Blocked:
				blocked++
			default:
				errs = append(errs, fmt.Sprintf("%s (run by another worker): %s", u.Window, u.Error))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	res.Applied += applied
	res.Blocked += blocked
	res.Failed += len(errs)
	res.Errors = append(res.Errors, errs...)
	return nil
}
