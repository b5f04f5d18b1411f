// Package sqlitetest looks at an SQLite store's file from outside the
// store, the way another process would, for tests that must know what the
// store's writers are doing. The SQL for that lives here, not in the tests
// of the engine.
package sqlitetest

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// WriterIdle reports whether no connection, in this process or another,
// holds the write lock of the SQLite file at path: a BEGIN IMMEDIATE that
// does not wait gets it (and gives it back at once).
func WriterIdle(t testing.TB, path string) bool {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatalf("sqlitetest: opening %s: %v", path, err)
	}
	defer db.Close()
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatalf("sqlitetest: connecting to %s: %v", path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		return false
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatalf("sqlitetest: rolling back the probe of %s: %v", path, err)
	}
	return true
}

// Exec runs statements on the SQLite file at path from outside any store,
// as another program writing the file would: a test's fixture data.
func Exec(t testing.TB, path, statements string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("sqlitetest: opening %s: %v", path, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), statements); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
}
