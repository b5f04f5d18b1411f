package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bollhav/bollhav/state"
)

// migrationFiles are the store's schema migrations, NNNN_name.sql, applied in
// order. They only ever add: an upgrade never drops a table or a column that
// holds data (migrate_test.go checks the files for it).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string // as the file says; builds and plain read it
}

// loadMigrations reads NNNN_name.sql files from dir (state.ReadMigrations),
// each named without its .sql.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	read, err := state.ReadMigrations(fsys, dir)
	if err != nil {
		return nil, err
	}
	ms := make([]migration, 0, len(read))
	for _, m := range read {
		ms = append(ms, migration{version: m.Version, name: strings.TrimSuffix(m.File, ".sql"), sql: m.SQL})
	}
	return ms, nil
}

// migrate brings schema up to the newest of ms and returns the version the
// store is at. It runs on a connection of its own that holds the schema's
// migration lock (lockMigrations) throughout: processes starting at once
// take turns, and each one after the first finds the work done. A store
// already newer than ms is refused with state.ErrNewerSchema and left
// exactly as it was.
//
// A store being made gets every migration in one transaction, and appears
// whole or not at all. An existing store is upgraded one migration at a
// time (upgradeTo), each recorded in the transaction that finishes it: a
// crash leaves it at the last version recorded, which the next migrate
// carries on from.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration) (int, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	// The connection leaves the pool and is closed after, whatever
	// happened: its session holds the lock, which must not outlive the
	// migration on a connection the pool hands to someone else.
	conn := c.Hijack()
	defer func() { _ = conn.Close(ctx) }()
	if err := lockMigrations(ctx, conn, lockKey("bollhav.migrate:"+schema)); err != nil {
		return 0, err
	}
	// Two stores in different schemas of one fresh database can both try to
	// create btree_gist; the loser sees a unique violation on the catalog and
	// succeeds on the next attempt, when the extension exists. A concurrent
	// build that a process of an earlier release deadlocked with is built
	// again on the next attempt.
	const attempts = 5
	for range attempts {
		var v int
		v, err = migrateOnce(ctx, conn, schema, ms)
		if err == nil || !retryable(err) {
			return v, err
		}
	}
	return 0, err
}

func migrateOnce(ctx context.Context, conn *pgx.Conn, schema string, ms []migration) (int, error) {
	latest := len(ms)
	var version int
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, quoteIdent(schema)+".schema_version").Scan(&exists); err != nil {
			return err
		}
		if !exists {
			// Only a store that does not exist yet needs the right to create
			// one; a read-only UI user can open an existing store.
			if _, err := tx.Exec(ctx, sqlFor(schema, `
				CREATE SCHEMA IF NOT EXISTS {schema};
				CREATE TABLE {schema}.schema_version (
				    version    integer     PRIMARY KEY,
				    name       text        NOT NULL,
				    applied_at timestamptz NOT NULL DEFAULT now()
				)`)); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, sqlFor(schema, `SELECT coalesce(max(version), 0) FROM {schema}.schema_version`)).Scan(&version); err != nil {
			return err
		}
		if version > latest {
			return fmt.Errorf("postgres: schema %q is at version %d but this bollhav knows versions up to %d; upgrade bollhav: %w",
				schema, version, latest, state.ErrNewerSchema)
		}
		if version > 0 {
			return nil
		}
		for _, m := range ms {
			if err := apply(ctx, tx, schema, m, m.plain()); err != nil {
				return err
			}
		}
		version = latest
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, m := range ms[version:] {
		if err := upgradeTo(ctx, conn, schema, m); err != nil {
			return 0, err
		}
		version = m.version
	}
	return version, nil
}

// upgradeTo applies m to an existing store: its concurrent index builds
// first, each outside a transaction (migrate_index.go), then the rest of it
// and its version in one transaction.
func upgradeTo(ctx context.Context, conn *pgx.Conn, schema string, m migration) error {
	builds, rest := m.builds()
	for _, b := range builds {
		if err := buildIndex(ctx, conn, schema, b); err != nil {
			return fmt.Errorf("postgres: migration %s, index %s: %w", m.name, b.name, err)
		}
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return apply(ctx, tx, schema, m, rest) })
}

// apply runs sql, all or part of m, in tx and records m's version there.
func apply(ctx context.Context, tx pgx.Tx, schema string, m migration, sql string) error {
	if _, err := tx.Exec(ctx, sqlFor(schema, sql)); err != nil {
		return fmt.Errorf("postgres: migration %s: %w", m.name, err)
	}
	_, err := tx.Exec(ctx, sqlFor(schema, `INSERT INTO {schema}.schema_version (version, name) VALUES ($1, $2)`), m.version, m.name)
	return err
}

// errNoMigrations would mean the binary was built without its migrations.
var errNoMigrations = errors.New("postgres: no migrations embedded")

func embeddedMigrations() ([]migration, error) {
	ms, err := loadMigrations(migrationFiles, "migrations")
	if err == nil && len(ms) == 0 {
		err = errNoMigrations
	}
	return ms, err
}
