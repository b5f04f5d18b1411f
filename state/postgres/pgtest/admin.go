package pgtest

// Watching and steering the server from outside every store: a test that
// loses connections, hangs a transaction or waits for a worker to go idle
// asks the server what its store's backends are doing, by the
// application_name it gave them. The SQL for that lives here, not in the
// tests of the engine.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Admin is a connection of a test's own, outside every store, named so that
// no Terminate of the test's stores ends it. It closes when the test ends.
type Admin struct {
	t    testing.TB
	conn *pgx.Conn
}

// NewAdmin connects to dsn's database, or fails t.
func NewAdmin(t testing.TB, dsn string) *Admin {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), WithApplicationName(dsn, ApplicationName("bollhav_admin_")))
	if err != nil {
		t.Fatalf("pgtest: connecting the admin connection: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return &Admin{t: t, conn: conn}
}

// backendsSQL counts the backends of the current database named $1 whose
// wait event is $2 (any when empty) and, when $3, that are not idle.
const backendsSQL = `SELECT count(*) FROM pg_stat_activity
	WHERE datname = current_database() AND application_name = $1
	  AND ($2 = '' OR wait_event = $2) AND (NOT $3 OR state <> 'idle')`

func (a *Admin) count(app, waitEvent string, busy bool) int {
	a.t.Helper()
	var n int
	if err := a.conn.QueryRow(a.t.Context(), backendsSQL, app, waitEvent, busy).Scan(&n); err != nil {
		a.t.Fatalf("pgtest: counting the backends named %s: %v", app, err)
	}
	return n
}

// Backends counts the connections named app.
func (a *Admin) Backends(app string) int { a.t.Helper(); return a.count(app, "", false) }

// Waiting counts the connections named app that wait on waitEvent, such as
// "advisory" for a transaction blocked on an advisory lock.
func (a *Admin) Waiting(app, waitEvent string) int {
	a.t.Helper()
	return a.count(app, waitEvent, false)
}

// Busy counts the connections named app that are not idle: running a
// statement or inside a transaction.
func (a *Admin) Busy(app string) int { a.t.Helper(); return a.count(app, "", true) }

// Terminate ends every backend named app, as a server restart would, and
// returns how many it ended. Safe to call from any goroutine: it reports
// its error instead of failing the test.
func (a *Admin) Terminate(ctx context.Context, app string) (int, error) {
	var n int
	err := a.conn.QueryRow(ctx, terminateSQL, app).Scan(&n)
	return n, err
}

// LockKey returns an advisory lock key no other test uses.
func LockKey() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) >> 1)
}

// Lock takes the session advisory lock key, waiting for it: a transaction
// of a store that asks for the same lock (pg_advisory_xact_lock in a
// model's SQL) then hangs until Unlock.
func (a *Admin) Lock(key int64) {
	a.t.Helper()
	if _, err := a.conn.Exec(a.t.Context(), `SELECT pg_advisory_lock($1)`, key); err != nil {
		a.t.Fatalf("pgtest: taking advisory lock %d: %v", key, err)
	}
}

// Unlock releases a lock Lock took.
func (a *Admin) Unlock(key int64) {
	a.t.Helper()
	var ok bool
	if err := a.conn.QueryRow(a.t.Context(), `SELECT pg_advisory_unlock($1)`, key).Scan(&ok); err != nil || !ok {
		a.t.Fatalf("pgtest: releasing advisory lock %d: held %v, %v", key, ok, err)
	}
}
