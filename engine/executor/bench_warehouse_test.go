package executor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	backends "github.com/bollhav/bollhav/state/stores"
)

// warehouseUnitsEnv overrides BenchmarkWarehouseThroughput's unit count.
const warehouseUnitsEnv = "BOLLHAV_BENCH_WAREHOUSE_UNITS"

// warehouseBenchSpec is one hourly query model whose data lives in the
// warehouse $BOLLHAV_BENCH_WH names: each unit is a real SQL unit (the
// ledger's fence, an INSERT of its window's row, the ledger's record, the
// warehouse's commit, then the store's).
const warehouseBenchSpec = `defaults:
  connection: {dsn_env_var: BOLLHAV_BENCH_WH}
models:
  - {name: bench.wh_hourly, chunking: {interval: 1h, start: "2024-01-01T00:00:00Z"},
     run: {query: "SELECT :since AS ts, 1 AS n", write: {mode: append}}}
`

// warehouseWorkers is the figure's "four workers": four Engine.Work loops,
// each over a store handle of its own, as engine's EngineThroughput has.
const warehouseWorkers = 4

// BenchmarkWarehouseThroughput is issue 20's figure: SQL units per second
// into a warehouse database apart from the state store, four workers, next
// to pgbench's TPS on the same server in the same run (floor-tps); the goal
// is units/s >= 0.5 x floor-tps. The state store is PostgreSQL (another
// database) or the embedded SQLite file.
func BenchmarkWarehouseThroughput(b *testing.B) {
	for _, backend := range []string{"postgres", "sqlite"} {
		b.Run("store="+backend, func(b *testing.B) {
			dsn := pgtest.DSN(b)
			floor, err := enginetest.PgbenchFloor(dsn)
			if err != nil {
				b.Skipf("no pgbench floor: %v", err)
			}
			var perSecond float64
			for range b.N {
				perSecond = drainWarehouseUnits(b, backend)
			}
			b.ReportMetric(perSecond, "units/s")
			b.ReportMetric(floor, "floor-tps")
		})
	}
}

func drainWarehouseUnits(b *testing.B, backend string) float64 {
	b.StopTimer()
	total := enginetest.BenchUnits(b, warehouseUnitsEnv, 4_000)
	whDSN := enginetest.Database(b, "bollhav_bench_wh_")
	b.Setenv("BOLLHAV_BENCH_WH", whDSN)

	dir := b.TempDir()
	sp, _ := enginetest.SpecFile(b, dir, warehouseBenchSpec)
	stores := enginetest.OpenHandles(b, backend, dir, warehouseWorkers)
	ctx := b.Context()
	wh := &executor.Warehouses{Open: backends.OpenWarehouse, Locate: backends.WarehouseLocation}
	b.Cleanup(func() { _ = wh.Close() })
	setup := engine.New(stores[0], sp, engine.Options{SpecDir: dir, Actor: "bench", Warehouses: wh})
	if _, err := setup.Apply(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ws := make([]state.Window, total)
	for i := range ws {
		ws[i] = state.MustWindow(start.Add(time.Duration(i)*time.Hour), start.Add(time.Duration(i+1)*time.Hour))
	}
	if _, err := stores[0].Prefill(ctx, state.PrefillRequest{Model: "bench.wh_hourly", Windows: ws, Now: time.Now()}); err != nil {
		b.Fatal(err)
	}
	// The pool and the ledger's schema are made before the clock starts,
	// as a long-running worker has them.
	if _, err := wh.Get(ctx, sp.Model("bench.wh_hourly").Connection); err != nil {
		b.Fatal(err)
	}

	elapsed := enginetest.Drain(b, len(stores), func(ctx context.Context, i int) error {
		e := engine.New(stores[i], sp, engine.Options{SpecDir: dir, Actor: "bench", Warehouses: wh})
		return e.Work(ctx, e.Executor(), engine.WorkOptions{Workers: 1, Name: fmt.Sprintf("bench-w%d", i)})
	}, func(started time.Time) time.Duration {
		deadline := started.Add(5 * time.Minute)
		for {
			st, err := stores[0].Stats(ctx, "", "bench.wh_hourly")
			if err != nil {
				b.Fatal(err)
			}
			if st.Counts[state.Applied] == total {
				return time.Since(started)
			}
			if st.Counts[state.Failed] > 0 || time.Now().After(deadline) {
				b.Fatalf("after %s: statuses %v", time.Since(started), st.Counts)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	// Exactly once: one row per window, no more.
	var rows, distinct int
	if err := pgtest.QueryRow(whDSN, `SELECT count(*), count(DISTINCT ts) FROM bench.wh_hourly`, nil, &rows, &distinct); err != nil {
		b.Fatal(err)
	}
	if rows != total || distinct != total {
		b.Fatalf("the warehouse holds %d rows for %d windows (%d distinct), want one each", rows, total, distinct)
	}
	return float64(total) / elapsed.Seconds()
}
