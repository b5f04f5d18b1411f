package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// TestMigrationLockWaiterDoesNotDeadlockABuild: a process waiting for the
// migration lock while the holder builds an index concurrently does not
// hold the build back. A waiter blocked in pg_advisory_lock holds a
// snapshot the build waits for, while it waits for the holder: PostgreSQL
// ends one of the two with "deadlock detected" (the waiter, which started
// waiting first, or the build), and either error fails the test. Here the
// build completes while the waiter still waits, and the waiter gets the
// lock once the holder lets it go.
func TestMigrationLockWaiterDoesNotDeadlockABuild(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	if err := pgtest.Exec(dsn, sqlFor(schema, `CREATE SCHEMA {schema}; CREATE TABLE {schema}.t AS SELECT g AS x FROM generate_series(1, 1000) g`)); err != nil {
		t.Fatal(err)
	}
	key := lockKey("bollhav.migrate:" + schema)
	holder := testConn(t, dsn)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		t.Fatal(err)
	}

	app := pgtest.ApplicationName("bollhav_migrate_waiter_")
	conn := testConn(t, pgtest.WithApplicationName(dsn, app))
	locked := make(chan error, 1)
	go func() { locked <- lockMigrations(ctx, conn, key) }()
	pool := testPool(t, dsn)
	for asked := false; !asked; {
		select {
		case err := <-locked:
			t.Fatalf("lockMigrations returned (%v) while another session held the lock", err)
		case <-time.After(10 * time.Millisecond):
		}
		var query string
		if err := pool.QueryRow(ctx, `SELECT query FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&query); err != nil {
			t.Fatal(err)
		}
		asked = strings.Contains(query, "advisory_lock")
	}

	if _, err := holder.Exec(ctx, sqlFor(schema, `CREATE INDEX CONCURRENTLY t_x ON {schema}.t (x)`)); err != nil {
		t.Fatalf("the holder's concurrent build while a process waits for the lock: %v", err)
	}
	select {
	case err := <-locked:
		t.Fatalf("lockMigrations returned (%v) while another session held the lock", err)
	default:
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("lockMigrations once the lock was free: %v", err)
	}
}

// testConn opens a connection to dsn, closed when t ends.
func testConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
