package postgres

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at is t0 plus h hours.
func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

// openTest opens a store in a fresh schema, closed and dropped when t ends.
func openTest(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	opts.Schema = pgtest.Schema(t, dsn)
	s, err := Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dsn
}
