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
	sql     string
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

// migrate brings schema up to the newest of ms, in one transaction under a
// transaction-scoped advisory lock keyed on the schema: processes starting
// at once queue on the lock, and each one after the first finds the work
// done. A store already newer than ms is refused with state.ErrNewerSchema
// and left exactly as it was. It returns the version the store is at.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration) (int, error) {
	// Two stores in different schemas of one fresh database can both try to
	// create btree_gist; the loser sees a unique violation on the catalog and
	// succeeds on the next attempt, when the extension exists.
	const attempts = 5
	var err error
	for range attempts {
		var v int
		v, err = migrateOnce(ctx, pool, schema, ms)
		if err == nil || !retryable(err) {
			return v, err
		}
	}
	return 0, err
}

func migrateOnce(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration) (int, error) {
	latest := len(ms)
	var version int
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.migrate:"+schema)); err != nil {
			return err
		}
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
		for _, m := range ms[version:] {
			if _, err := tx.Exec(ctx, sqlFor(schema, m.sql)); err != nil {
				return fmt.Errorf("postgres: migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, sqlFor(schema, `INSERT INTO {schema}.schema_version (version, name) VALUES ($1, $2)`), m.version, m.name); err != nil {
				return err
			}
			version = m.version
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return version, nil
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
