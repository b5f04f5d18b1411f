package stores

import (
	"context"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/sqlite"
)

// OpenWarehouse opens the database a model's connection names: PostgreSQL
// for postgres:// URLs and libpq keywords, a SQLite file for a path (made
// when missing). Errors never hold the password.
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
		w, err := sqlite.OpenWarehouse(ctx, d.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", state.ErrWarehouse, err)
		}
		return w, nil
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
