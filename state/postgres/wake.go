package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Timing of the LISTEN connection. A connection that dies quietly (a NAT
// forgetting it, a failover) delivers nothing and reports nothing, so the
// listener pings when it has heard nothing for pingEvery.
const (
	pingEvery     = 30 * time.Second
	firstBackoff  = 100 * time.Millisecond
	maxBackoff    = 5 * time.Second
	closeListener = 5 * time.Second
)

var errClosed = errors.New("postgres: the store is closed")

// Wake returns a channel that receives a value whenever the change feed may
// have grown. Each call holds one dedicated connection, outside the pool,
// that LISTENs on the schema's channel. A value is only a hint — NOTIFY
// carries a seq and nothing else — and the reader then calls Changes.
//
// The first value arrives as soon as the listener is in place, so a reader
// that reads the feed on every value cannot miss a change made just before
// it started listening. When the connection drops, the listener reconnects
// with backoff and sends a value once it listens again: notifications sent
// while it was away are lost, and the reader re-reads instead. The channel
// closes when ctx ends or the store is closed.
func (s *Store) Wake(ctx context.Context) (<-chan struct{}, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: listening for changes: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = conn.Close(ctx)
		return nil, errClosed
	}
	ch := make(chan struct{}, 1)
	signal(ch)
	s.listeners.Add(1)
	go s.keepListening(ctx, conn, ch)
	return ch, nil
}

// listen opens a connection with the pool's settings and LISTENs on it.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+quoteIdent(s.channel)); err != nil {
		_ = conn.Close(ctx)
		return nil, err
	}
	return conn, nil
}

func (s *Store) keepListening(ctx context.Context, conn *pgx.Conn, ch chan struct{}) {
	defer s.listeners.Done()
	defer close(ch)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		_ = waitForChanges(ctx, conn, ch)
		closeCtx, done := context.WithTimeout(context.WithoutCancel(ctx), closeListener)
		_ = conn.Close(closeCtx)
		done()
		if conn = s.reconnect(ctx); conn == nil {
			return
		}
		signal(ch)
	}
}

// waitForChanges signals ch for every notification until the connection
// fails or ctx ends.
func waitForChanges(ctx context.Context, conn *pgx.Conn, ch chan struct{}) error {
	for {
		quiet, cancel := context.WithTimeout(ctx, pingEvery)
		_, err := conn.WaitForNotification(quiet)
		cancel()
		switch {
		case err == nil:
			signal(ch)
		case ctx.Err() != nil:
			return ctx.Err()
		case quiet.Err() != nil:
			// Nothing heard for a while: a timeout leaves the connection
			// usable, so check that it still reaches the server.
			if err := conn.Ping(ctx); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// reconnect listens again, backing off between attempts; nil when ctx ends
// first.
func (s *Store) reconnect(ctx context.Context) *pgx.Conn {
	backoff := firstBackoff
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		conn, err := s.listen(ctx)
		if err == nil {
			return conn
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// signal sends a wake-up unless one is already waiting: wake-ups coalesce,
// since the reader reads everything new whichever woke it.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
