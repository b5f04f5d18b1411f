package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// idleSetting reads idle_in_transaction_session_timeout inside one of the
// store's transactions and outside any.
func idleSetting(t *testing.T, s *Store) (inTx, session string) {
	t.Helper()
	const q = "SELECT current_setting('idle_in_transaction_session_timeout')"
	err := pgx.BeginTxFunc(t.Context(), s.pool, s.begin, func(tx pgx.Tx) error {
		return tx.QueryRow(t.Context(), q).Scan(&inTx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.pool.QueryRow(t.Context(), q).Scan(&session); err != nil {
		t.Fatal(err)
	}
	return inTx, session
}

// TestTransactionsBoundTheirIdleTime: the store's transactions run with
// idle_in_transaction_session_timeout set for themselves alone (SET LOCAL,
// so a pooler that refuses unknown startup parameters still connects, and
// the session keeps the server's value), unless the DSN sets it for the
// whole session.
func TestTransactionsBoundTheirIdleTime(t *testing.T) {
	s, _ := openTest(t, Options{})
	inTx, session := idleSetting(t, s)
	if inTx != idleInTransactionTimeout {
		t.Errorf("inside a transaction: %q, want bollhav's %q", inTx, idleInTransactionTimeout)
	}
	if session == idleInTransactionTimeout {
		t.Errorf("outside a transaction the session has bollhav's %q too: it went in the startup packet", session)
	}
	dsn := pgtest.DSN(t) + "&idle_in_transaction_session_timeout=7s"
	own, err := Open(t.Context(), dsn, Options{Schema: pgtest.Schema(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if inTx, session := idleSetting(t, own); inTx != "7s" || session != "7s" {
		t.Errorf("with the DSN's own value: %q in a transaction, %q outside, want 7s for both", inTx, session)
	}
}

// TestPausedTransactionReleasesTheFeedLock: a process paused inside a
// transaction that has taken a seq (it holds the change feed's lock in
// shared mode until it commits) stops no writer — they take the lock in
// shared mode too — and stops a reader only as long as the server lets it
// idle: a reader that sees a later seq committed waits for the paused one,
// the server ends the paused session once it has idled past the bound, and
// the reader then gets the later change. The paused session's next
// statement finds its connection gone (SQLSTATE 25P03, which the engine
// treats as a lost connection). The bound is a second here instead of half
// a minute.
func TestPausedTransactionReleasesTheFeedLock(t *testing.T) {
	s, _ := openTest(t, Options{})
	s.begin = beginBounded("1s")
	registerFlex(t, s, "m")

	paused, pausedSeq := openRecord(t, s, "m", 5)
	// The paused holder sends nothing more. A write commits past it, and
	// a read waits for it only until the server ends its session, long
	// before this generous bound (which only keeps a broken build from
	// hanging the suite).
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "m", Windows: []state.Window{state.MustWindow(at(0), at(1))}, Now: at(0)}); err != nil {
		t.Fatalf("a write beside a paused transaction: %v", err)
	}
	cs, err := s.Changes(ctx, 0, 0)
	if err != nil {
		t.Fatalf("a read behind a paused transaction: %v", err)
	}
	if len(cs) != 1 || cs[0].Seq <= pausedSeq || cs[0].From != "" || cs[0].To != state.Pending {
		t.Errorf("read behind the paused seq %d: %v, want only the prefill after it", pausedSeq, seqs(cs))
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
