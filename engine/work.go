package engine

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
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
// Like a run's task, the worker claims ahead of its idle slots while units
// are short (holdings) and records outcomes in batches (completer), so that
// one claim and one commit serve many units.
//
// When ctx ends the worker stops claiming and lets the units it is running
// finish (their executors are not cancelled); the units it claimed ahead and
// has not started go back to pending without an attempt counted. Then it
// returns nil. Units run by a worker are not attributed to a run: their run
// id is 0.
func (e *Engine) Work(ctx context.Context, exec executor.Executor, opts WorkOptions) error {
	if err := e.refuseReadOnly(ctx, "work", nil); err != nil {
		return err
	}
	if e.spec == nil {
		return errors.New("a worker needs the spec: it runs the spec's models")
	}
	if err := CheckWorkers(opts.Workers); err != nil {
		return err
	}
	workers := max(opts.Workers, 1)
	poll := opts.Poll
	if poll <= 0 {
		poll = time.Second
	}
	name := cmp.Or(opts.Name, workerName(0))
	names := make([]string, len(e.spec.Models))
	ahead := true
	for i, m := range e.spec.Models {
		names[i] = m.Name
		// One claim serves every model, so one model whose units record
		// themselves keeps the whole worker from claiming ahead.
		ahead = ahead && !appliesItself(exec, m)
	}
	wake, err := e.store.Wake(ctx)
	if err != nil {
		e.logger().Warn("no change feed; polling for work", "every", poll.String(), "err", err)
		wake = nil
	}
	// Units keep running after ctx ends: stopping means taking no new work.
	unitCtx := context.WithoutCancel(ctx)
	held := newHoldings(workers, ahead)
	budget := newRetries()
	comp := e.startCompleter(unitCtx)
	done := func(h *heldUnit, _ unitVerdict, err error) {
		defer held.release()
		h.stop()
		if err != nil {
			e.logger().Warn("unit not recorded", "model", h.model.Name, "window", h.claim.Unit.Window.String(), "err", err)
		}
	}
	// giveBack returns a unit claimed ahead that has not started to
	// pending, with no attempt counted, for any worker to take at once —
	// not when its lease would have expired.
	giveBack := func(h *heldUnit) {
		e.settle(comp, h, unitVerdict{out: state.Outcome{Status: state.Pending, At: e.now()}}, done)
	}
	q := startUnitQueue(workers, held.limit(), func(h *heldUnit) {
		if ctx.Err() != nil {
			giveBack(h)
			return
		}
		begun := time.Now()
		v := e.runUnit(unitCtx, h.ctx, e.gates(), &gate.RegistrationCache{}, e.specClaims, 0, spec.Bulldozer, h.model, h.claim, exec)
		held.observe(time.Since(begun))
		e.settle(comp, h, budget.apply(h.model, h.claim, v, e.leaseNow()), done)
	})
	defer comp.close()
	defer q.close()
	var released time.Time
	for ctx.Err() == nil {
		// Expired leases are returned to pending once per poll, not per
		// claim: a lease lasts minutes, and a busy worker claims often.
		if time.Since(released) >= poll {
			released = time.Now()
			if _, err := e.rescue(ctx); err != nil && ctx.Err() == nil {
				e.logger().Warn("releasing expired leases failed", "err", err)
			}
		}
		var claims []state.Claim
		room := held.room()
		lease := held.claimLease(e.lease())
		if room > 0 {
			claims, err = e.store.Claim(ctx, state.ClaimRequest{Env: e.opts.Env.Suffix, Models: names, Worker: name,
				Lease: lease, Limit: room, Now: e.leaseNow()})
			if err != nil && ctx.Err() == nil {
				e.logger().Warn("claiming failed; retrying", "err", err)
			}
		}
		for _, c := range claims {
			m := e.spec.Model(c.Unit.Model)
			if m == nil { // registered by another spec: not ours to run
				_ = e.store.Complete(unitCtx, c, state.Outcome{Status: state.Pending, At: e.now()})
				continue
			}
			held.took(1)
			e.hold(unitCtx, q, c, m, lease)
		}
		if len(claims) == room && held.room() > 0 {
			continue // there may be more work right away
		}
		select {
		case <-ctx.Done():
		case <-held.freed:
		case <-wake:
		case <-time.After(poll):
		}
	}
	// Stopping: what is still queued goes back now, even while every queue
	// worker is busy with a long unit.
	for {
		select {
		case h := <-q.units:
			giveBack(h)
		default:
			return nil
		}
	}
}
