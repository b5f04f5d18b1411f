package stores

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
)

// Exists reports whether the store dsn names (empty: .bollhav/state.db
// beside the spec, in specDir) exists, creating nothing: a SQLite file
// that is there, a PostgreSQL schema that holds a store. Open creates a
// store that is missing; a command that only reads asks Exists first. A
// path that is there but no store, or that no store can have, is
// reported as existing, for Open to say what is wrong with it.
func Exists(ctx context.Context, dsn, specDir string, opts Options) (bool, state.DSN, error) {
	d, err := state.ParseDSN(dsn, specDir)
	if err != nil {
		return false, state.DSN{}, err
	}
	if d.Kind == state.KindPostgres {
		ok, err := postgres.Exists(ctx, d.ConnString(), postgres.Options{Schema: opts.PostgresSchema})
		if err != nil {
			return false, d, fmt.Errorf("opening state store %s: %w", d.Redacted(), err)
		}
		return ok, d, nil
	}
	if strings.ContainsAny(d.Path, "?#") {
		// No store can live there: Open says why.
		return true, d, nil
	}
	if _, err := os.Stat(d.Path); os.IsNotExist(err) {
		return false, d, nil
	}
	return true, d, nil
}
