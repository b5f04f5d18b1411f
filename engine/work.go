package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bollhav/bollhav/state"
)

// WorkOptions tune a long-running worker.
type WorkOptions struct {
	// Workers is how many units run at once; 1 when zero.
	Workers int
	// Poll is how often the worker looks for work when no wake-up comes;
	// one second when zero.
	Poll time.Duration
	// Name identifies the worker in leases; host:pid when empty.
	Name string
}

// Work claims and runs pending units of the spec's models until ctx ends: the
// loop behind `bollhav worker`. Any number of workers, in this process or
// others, may run against one store: a claim never hands a unit to two of
// them, a unit whose worker died is taken over once its lease expires, and
// an outcome from a worker that lost its lease is refused by the store.
//
// When ctx ends the worker stops claiming and lets the units it holds finish
// (their executors are not cancelled), then returns nil. Units run by a
// worker are not attributed to a run: their run id is 0.
func (e *Engine) Work(ctx context.Context, exec Executor, opts WorkOptions) error {
	if err := e.refuseReadOnly(ctx, "work", nil); err != nil {
		return err
	}
	if e.Spec == nil {
		return errors.New("a worker needs the spec: it runs the spec's models")
	}
	workers := max(opts.Workers, 1)
	poll := opts.Poll
	if poll <= 0 {
		poll = time.Second
	}
	name := opts.Name
	if name == "" {
		name = workerName(0)
	}
	names := make([]string, len(e.Spec.Models))
	for i, m := range e.Spec.Models {
		names[i] = m.Name
	}
	wake, err := e.Store.Wake(ctx)
	if err != nil {
		e.logger().Warn("no change feed; polling for work", "every", poll.String(), "err", err)
		wake = nil
	}
	// Units keep running after ctx ends: stopping means taking no new work.
	unitCtx := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	inflight := 0
	freed := make(chan struct{}, workers)
	for ctx.Err() == nil {
		for drained := false; !drained; {
			select {
			case <-freed:
				inflight--
			default:
				drained = true
			}
		}
		if _, err := e.Store.ReleaseExpired(ctx, leaseClock()); err != nil && ctx.Err() == nil {
			e.logger().Warn("releasing expired leases failed", "err", err)
		}
		var claims []state.Claim
		if inflight < workers {
			claims, err = e.Store.Claim(ctx, state.ClaimRequest{Env: e.Env.Suffix, Models: names, Worker: name,
				Lease: e.lease(), Limit: workers - inflight, Now: leaseClock()})
			if err != nil && ctx.Err() == nil {
				e.logger().Warn("claiming failed; retrying", "err", err)
			}
		}
		for _, c := range claims {
			m := e.Spec.Model(c.Unit.Model)
			if m == nil { // registered by another spec: not ours to run
				_ = e.Store.Complete(unitCtx, c, state.Outcome{Status: state.Pending, At: e.now()})
				continue
			}
			inflight++
			wg.Add(1)
			go func(c state.Claim, m *Model) {
				defer wg.Done()
				defer func() { freed <- struct{}{} }()
				if _, _, err := e.runUnit(unitCtx, &shapes{}, 0, Bulldozer, m, c, exec); err != nil {
					e.logger().Warn("unit not recorded", "model", m.Name, "window", c.Unit.Window.String(), "err", err)
				}
			}(c, m)
		}
		if len(claims) > 0 && inflight < workers {
			continue // there may be more work right away
		}
		select {
		case <-ctx.Done():
		case <-freed:
			inflight--
		case <-wake:
		case <-time.After(poll):
		}
	}
	return nil
}
