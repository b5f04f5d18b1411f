package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// idleInTransactionTimeout bounds how long PostgreSQL keeps a bollhav
// session that sits inside a transaction waiting for its client. A process
// paused mid-transaction (SIGSTOP, a frozen VM, a debugger) keeps its locks
// until its session ends — a model's summary lock stops that model's next
// commit, the change feed's lock held in shared mode stops every reader that
// settles the feed (and every writer queued behind that reader), and a
// warehouse unit's ledger row lock stops every newer claim of that unit —
// so without a bound one paused worker stops the deployment for as long as
// it is paused.
// bollhav's transactions run only Go code between their statements (a
// warehouse unit's one store read at most), so half a minute is far above
// any real pause.
const idleInTransactionTimeout = "30s"

// pingTimeout bounds the liveness ping of a pooled connection; without it
// a ping on a half-open connection could wait for the kernel's TCP timeout.
const pingTimeout = 10 * time.Second

// sessionDefaults sets what every bollhav pool of a store or warehouse
// needs, leaving what the DSN sets alone.
func sessionDefaults(cfg *pgxpool.Config) {
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "bollhav"
	}
	if cfg.PingTimeout == 0 {
		cfg.PingTimeout = pingTimeout
	}
}

// beginOptions is how bollhav begins its transactions on a pool made from
// cfg: with the idle bound set for the transaction alone (SET LOCAL, in the
// same round trip as BEGIN). Not as a startup parameter of the session:
// PgBouncer and the poolers built on it refuse a connection whose startup
// packet carries one they do not know, and a per-role or per-database value
// a DBA set stays in force outside bollhav's transactions. A DSN that sets
// idle_in_transaction_session_timeout itself keeps its value for the whole
// session, and the transactions then begin plainly.
func beginOptions(cfg *pgxpool.Config) pgx.TxOptions {
	if cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] != "" {
		return pgx.TxOptions{}
	}
	return beginBounded(idleInTransactionTimeout)
}

// beginBounded begins a transaction that PostgreSQL ends once it has sat
// idle for timeout.
func beginBounded(timeout string) pgx.TxOptions {
	return pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL idle_in_transaction_session_timeout = '" + timeout + "'"}
}

// snapshotOptions begins a read-only transaction whose statements all read
// one snapshot (REPEATABLE READ), idle-bounded as the store's others are.
func (s *Store) snapshotOptions() pgx.TxOptions {
	if s.begin.BeginQuery == "" {
		return pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	}
	return pgx.TxOptions{BeginQuery: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = '" +
		idleInTransactionTimeout + "'"}
}

// pingEveryAcquire makes the pool check a connection each time it hands
// one out, not only after a second idle (pgxpool's default). A warehouse
// unit's transaction is too costly to lose to a connection the server ended
// while it sat in the pool — after a restart every pooled connection is dead
// at once, and a few quick retries could each draw another dead one — while
// one round trip is nothing beside the unit's own SQL.
func pingEveryAcquire(context.Context, pgxpool.ShouldPingParams) bool { return true }
