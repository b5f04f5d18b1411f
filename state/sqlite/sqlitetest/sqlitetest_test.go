package sqlitetest_test

import (
	"path/filepath"
	"testing"

	"database/sql"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/state/sqlite/sqlitetest"
)

// TestWriterIdle: a store at rest leaves the write lock free; a writer
// inside a transaction holds it, and gives it back when it commits.
func TestWriterIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !sqlitetest.WriterIdle(t, path) {
		t.Fatal("a store at rest: the write lock is taken")
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if sqlitetest.WriterIdle(t, path) {
		t.Error("a writer inside a transaction: the write lock reads free")
	}
	if _, err := conn.ExecContext(t.Context(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if !sqlitetest.WriterIdle(t, path) {
		t.Error("after the commit: the write lock is still taken")
	}
}
