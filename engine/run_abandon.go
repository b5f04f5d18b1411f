package engine

import (
	"context"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/tick"
)

// rescue returns units whose lease expired to pending and then closes, as
// abandoned, the environment's runs whose process is gone: running, no
// heartbeat for a whole lease and no unit under a live lease (the store
// cannot see processes on other machines, so this is what gone means).
// Every place that rescues expired leases — a run's start and its claim
// loop, a retry, a worker — calls it: whichever process notices first
// closes the run, once.
func (e *Engine) rescue(ctx context.Context) (released int, err error) {
	now := e.leaseNow()
	if released, err = e.store.ReleaseExpired(ctx, now); err != nil {
		return released, err
	}
	ids, err := e.store.AbandonRuns(ctx, e.opts.Env.Suffix, now, e.lease())
	for _, id := range ids {
		e.logger().Warn("closed an abandoned run: its process stopped without closing it", "run", id)
	}
	return released, err
}

// runBeatEvery is how often a running run beats its heartbeat: a third of
// its lease, and never less often than a third of DefaultLease, so that a
// process with a longer lease is not taken for dead by one with the
// default.
func (e *Engine) runBeatEvery() time.Duration {
	return min(e.lease(), DefaultLease) / 3
}

// runBeat beats a run's heartbeat until stopped.
type runBeat struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// beatRun beats run id's heartbeat every runBeatEvery on the lease clock
// until stop — also after ctx is cancelled, while the cancelled run winds
// down and records itself. A failed beat is logged and tried again on the
// next tick.
func (e *Engine) beatRun(ctx context.Context, id int64) *runBeat {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &runBeat{cancel: cancel, done: make(chan struct{})}
	every := e.runBeatEvery()
	go func() {
		defer close(b.done)
		tick.Every(ctx, every, func() bool {
			if err := e.store.HeartbeatRun(ctx, id, e.leaseNow()); err != nil && ctx.Err() == nil {
				e.logger().Warn("run heartbeat failed; trying again", "run", id, "err", err)
			}
			return true
		})
	}()
	return b
}

// stop ends the heartbeat and waits for its goroutine; safe to call more
// than once.
func (b *runBeat) stop() {
	b.once.Do(func() {
		b.cancel()
		<-b.done
	})
}
