package tui

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// Feed is the store's change feed as the UI follows it: one
// state.Follower (which resumes from the last seq it delivered, so a lost
// connection never loses a change) fanned out to every UI that subscribes.
// A process serving many UIs (SSH sessions) makes one with NewFeed and
// passes it in Options.Feed, so the load on the store does not grow with
// the number of people looking; a UI without one makes its own.
type Feed struct {
	mu   sync.Mutex
	subs map[*subscription]struct{}
	err  error
	done bool
	// gate is the live gate index the feed keeps current (liveGate): one
	// per feed, so one for every UI that shares it.
	gate *liveGate
}

// DefaultFeedPoll is the longest a change waits unseen when the store sends
// no wake-up.
const DefaultFeedPoll = time.Second

// NewFeed follows e's store from its newest change on until ctx ends. poll
// is the longest a change waits unseen without a wake-up (DefaultFeedPoll
// when zero). It fails only when the store cannot be read at all.
func NewFeed(ctx context.Context, e *engine.Engine, poll time.Duration) (*Feed, error) {
	return newFeed(ctx, e, poll, newLiveGate(e))
}

// feedBatch bounds how many changes the feed hands the gate index at once.
const feedBatch = 1000

// newFeed is NewFeed keeping g current.
func newFeed(ctx context.Context, e *engine.Engine, poll time.Duration, g *liveGate) (*Feed, error) {
	if poll <= 0 {
		poll = DefaultFeedPoll
	}
	lctx, cancel := context.WithTimeout(ctx, loadTimeout)
	after, err := e.LatestChangeSeq(lctx)
	cancel()
	if err != nil {
		return nil, err
	}
	f := &Feed{subs: map[*subscription]struct{}{}, gate: g}
	g.tell(f.publishVerdicts)
	changes := e.Follow(ctx, after, poll, f.setErr)
	go func() {
		defer g.stop()
		for c := range changes {
			// What arrives together goes to the gate index as one batch,
			// before any UI hears of it: a view that reloads on the
			// batch reads verdicts that include it.
			batch := []state.Change{c}
		more:
			for len(batch) < feedBatch {
				select {
				case c, ok := <-changes:
					if !ok {
						break more
					}
					batch = append(batch, c)
				default:
					break more
				}
			}
			g.apply(ctx, batch)
			for _, c := range batch {
				f.publish(c)
			}
		}
		f.mu.Lock()
		f.done = true
		for s := range f.subs {
			s.close()
		}
		f.mu.Unlock()
	}()
	return f, nil
}

func (f *Feed) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
	for s := range f.subs {
		s.setErr(err)
	}
}

func (f *Feed) publish(c state.Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.add(c)
	}
}

// publishVerdicts tells every subscriber that the gate index's verdicts
// changed with no change in the store.
func (f *Feed) publishVerdicts() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.setVerdicts()
	}
}

// subscribe adds a reader of the feed; cancel removes it.
func (f *Feed) subscribe() (*subscription, func()) {
	s := &subscription{poke: make(chan struct{}, 1)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	if f.err != nil {
		s.setErr(f.err)
	}
	if f.done {
		s.close()
	}
	f.mu.Unlock()
	return s, func() {
		f.mu.Lock()
		delete(f.subs, s)
		f.mu.Unlock()
	}
}

// maxPending bounds the changes a slow reader holds; past it the reader is
// told to reload everything instead.
const maxPending = 10_000

// subscription is one UI's view of the feed: the changes it has not taken
// yet and the feed's error state, with a one-slot poke, so the publisher
// never waits on a reader.
type subscription struct {
	mu       sync.Mutex
	pending  []state.Change
	overflow bool
	err      error
	errSet   bool
	closed   bool
	// verdicts: the gate index's verdicts changed by themselves.
	verdicts bool
	poke     chan struct{}
}

func (s *subscription) signal() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

func (s *subscription) add(c state.Change) {
	s.mu.Lock()
	if len(s.pending) < maxPending {
		s.pending = append(s.pending, c)
	} else {
		s.overflow = true
	}
	s.mu.Unlock()
	s.signal()
}

func (s *subscription) setErr(err error) {
	s.mu.Lock()
	s.err, s.errSet = err, true
	s.mu.Unlock()
	s.signal()
}

func (s *subscription) setVerdicts() {
	s.mu.Lock()
	s.verdicts = true
	s.mu.Unlock()
	s.signal()
}

func (s *subscription) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
}

// next waits for what the feed has for this UI — a burst of changes is one
// message and so one reload — or ctx's end.
func (s *subscription) next(ctx context.Context) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-s.poke:
		case <-ctx.Done():
			return feedMsg{closed: true}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		msg := feedMsg{changes: s.pending, all: s.overflow, err: s.err, errSet: s.errSet, verdicts: s.verdicts}
		s.pending, s.overflow, s.errSet, s.verdicts = nil, false, false, false
		if s.closed && len(msg.changes) == 0 && !msg.errSet && !msg.verdicts {
			msg.closed = true
		}
		return msg
	}
}

// startFeed subscribes the UI to the shared feed, or to a feed of its own
// when there is none.
func startFeed(ctx context.Context, e *engine.Engine, shared *Feed, poll time.Duration, g *liveGate) tea.Cmd {
	return func() tea.Msg {
		f := shared
		if f == nil {
			var err error
			if f, err = newFeed(ctx, e, poll, g); err != nil {
				return feedMsg{err: err, errSet: true, closed: true}
			}
		}
		sub, cancel := f.subscribe()
		go func() {
			// Leave the feed when the UI ends, however it ends.
			<-ctx.Done()
			cancel()
		}()
		return feedStartedMsg{sub: sub}
	}
}
