package stores

import (
	"context"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
)

// OpenWarehouse opens the database a model's connection names: PostgreSQL
// for postgres:// URLs and libpq keywords. A SQLite path is refused with a
// way out (leave the connection out: models without one live in the state
// store's database, which may be SQLite). Errors never hold the password.
func OpenWarehouse(ctx context.Context, dsn string) (state.Warehouse, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, fmt.Errorf("%w: the DSN is empty", state.ErrWarehouse)
	}
	d, err := state.ParseDSN(dsn, "")
	if err != nil {
		return nil, err
	}
	switch d.Kind {
	case state.KindPostgres:
		// postgres's errors name the server's address, never the DSN: the
		// user name stays out of the unit's error too.
		w, err := postgres.OpenWarehouse(ctx, d.ConnString())
		if err != nil {
			return nil, err
		}
		return w, nil
	case state.KindSQLite:
		return nil, fmt.Errorf("%w: a SQLite file cannot be a model's connection yet; leave connection out to keep the data in the state store's database, or name a PostgreSQL DSN", state.ErrWarehouse)
	}
	return nil, fmt.Errorf("%w: unsupported DSN kind %q", state.ErrWarehouse, d.Kind)
}

// WarehouseLocation reads where a connection's DSN points, without
// connecting: for status and why. No user, no password.
func WarehouseLocation(dsn string) (state.Location, error) {
	d, err := state.ParseDSN(dsn, "")
	if err != nil {
		return state.Location{}, err
	}
	if d.Kind == state.KindSQLite {
		return state.Location{Driver: "sqlite", Database: d.Path}, nil
	}
	return postgres.WarehouseLocation(d.ConnString())
}
