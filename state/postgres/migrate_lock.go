package postgres

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// The longest pause between two tries for the migration lock: a process
// waiting for another's upgrade tries 20 to 40 times a second, each try a
// round trip that reads nothing.
const migrateLockPollMax = 50 * time.Millisecond

// lockMigrations takes the migration lock key for conn's session, trying
// again until it is free or ctx ends. It is a session lock because a
// concurrent index build cannot run inside a transaction, so a
// transaction-scoped lock would end before it; it is the key earlier
// releases took with pg_advisory_xact_lock, so their processes and these
// exclude each other.
//
// It is tried, not waited for: a session waiting in pg_advisory_lock holds
// a snapshot while it waits, and the holder's concurrent build waits for
// every older snapshot to end before it marks its index valid — each waits
// for the other, and PostgreSQL ends one of them with "deadlock detected"
// after deadlock_timeout. A try is a transaction of its own that ends at
// once, so the build never waits on it for longer than the try takes.
//
// (A process of an earlier release waits in its transaction, and can
// still meet a build that way. Whichever PostgreSQL ends sees a retryable
// error: an earlier release's migrate tries again, and this one builds
// again, dropping the INVALID index the ended build left.)
func lockMigrations(ctx context.Context, conn *pgx.Conn, key int64) error {
	pause := 2 * time.Millisecond
	for {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
			return err
		}
		if got {
			return nil
		}
		// Jittered, so processes that lost one try together do not all
		// try again together.
		timer := time.NewTimer(pause/2 + rand.N(pause/2+1))
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		pause = min(2*pause, migrateLockPollMax)
	}
}
