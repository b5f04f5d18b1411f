package engine

import (
	"context"
	"sync"
	"time"

	"github.com/bollhav/bollhav/state"
)

// completeBatchMax bounds the outcomes one transaction records: a batch holds
// its units' row locks until it commits, and a few hundred rows keep that
// short.
const completeBatchMax = 256

// finished is a unit whose outcome waits to be recorded.
type finished struct {
	claim state.Claim
	out   state.Outcome
	// then runs on the completer's goroutine once the outcome is recorded
	// (err nil, also for a repeat of an outcome already recorded) or
	// refused (ErrLeaseLost, or the store kept failing). Counters and
	// progress move there, never before the commit.
	then func(err error)
}

// completer records the outcomes of a worker loop's units by group commit:
// workers queue outcomes and go on to their next unit, and one goroutine
// writes whatever is queued in one CompleteBatch transaction, while the next
// batch collects behind it. Under load a commit serves many units; a lone
// unit is written as soon as it is queued, so nothing waits for a batch to
// fill.
type completer struct {
	e *Engine
	// ctx is never cancelled: an interrupted unit's release must still be
	// recorded after its run was cancelled.
	ctx  context.Context
	wake chan struct{}
	done chan struct{}

	mu     sync.Mutex
	queue  []finished
	closed bool
}

func (e *Engine) startCompleter(ctx context.Context) *completer {
	c := &completer{e: e, ctx: context.WithoutCancel(ctx), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.loop()
	return c
}

// record queues an outcome; f.then runs after it is written.
func (c *completer) record(f finished) {
	c.mu.Lock()
	c.queue = append(c.queue, f)
	c.mu.Unlock()
	c.signal()
}

// close waits until every queued outcome is written and its then has run.
// Nothing may be recorded after close is called.
func (c *completer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
	<-c.done
}

func (c *completer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *completer) loop() {
	defer close(c.done)
	for {
		c.mu.Lock()
		n := min(len(c.queue), completeBatchMax)
		batch := c.queue[:n:n]
		if c.queue = c.queue[n:]; len(c.queue) == 0 {
			c.queue = nil
		}
		closed := c.closed
		c.mu.Unlock()
		if n == 0 {
			if closed {
				return
			}
			<-c.wake
			continue
		}
		errs := c.write(batch)
		for i, f := range batch {
			f.then(errs[i])
		}
	}
}

// write records a batch and returns each item's error. A lost connection is
// retried as any store call is, and a batch that still fails is tried once
// more after a pause, as Complete was: every item is a no-op when repeated
// under its fence, so a batch that did commit before its acknowledgement
// was lost is safe to send again.
func (c *completer) write(batch []finished) []error {
	items := make([]state.Completion, len(batch))
	for i, f := range batch {
		items[i] = state.Completion{Claim: f.claim, Outcome: f.out}
	}
	var errs []error
	call := func() (err error) {
		errs, err = c.e.store.CompleteBatch(c.ctx, items)
		return err
	}
	err := c.e.retryStore(c.ctx, "complete", call)
	if err != nil {
		time.Sleep(200 * time.Millisecond)
		err = c.e.retryStore(c.ctx, "complete", call)
	}
	if err != nil {
		errs = make([]error, len(batch))
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}
