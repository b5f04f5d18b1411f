package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

func showSetting(t *testing.T, s *Store, name string) string {
	t.Helper()
	var v string
	if err := s.pool.QueryRow(t.Context(), "SELECT current_setting($1)", name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSessionsBoundIdleTransactions: every connection of a store runs with
// idle_in_transaction_session_timeout set, unless the DSN sets it itself.
func TestSessionsBoundIdleTransactions(t *testing.T) {
	s, _ := openTest(t, Options{})
	if got := showSetting(t, s, "idle_in_transaction_session_timeout"); got != idleInTransactionTimeout {
		t.Errorf("idle_in_transaction_session_timeout = %q, want bollhav's %q", got, idleInTransactionTimeout)
	}
	dsn := pgtest.DSN(t) + "&idle_in_transaction_session_timeout=7s"
	own, err := Open(t.Context(), dsn, Options{Schema: pgtest.Schema(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if got := showSetting(t, own, "idle_in_transaction_session_timeout"); got != "7s" {
		t.Errorf("with the DSN's own value: %q, want 7s", got)
	}
}

// TestPausedTransactionReleasesTheFeedLock: a process paused inside a
// transaction that holds the change feed's lock (every commit takes it)
// does not stop the store's other writers for as long as it is paused: the
// server ends its session once it has idled past the bound, the waiting
// write commits, and the paused session's next statement finds its
// connection gone (SQLSTATE 25P03, which the engine treats as a lost
// connection).
func TestPausedTransactionReleasesTheFeedLock(t *testing.T) {
	base := pgtest.DSN(t) + "&idle_in_transaction_session_timeout=1s"
	s, err := Open(t.Context(), base, Options{Schema: pgtest.Schema(t, base)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	registerFlex(t, s, "m")

	paused, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer paused.Rollback(context.Background())
	if _, err := paused.Exec(t.Context(), `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.changes:"+s.schema)); err != nil {
		t.Fatal(err)
	}
	// The paused holder sends nothing more. A write that records changes
	// waits for the lock; it must get it once the server ends the holder's
	// session, long before this generous bound (which only keeps a broken
	// build from hanging the suite).
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "m", Windows: []state.Window{state.MustWindow(at(0), at(1))}, Now: at(0)}); err != nil {
		t.Fatalf("a write behind a paused transaction: %v", err)
	}
	_, err = paused.Exec(t.Context(), `SELECT 1`)
	var pg *pgconn.PgError
	if err == nil {
		t.Fatal("the paused transaction still runs: the server did not end its session")
	}
	if errors.As(err, &pg) && pg.Code != "25P03" {
		t.Errorf("the paused session ended with %s (%s), want 25P03", pg.Code, pg.Message)
	}
	t.Logf("the paused session: %v", err)
}
