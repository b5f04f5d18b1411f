package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Exists reports whether the database dsn names holds a store in the
// schema opts names (DefaultSchema when empty): whether the schema has the
// store's schema_version table. It creates nothing, where Open creates the
// schema; a command that only reads asks it first, so that reading never
// makes a store. Its errors are Open's: one line without the password.
func Exists(ctx context.Context, dsn string, opts Options) (bool, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if err := checkSchema(schema); err != nil {
		return false, err
	}
	pool, _, err := connect(ctx, dsn, func(*pgxpool.Config) {})
	if err != nil {
		return false, err
	}
	defer pool.Close()
	var exists bool
	err = pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, quoteIdent(schema)+".schema_version").Scan(&exists)
	return exists, err
}
