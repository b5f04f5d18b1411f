package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bollhav/bollhav/state"
)

// pollInterval is how often Wake's watcher asks SQLite whether another
// connection committed: fast enough that a UI feels live, cheap enough (one
// pragma on an idle connection) to run all day.
const pollInterval = 150 * time.Millisecond

// recordChange appends one row to the change feed, inside the transaction
// that made the change, so the feed and the units can never disagree.
func recordChange(ctx context.Context, tx *sql.Tx, c state.Change) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO "changes" ("env", "model", "since", "until", "from_status", "to_status", "count", "at", "run_id")
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Env, c.Model, micros(c.Window.Since), micros(c.Window.Until), string(c.From), string(c.To), c.Count, micros(c.At), c.RunID)
	if err != nil {
		return fmt.Errorf("sqlite: record change: %w", err)
	}
	return nil
}

// Changes implements state.Store.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]state.Change, error) {
	return queryAll(ctx, s.r, "changes", func(sc rowScanner) (state.Change, error) {
		var c state.Change
		var since, until, at int64
		var from, to string
		err := sc.Scan(&c.Seq, &c.Env, &c.Model, &since, &until, &from, &to, &c.Count, &at, &c.RunID)
		c.Window, c.From, c.To, c.At = window(since, until), state.UnitStatus(from), state.UnitStatus(to), fromMicros(at)
		return c, err
	}, `SELECT "seq", "env", "model", "since", "until", "from_status", "to_status", "count", "at", "run_id"
		FROM "changes" WHERE "seq" > ? ORDER BY "seq" LIMIT ?`, after, sqlLimit(limit))
}

// LatestSeq implements state.Store. SQLite has one writer at a time, so
// seqs commit in order and the newest visible one is final with all before
// it.
func (s *Store) LatestSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(max("seq"), 0) FROM "changes"`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("sqlite: latest change: %w", err)
	}
	return seq, nil
}

// Wake implements state.Store. One watcher per Store polls PRAGMA
// data_version on a connection of its own — the value changes when any
// other connection, this Store's writer included, commits — and every
// subscriber is also signalled directly when this Store commits. A commit
// made after Wake returns is always signalled: the watcher reads its
// baseline before the first Wake returns.
func (s *Store) Wake(ctx context.Context) (<-chan struct{}, error) {
	return s.hub.subscribe(ctx)
}

// hub fans wake-ups out to subscribers.
type hub struct {
	path string

	mu      sync.Mutex
	subs    map[chan struct{}]struct{}
	closed  bool
	started bool
	stop    chan struct{}
	done    chan struct{}
}

func newHub(path string) *hub {
	return &hub{path: path, subs: map[chan struct{}]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// signal wakes every subscriber without blocking: a subscriber that has
// not yet read the last signal has nothing more to learn.
func (h *hub) signal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (h *hub) subscribe(ctx context.Context) (<-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("sqlite: wake: the store is closed")
	}
	if !h.started {
		if err := h.startWatcher(ctx); err != nil {
			return nil, err
		}
		h.started = true
	}
	ch := make(chan struct{}, 1)
	h.subs[ch] = struct{}{}
	go func() {
		select {
		case <-ctx.Done():
		case <-h.stop:
		}
		h.remove(ch)
	}()
	return ch, nil
}

func (h *hub) remove(ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

// startWatcher opens the watcher's connection, reads the baseline
// data_version and starts polling. Called with h.mu held.
func (h *hub) startWatcher(ctx context.Context) error {
	db, err := sql.Open("sqlite", dsn(h.path, "deferred", true))
	if err != nil {
		return fmt.Errorf("sqlite: wake: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return fmt.Errorf("sqlite: wake: %w", err)
	}
	var last int64
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&last); err != nil {
		conn.Close()
		db.Close()
		return fmt.Errorf("sqlite: wake: %w", err)
	}
	go h.watch(db, conn, last)
	return nil
}

func (h *hub) watch(db *sql.DB, conn *sql.Conn, last int64) {
	defer close(h.done)
	defer db.Close()
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-h.stop
		cancel()
	}()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		var v int64
		err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
		if err != nil || v != last {
			// An error is a hint too: whoever listens re-reads the feed
			// and reports what is wrong.
			last = v
			h.signal()
		}
	}
}

// close stops the watcher and closes every subscriber's channel.
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.stop)
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
	started := h.started
	h.mu.Unlock()
	if started {
		<-h.done
	}
}
