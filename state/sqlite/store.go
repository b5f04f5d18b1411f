// Package sqlite is the embedded state store: one SQLite file (by default
// .bollhav/state.db beside the spec) that needs no server, so a newcomer's
// first run and the demo work anywhere. It implements state.Store and passes
// state/storetest.
//
// SQLite allows one writer at a time, so the Store keeps exactly one writer
// connection and opens every write transaction with BEGIN IMMEDIATE: a
// deferred transaction that reads first and then writes can fail with
// SQLITE_BUSY at the upgrade, which busy_timeout does not retry. Reads go to
// a separate pool of read-only connections; in WAL mode they never wait for
// the writer, so the UI stays live while a run writes.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bollhav/bollhav/state"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// busyTimeoutMS is how long a connection waits for another process's lock
// before SQLITE_BUSY surfaces: long enough to ride out a large prefill by a
// second bollhav, short enough that a wedged process is reported.
const busyTimeoutMS = 30_000

// readers is the size of the read pool: the UI, the change feed and a
// streaming scan can read at once without queueing.
const readers = 4

// Store is a state.Store on one SQLite file.
type Store struct {
	path string
	w    *sql.DB // exactly one connection; every transaction BEGIN IMMEDIATE
	r    *sql.DB // read-only connections
	hub  *hub

	closeOnce sync.Once
	closeErr  error
}

var _ state.Store = (*Store)(nil)

// Open opens the store at path, creating the file and its directory on first
// use, and migrates it to this binary's schema. A file migrated by a newer
// bollhav is refused with an error wrapping state.ErrNewerSchema before
// anything in it changes.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: path %q contains '?' or '#', which the driver would read as options", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		// The driver would only say it is "unable to open database file".
		return nil, fmt.Errorf("sqlite: %s is a directory; name the store's file in it, such as %s", path, filepath.Join(path, "state.db"))
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: create the directory of %s: %w", path, err)
		}
	}
	w, err := sql.Open("sqlite", dsn(path, "immediate", false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, "deferred", true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	s := &Store{path: path, w: w, r: r}
	s.hub = newHub(path)
	return s, nil
}

// dsn builds the driver's connection string. Connection-level pragmas go in
// the DSN so that every connection the pool (re)opens gets them.
func dsn(path, txlock string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", txlock)
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	return path + "?" + q.Encode()
}

// Path is the file the store lives in.
func (s *Store) Path() string { return s.path }

// Backend implements state.Store.
func (s *Store) Backend() string { return "sqlite" }

// Close stops the wake-up poller, closes every Wake channel and both pools.
// It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.hub.close()
		s.closeErr = errors.Join(s.r.Close(), s.w.Close())
	})
	return s.closeErr
}

// write runs fn in a write transaction (BEGIN IMMEDIATE, through the one
// writer connection) and, once it commits, wakes this process's subscribers
// at once rather than at the next data_version poll — but only when it
// changed a row. A write that changed nothing (a lease release with no
// expired lease, which a task waiting on other workers runs every time it
// wakes) would otherwise wake that same waiter at once, and it would spin
// on BEGIN IMMEDIATE, fighting other processes for the write lock.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return fullDisk(s.path, s.writeTx(ctx, fn))
}

// writeTx is write, its errors as SQLite words them.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	before, err := totalChanges(ctx, tx)
	if err != nil {
		return errors.Join(err, rollback(tx))
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, rollback(tx))
	}
	after, err := totalChanges(ctx, tx)
	if err != nil {
		return errors.Join(err, rollback(tx))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	if after != before {
		s.hub.signal()
	}
	return nil
}

// totalChanges is the writer connection's count of rows inserted, updated
// or deleted since it opened (SQLite's total_changes()).
func totalChanges(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: counting changes: %w", err)
	}
	return n, nil
}

func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlite: rollback: %w", err)
	}
	return nil
}
