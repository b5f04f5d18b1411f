package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// blockedFixture generates cfg's project into a store of backend (a
// SQLite file in dir, or a PostgreSQL schema: BOLLHAV_BENCH_KEEP's kept
// one when set) and returns its DSN, schema and an engine over it.
func blockedFixture(b testing.TB, backend, dir string, cfg gen.Config) (string, string, *engine.Engine) {
	b.Helper()
	ctx := b.Context()
	var (
		s      state.Store
		dsn    string
		schema string
		err    error
	)
	populate := true
	if backend == "sqlite" {
		dsn = filepath.Join(dir, "state.db")
		s, err = sqlite.Open(ctx, dsn)
	} else {
		dsn = pgtest.DSN(b)
		var kept bool
		if schema, kept = gen.KeptSchema(cfg); !kept {
			schema = pgtest.Schema(b, dsn)
		}
		s, err = postgres.Open(ctx, gen.FixtureDSN(dsn), postgres.Options{Schema: schema})
		if err == nil && kept {
			n, _ := s.StatusCounts(ctx, "")
			populate = len(n) == 0
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	opts := engine.Options{Actor: "bench"}
	if !populate {
		e, _, err := gen.Attach(s, opts, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return dsn, schema, e
	}
	e, sum, err := gen.Populate(ctx, s, opts, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d models, %d units in %s", sum.Models, sum.Units, sum.Elapsed.Round(time.Second))
	if backend == "postgres" {
		// The population's dead index entries gone and the visibility map
		// set, as autovacuum leaves a table at rest (this machine's server
		// runs without it): the index-only reads count on it.
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{schema, "units"}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	return dsn, schema, e
}
