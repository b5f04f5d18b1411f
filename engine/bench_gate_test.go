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
// commits need not wait for the disk.
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
		schema := pgtest.Schema(b, dsn)
		s, err = postgres.Open(b.Context(), gen.FixtureDSN(dsn), postgres.Options{Schema: schema})
	}
	if err != nil {
		b.Fatalf("open %s store: %v", backend, err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("close %s store: %v", backend, err)
		}
	})
	e := &engine.Engine{Store: s}
	sum, err := gen.Populate(b.Context(), e, cfg)
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
