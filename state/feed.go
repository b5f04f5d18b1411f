package state

import (
	"context"
	"time"
)

// Follower turns a Store's change feed into a stream: the one subscription a
// process keeps (the UI fans it out to views and SSH sessions, `watch` prints
// it). Wake-ups are only hints, so the follower also reads on a timer: a
// lost wake-up delays a change by at most Poll, it never loses one. Because
// it resumes from the last seq it delivered, a broken connection or a
// restarted database costs nothing but time.
type Follower struct {
	Store Store
	// After is where to resume: 0 for the start of the feed, or the Seq of
	// the last change the caller has handled.
	After int64
	// Poll is the longest a change waits unseen when no wake-up arrives
	// (default 2s).
	Poll time.Duration
	// Batch is how many changes one read asks for (default 500).
	Batch int
	// OnError, when set, hears each failed read, and nil on the first
	// success after failures: a UI shows a "connection lost" banner and
	// clears it. It runs on the follower's goroutine and must not block.
	OnError func(error)
}

// Backoff bounds for failed reads: quick to recover from a blip, gentle on a
// database that is down.
const (
	followBackoffMin = 100 * time.Millisecond
	followBackoffMax = 30 * time.Second
)

// Follow is Follower{Store: s, After: after, Poll: poll}.Follow(ctx).
func Follow(ctx context.Context, s Store, after int64, poll time.Duration) <-chan Change {
	return Follower{Store: s, After: after, Poll: poll}.Follow(ctx)
}

// Follow delivers every change after f.After, in seq order and each once,
// on the returned channel until ctx ends, when the channel closes. It reads
// at once, then on every wake-up and at least every Poll; a failed read is
// retried with exponential backoff (100 ms doubling to 30 s) and wake-ups
// are ignored meanwhile, so a database that is down is not hammered.
func (f Follower) Follow(ctx context.Context) <-chan Change {
	if f.Poll <= 0 {
		f.Poll = 2 * time.Second
	}
	if f.Batch <= 0 {
		f.Batch = 500
	}
	// A read's worth of buffer: a reader that takes what has arrived in
	// one go (a batch for a gate index) finds the whole read there.
	out := make(chan Change, f.Batch)
	go f.run(ctx, out)
	return out
}

func (f Follower) run(ctx context.Context, out chan<- Change) {
	defer close(out)
	after := f.After
	var wake <-chan struct{}
	subscribe := func() {
		if wake != nil {
			return
		}
		if ch, err := f.Store.Wake(ctx); err == nil {
			wake = ch
		}
		// Without a wake channel the timer alone keeps the feed going; the
		// next successful read tries to subscribe again.
	}
	subscribe()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var backoff time.Duration
	for {
		hint := wake
		if backoff > 0 {
			hint = nil
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-hint:
			if !ok {
				wake = nil // the store closed it; keep polling, re-subscribe later
			}
		case <-timer.C:
		}
		next, err := f.drain(ctx, after, out)
		after = next
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if f.OnError != nil {
				f.OnError(err)
			}
			backoff = min(max(2*backoff, followBackoffMin), followBackoffMax)
			timer.Reset(backoff)
			continue
		}
		if backoff > 0 && f.OnError != nil {
			f.OnError(nil)
		}
		backoff = 0
		subscribe()
		timer.Reset(f.Poll)
	}
}

// drain reads and delivers everything after seq and returns the last seq
// delivered, which advances even when a later read fails.
func (f Follower) drain(ctx context.Context, after int64, out chan<- Change) (int64, error) {
	for {
		cs, err := f.Store.Changes(ctx, after, f.Batch)
		if err != nil {
			return after, err
		}
		for _, c := range cs {
			if c.Seq <= after {
				continue // never deliver a change twice, whatever the store does
			}
			select {
			case out <- c:
				after = c.Seq
			case <-ctx.Done():
				return after, ctx.Err()
			}
		}
		if len(cs) < f.Batch {
			return after, nil
		}
	}
}
