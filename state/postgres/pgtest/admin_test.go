package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAdmin: the admin connection sees a named connection idle, busy inside
// a transaction, waiting on an advisory lock it holds, and gone once
// terminated; a connection named otherwise is never counted.
func TestAdmin(t *testing.T) {
	dsn := DSN(t)
	admin := NewAdmin(t, dsn)
	app := ApplicationName("bollhav_pgtest_admin_")
	conn := connectAs(t, dsn, app)
	connectAs(t, dsn, ApplicationName("bollhav_pgtest_bystander_"))
	if n, busy := admin.Backends(app), admin.Busy(app); n != 1 || busy != 0 {
		t.Fatalf("an idle connection: %d backends, %d busy; want 1, 0", n, busy)
	}

	key := LockKey()
	admin.Lock(key)
	blocked := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), `SELECT pg_advisory_xact_lock($1)`, key)
		blocked <- err
	}()
	waitFor(t, "the connection waiting on the lock", func() bool { return admin.Waiting(app, "advisory") == 1 })
	if busy := admin.Busy(app); busy != 1 {
		t.Errorf("a connection waiting on a lock: %d busy, want 1", busy)
	}
	select {
	case err := <-blocked:
		t.Fatalf("the lock was granted while the admin held it (err %v)", err)
	default:
	}
	admin.Unlock(key)
	if err := <-blocked; err != nil {
		t.Fatalf("after Unlock: %v", err)
	}

	n, err := admin.Terminate(t.Context(), app)
	if err != nil || n != 1 {
		t.Fatalf("Terminate = %d, %v; want 1 ended", n, err)
	}
	waitFor(t, "the terminated backend gone", func() bool { return admin.Backends(app) == 0 })
	if _, err := conn.Exec(t.Context(), `SELECT 1`); err == nil {
		t.Error("a terminated connection still runs statements")
	}
}

// connectAs opens a connection to dsn named app, closed when t ends.
func connectAs(t *testing.T, dsn, app string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), WithApplicationName(dsn, app))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
