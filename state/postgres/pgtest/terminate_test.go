package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestWithApplicationName: both DSN forms carry the name as asked, quotes
// and all, over a name the DSN already had.
func TestWithApplicationName(t *testing.T) {
	app := ApplicationName(`bollhav_it's_a\_`)
	for _, base := range []string{
		"postgres://u:pw@127.0.0.1:5432/test?sslmode=disable&application_name=old",
		"host=127.0.0.1 port=5432 user=u password=pw dbname=test sslmode=disable application_name=old",
	} {
		cfg, err := pgconn.ParseConfig(WithApplicationName(base, app))
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if got := cfg.RuntimeParams["application_name"]; got != app || cfg.Database != "test" || cfg.Password != "pw" {
			t.Errorf("%s: application_name %q database %q, want %q in test", base, got, cfg.Database, app)
		}
	}
}

// TestTerminate: the connections named app are ended — their next
// statement fails — and a connection named otherwise lives on.
func TestTerminate(t *testing.T) {
	dsn := DSN(t)
	app, bystanderApp := ApplicationName("bollhav_pgtest_victim_"), ApplicationName("bollhav_pgtest_bystander_")
	victims := []*pgx.Conn{connectAs(t, dsn, app), connectAs(t, dsn, app)}
	bystander := connectAs(t, dsn, bystanderApp)

	n, err := Terminate(dsn, app)
	if err != nil || n != 2 {
		t.Fatalf("Terminate: %d ended, %v; want the 2 connections named %s", n, err, app)
	}
	for i, c := range victims {
		if _, err := c.Exec(t.Context(), "SELECT 1"); err == nil {
			t.Errorf("victim %d still answers after Terminate", i)
		}
	}
	if _, err := bystander.Exec(t.Context(), "SELECT 1"); err != nil {
		t.Errorf("a connection named otherwise was hit: %v", err)
	}
	// pg_terminate_backend only signals: an ended backend stays listed
	// until its process has exited, so a second Terminate right away may
	// signal it again. Once it is gone there is nothing left to end.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := Terminate(dsn, app)
		if err == nil && n == 0 {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Errorf("a second Terminate: %d ended, %v; want none left", n, err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTerminatorKeepsTheDatabaseDown: while it runs, a connection named app
// that is made after it started is ended too; after Stop one lives.
func TestTerminatorKeepsTheDatabaseDown(t *testing.T) {
	dsn := DSN(t)
	app := ApplicationName("bollhav_pgtest_down_")
	k := StartTerminating(t, dsn, app, 10*time.Millisecond)
	conn, err := pgx.Connect(t.Context(), WithApplicationName(dsn, app))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// Ended within the Terminator's next round or so: wait for the
	// statement to fail (bounded generously, not timed).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := conn.Exec(t.Context(), "SELECT 1"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a connection made while the Terminator runs was never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := k.Stop(); n < 1 {
		t.Errorf("Stop reports %d ended, want at least the one connection", n)
	}
	if err := QueryRow(WithApplicationName(dsn, app), `SELECT 1`, nil, new(int)); err != nil {
		t.Errorf("after Stop a connection named %s still fails: %v", app, err)
	}
}
