package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

// migrationFiles are the schema's versions, NNNN_name.sql, applied in order.
// A released migration is never edited: an upgrade only ever adds files.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded migrations by version
// (state.ReadMigrations), each named by its file; a malformed name is a build
// mistake, so it panics.
func migrations() []migration {
	read, err := state.ReadMigrations(migrationFiles, "migrations")
	if err != nil {
		panic("sqlite: " + err.Error())
	}
	out := make([]migration, 0, len(read))
	for _, m := range read {
		out = append(out, migration{version: m.Version, name: m.File, sql: m.SQL})
	}
	return out
}

// latestVersion is the schema version this binary writes.
func latestVersion() int { return len(migrations()) }

// migrate brings the database to latestVersion. It first reads the version
// without writing anything, so a newer file is refused untouched; then, in
// WAL mode, it applies the missing migrations in one BEGIN IMMEDIATE
// transaction (SQLite's DDL is transactional), so two processes opening a new
// file at once serialize and the second finds nothing to do.
func migrate(ctx context.Context, db *sql.DB) error {
	v, err := readVersion(ctx, db)
	if err != nil {
		return err
	}
	if v > latestVersion() {
		return newerSchema(v)
	}
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return fmt.Errorf("enable WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("enable WAL: the journal mode stayed %q", mode)
	}
	if v == latestVersion() {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS "schema_version" (
		"version"    INTEGER PRIMARY KEY,
		"name"       TEXT    NOT NULL,
		"applied_at" INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max("version"), 0) FROM "schema_version"`).Scan(&v); err != nil {
		return fmt.Errorf("migrate: read version: %w", err)
	}
	if v > latestVersion() {
		return newerSchema(v)
	}
	for _, m := range migrations()[v:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO "schema_version" ("version", "name", "applied_at") VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

func newerSchema(v int) error {
	return fmt.Errorf("schema version %d, this bollhav knows up to %d; upgrade bollhav: %w", v, latestVersion(), state.ErrNewerSchema)
}

// readVersion reads the schema version without creating anything: 0 for a
// new file.
func readVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM "sqlite_master" WHERE "type" = 'table' AND "name" = 'schema_version'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	var v int
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max("version"), 0) FROM "schema_version"`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// SchemaVersion implements state.Store.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	return readVersion(ctx, s.r)
}

// Identity implements state.Store: the id migration 0010 made.
func (s *Store) Identity(ctx context.Context) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT "id" FROM "store_identity"`).Scan(&id)
	return id, err
}

// Current reports whether path is a store that Open would open without
// writing to it: a file at this bollhav's schema version, already in WAL
// mode. It opens the file read-only and creates nothing, so a caller can
// ask before it knows it will use the store (the UI's launch reads ahead
// only from such a store, and a bad spec then leaves it as it was).
func Current(ctx context.Context, path string) (bool, error) {
	if strings.ContainsAny(path, "?#") {
		return false, nil
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return false, nil
	}
	db, err := sql.Open("sqlite", dsn(path, "deferred", true))
	if err != nil {
		return false, err
	}
	defer db.Close()
	v, err := readVersion(ctx, db)
	if err != nil || v != latestVersion() {
		return false, err
	}
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return false, err
	}
	return strings.EqualFold(mode, "wal"), nil
}
