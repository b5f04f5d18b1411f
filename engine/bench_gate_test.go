package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// BenchmarkGateSweep judges the gate of every unit that is not applied in a
// generated project (engine.GateSweep, what `bollhav blocked --recheck`
// runs), at 10k, 100k and 1M units to show how the cost grows; sizes above
// BOLLHAV_BENCH_UNITS (10,000 when unset) are left out. Each store is
// generated once, before the timer starts; one op is one whole sweep, and
// units/s counts every unit of the store (the sweep reads them all).
func BenchmarkGateSweep(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, n := range gen.BenchSizes() {
			b.Run("store="+backend+"/units="+gen.SizeName(n), func(b *testing.B) {
				e, sum := generatedEngine(b, backend, gen.BenchConfig(n))
				// One untimed sweep first: the first read of freshly written
				// PostgreSQL pages also writes their hint bits, a one-off
				// cost of the bulk load, not of sweeping.
				if _, err := e.GateSweep(b.Context(), gate.BlockedFilter{}, nil); err != nil {
					b.Fatal(err)
				}
				var rep *gate.SweepReport
				for b.Loop() {
					var err error
					if rep, err = e.GateSweep(b.Context(), gate.BlockedFilter{}, nil); err != nil {
						b.Fatal(err)
					}
				}
				perOp := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(sum.Units)/perOp, "units/s")
				b.ReportMetric(float64(rep.Units), "judged/op")
			})
		}
	}
}

// generatedEngine opens a fresh store of backend, closed (and, for
// PostgreSQL, dropped) when b ends, and populates it with the project of
// cfg. The PostgreSQL store is opened with gen.FixtureDSN: the fixture's
// commits need not wait for the disk. With BOLLHAV_BENCH_KEEP set, the
// PostgreSQL store is the kept fixture of cfg instead (keptEngine).
func generatedEngine(b *testing.B, backend string, cfg gen.Config) (*engine.Engine, gen.Summary) {
	b.Helper()
	var (
		s   state.Store
		err error
	)
	switch backend {
	case "sqlite":
		s, err = sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
	default:
		dsn := pgtest.DSN(b)
		schema, kept := gen.KeptSchema(cfg)
		if !kept {
			schema = pgtest.Schema(b, dsn)
		}
		s, err = postgres.Open(b.Context(), gen.FixtureDSN(dsn), postgres.Options{Schema: schema})
		if err == nil && kept {
			return keptEngine(b, s, schema, cfg)
		}
	}
	if err != nil {
		b.Fatalf("open %s store: %v", backend, err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("close %s store: %v", backend, err)
		}
	})
	return populate(b, s, cfg)
}

// keptComplete marks a kept fixture whose generation ran to the end (the
// schema's comment).
const keptComplete = "bollhav bench fixture: complete"

// keptEngine is generatedEngine over a kept PostgreSQL fixture
// (gen.KeptSchema): generated on its first use and left in place, attached
// on every later one.
func keptEngine(b *testing.B, s state.Store, schema string, cfg gen.Config) (*engine.Engine, gen.Summary) {
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("close the kept store: %v", err)
		}
	})
	recs, err := s.Models(b.Context(), "")
	switch {
	case err != nil:
		b.Fatalf("reading the kept fixture %s: %v", schema, err)
	case len(recs) == 0:
		e, sum := populate(b, s, cfg)
		// Populate registers every model before it writes a unit: only
		// this mark says the units were all written.
		if err := pgtest.Exec(pgtest.DSN(b), "COMMENT ON SCHEMA "+pgx.Identifier{schema}.Sanitize()+" IS '"+keptComplete+"'"); err != nil {
			b.Fatal(err)
		}
		return e, sum
	}
	var mark *string
	if err := pgtest.QueryRow(pgtest.DSN(b), "SELECT obj_description(to_regnamespace($1)::oid, 'pg_namespace')", []any{schema}, &mark); err != nil {
		b.Fatal(err)
	}
	if mark == nil || *mark != keptComplete {
		b.Fatalf("the kept fixture %s was not generated to the end (a run was cut short): drop the schema", schema)
	}
	e, sum, err := gen.Attach(s, engine.Options{}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("attached the kept fixture %s: %d models, %d units as generated", schema, sum.Models, sum.Units)
	return e, sum
}

// populate generates cfg's project into s; on PostgreSQL it then leaves
// the table as autovacuum would.
func populate(b *testing.B, s state.Store, cfg gen.Config) (*engine.Engine, gen.Summary) {
	backend := "sqlite"
	if _, ok := s.(*postgres.Store); ok {
		backend = "postgres"
	}
	e, sum, err := gen.Populate(b.Context(), s, engine.Options{}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if backend == "postgres" {
		// As autovacuum leaves a table at rest (and as the postgres
		// package's benchmarks do): the population's dead rows gone and
		// the visibility map set, which the sweep's index-only scans read.
		// Not pgtest.Exec: its 30 s bound is too short for a million
		// rows on a loaded machine.
		conn, err := pgx.Connect(b.Context(), pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(b.Context(), "VACUUM ANALYZE "+pgx.Identifier{s.(*postgres.Store).Schema(), "units"}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("generated %d models, %d units on %s in %v", sum.Models, sum.Units, backend, sum.Elapsed.Round(1e6))
	return e, sum
}
