package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// idleInTransactionTimeout bounds how long PostgreSQL keeps a bollhav
// session that sits inside a transaction waiting for its client. A process
// paused mid-transaction (SIGSTOP, a frozen VM, a debugger) keeps its locks
// until its session ends — the change feed's advisory lock serialises every
// commit of the store, and a warehouse unit's ledger row lock stops every
// newer claim of that unit — so without a bound one paused worker stops
// every other worker of the deployment for as long as it is paused. No
// bollhav transaction leaves its client idle for more than milliseconds
// between statements, so half a minute is far above any real one. A DSN
// that sets idle_in_transaction_session_timeout itself keeps its value.
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
	params := cfg.ConnConfig.RuntimeParams
	if params["application_name"] == "" {
		params["application_name"] = "bollhav"
	}
	if params["idle_in_transaction_session_timeout"] == "" {
		params["idle_in_transaction_session_timeout"] = idleInTransactionTimeout
	}
	if cfg.PingTimeout == 0 {
		cfg.PingTimeout = pingTimeout
	}
}

// pingEveryAcquire makes the pool check a connection each time it hands
// one out, not only after a second idle (pgxpool's default). A warehouse
// unit's transaction is too costly to lose to a connection the server ended
// while it sat in the pool — after a restart every pooled connection is dead
// at once, and a few quick retries could each draw another dead one — while
// one round trip is nothing beside the unit's own SQL.
func pingEveryAcquire(context.Context, pgxpool.ShouldPingParams) bool { return true }
