// Package stores opens the state store a DSN names: PostgreSQL for
// postgres:// and postgresql:// URLs or libpq keywords, the embedded SQLite
// file otherwise. It is the one place that knows both backends, so the
// engine and the CLI depend on state.Store alone.
package stores

import (
	"context"
	"fmt"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/sqlite"
)

// Options tune how a store is opened.
type Options struct {
	// PostgresSchema is the schema a PostgreSQL store lives in;
	// postgres.DefaultSchema ("bollhav") when empty.
	PostgresSchema string
}

// Open parses dsn (empty means .bollhav/state.db beside the spec, in
// specDir) and opens that store, migrating it when needed. Errors name the
// store by its redacted DSN: a password never reaches a message.
func Open(ctx context.Context, dsn, specDir string, opts Options) (state.Store, state.DSN, error) {
	d, err := state.ParseDSN(dsn, specDir)
	if err != nil {
		return nil, state.DSN{}, err
	}
	var s state.Store
	switch d.Kind {
	case state.KindPostgres:
		s, err = postgres.Open(ctx, d.ConnString(), postgres.Options{Schema: opts.PostgresSchema})
	case state.KindSQLite:
		s, err = sqlite.Open(ctx, d.Path)
	default:
		err = fmt.Errorf("unsupported store kind %q", d.Kind)
	}
	if err != nil {
		return nil, d, fmt.Errorf("opening state store %s: %w", d.Redacted(), err)
	}
	return s, d, nil
}
