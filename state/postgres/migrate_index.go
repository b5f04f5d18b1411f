package postgres

import (
	"context"
	"errors"
	"regexp"

	"github.com/jackc/pgx/v5"
)

// An index a migration adds to a table that may already hold millions of
// rows is built with CREATE INDEX CONCURRENTLY, written so in the migration
// file. A plain CREATE INDEX holds a SHARE lock on its table for the whole
// build and, in the migration's transaction, until the upgrade commits
// (the upgrade from version 7 takes about 20 s at 10M units here): every
// worker's claim and completion waits that long, and, queued behind it, so
// does every later one (issue 35, docs/BENCHMARKS.md, UpgradeLock). A
// concurrent build takes a lock that writes do not wait on; the price is
// that it cannot run inside a transaction, and that a build that fails
// leaves an INVALID index of its name behind.
//
// So, on a store being upgraded, the runner takes a migration's concurrent
// builds out of it and runs them first, one statement each, outside any
// transaction: they may only use what earlier migrations made. Then the
// rest of the migration and its version commit in one transaction, so the
// version is recorded only once every index is valid. A rerun after a
// crash finds each index valid (kept) or INVALID (dropped and built again).
// A store being made runs the same statements without CONCURRENTLY, in the
// one transaction that makes it: no writer waits on a table that does not
// exist yet, and a concurrent build would wait for every older transaction
// in the database.

// concurrentBuild matches one concurrent index build: a statement that
// starts a line, its name plain (lower case, unquoted) and in the schema
// of its table, up to the first semicolon. IF NOT EXISTS is left out on
// purpose: it would keep an INVALID index; the runner checks instead.
var concurrentBuild = regexp.MustCompile(`(?m)^([ \t]*CREATE\s+(?:UNIQUE\s+)?INDEX)\s+CONCURRENTLY\s+([a-z_][a-z0-9_]*)(\s+ON\s[^;]*;)`)

// indexBuild is one concurrent index build of a migration.
type indexBuild struct {
	name string // unqualified: the index lives in its table's schema
	sql  string // the statement, with {schema}
}

// builds returns m's concurrent index builds, in file order, and the rest
// of its SQL, which runs in a transaction after them.
func (m migration) builds() ([]indexBuild, string) {
	var bs []indexBuild
	for _, match := range concurrentBuild.FindAllStringSubmatch(m.sql, -1) {
		bs = append(bs, indexBuild{name: match[2], sql: match[0]})
	}
	return bs, concurrentBuild.ReplaceAllString(m.sql, "")
}

// plain is m's SQL with every concurrent build made an ordinary one, for the
// transaction that makes a new store.
func (m migration) plain() string {
	return concurrentBuild.ReplaceAllString(m.sql, "$1 $2$3")
}

// buildIndex runs b outside a transaction on conn, which holds the
// migration lock. An index of b's name that is valid was built by an
// earlier attempt that stopped before recording its migration, and is
// kept. One that is INVALID is what a failed or interrupted concurrent
// build leaves: queries never read it, writes may keep it up to date for
// nothing, and a second build under its name fails; it is dropped (also
// concurrently, so no write waits on the drop) and built again.
func buildIndex(ctx context.Context, conn *pgx.Conn, schema string, b indexBuild) error {
	index := quoteIdent(schema) + "." + quoteIdent(b.name)
	var valid bool
	err := conn.QueryRow(ctx, `SELECT indisvalid FROM pg_catalog.pg_index WHERE indexrelid = to_regclass($1)`, index).Scan(&valid)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	case valid:
		return nil
	default:
		if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY `+index); err != nil {
			return err
		}
	}
	_, err = conn.Exec(ctx, sqlFor(schema, b.sql))
	return err
}
