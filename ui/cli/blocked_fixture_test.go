package cli

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/fixture"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state/sqlite"
)

// blockedFixture generates cfg's project into a store of backend (a
// SQLite file in dir, or a PostgreSQL schema: BOLLHAV_BENCH_KEEP's kept
// one when set, fixture.Postgres) and returns its DSN, schema and an
// engine over it.
func blockedFixture(b testing.TB, backend, dir string, cfg gen.Config) (string, string, *engine.Engine) {
	b.Helper()
	opts := engine.Options{Actor: "bench"}
	if backend != "sqlite" {
		dsn, schema, e, _ := fixture.Postgres(b, cfg, opts)
		return dsn, schema, e
	}
	dsn := filepath.Join(dir, "state.db")
	s, err := sqlite.Open(b.Context(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	e, sum, err := gen.Populate(b.Context(), s, opts, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d models, %d units in %s", sum.Models, sum.Units, sum.Elapsed.Round(time.Second))
	return dsn, "", e
}
