package engine

import (
	"context"
	"sync"
	"time"
)

// runWake is one run's wake-ups from the store, shared by its tasks. The
// store's Wake holds a connection of its own on PostgreSQL (a LISTEN), and
// every task of a wave runs at once: a run over a wave of a hundred models
// held a hundred connections for as long as it lasted — every connection
// a default PostgreSQL server allows (max_connections = 100), refusing
// everyone else's. One listener a run, fanned out, holds one.
type runWake struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	// live is whether the store's Wake answered; without it, tasks poll.
	live bool
	// since is when the run began (lease clock): units of a task's scope
	// that another worker finished after it are the run's to count.
	since time.Time
}

// startRunWake listens for the store's changes until ctx ends.
func (e *Engine) startRunWake(ctx context.Context) *runWake {
	w := &runWake{subs: map[chan struct{}]struct{}{}}
	ch, err := e.store.Wake(ctx)
	if err != nil {
		return w
	}
	w.live = true
	go func() {
		for range ch {
			w.broadcast()
		}
	}()
	return w
}

// subscribe returns a channel that receives a value, coalesced, whenever
// the store may have changed — the first at once, as the store's Wake
// does — and the function that ends the subscription. The channel is nil
// when the store's Wake failed (a nil channel never fires: the task polls).
// It never closes: a listener that ends leaves the tasks to their poll.
func (w *runWake) subscribe() (<-chan struct{}, func()) {
	if w == nil || !w.live {
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	w.mu.Lock()
	w.subs[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.subs, ch)
		w.mu.Unlock()
	}
}

func (w *runWake) broadcast() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs {
		select {
		case ch <- struct{}{}:
		default: // one is waiting already: wake-ups coalesce
		}
	}
}
