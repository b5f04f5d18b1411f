package engine_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// throughputUnitsEnv overrides the unit count of BenchmarkEngineThroughput.
// It is not BOLLHAV_BENCH_UNITS: scripts/bench sets that one to a million
// for the load and gate figures, which would keep this benchmark busy for
// a quarter of an hour.
const throughputUnitsEnv = "BOLLHAV_BENCH_ENGINE_UNITS"

// throughputWorkers is the figure's "4 workers": four Engine.Work loops,
// each over a store handle of its own, as four `bollhav worker` processes
// with their default of one unit at a time would be.
const throughputWorkers = 4

// throughputSpec is three models without upstreams: two fixed grids and a
// flexible model whose windows overlap their neighbours, so the benchmark
// also shows that claiming ahead and recording in batches never run two
// overlapping windows of it at once. The start is far enough in the past
// that every window is closed.
const throughputSpec = `models:
  - {name: bench.quarter, chunking: {interval: 15m, start: "2024-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: bench.hourly, chunking: {interval: 1h, start: "2024-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: bench.flex, chunking: {interval: 1h, start: "2024-01-01T00:00:00Z", flexibility: flex}, run: {command: ["true"]}}
`

// throughputManyModels is the second shape of the figure (issue 21): the
// same units spread evenly over this many hourly models, as a platform of
// many small pipelines would be. Every worker's commits then touch different
// models' rows, so what is left to serialise them is the store itself.
const throughputManyModels = 1000

// BenchmarkEngineThroughput is issue 8's engine throughput figure: units per
// second through claim → gate → execute (an in-process no-op) → apply, with
// four workers draining ~20,000 pending units. On PostgreSQL it also
// measures the floor, pgbench's TPS on the same server in the same run
// (floor-tps); the goal is units/s ≥ 0.5 × floor-tps, and ≥ 2 × for the
// models=1000 shape (issue 21).
func BenchmarkEngineThroughput(b *testing.B) {
	for _, run := range []struct {
		name, backend string
		models        int
	}{
		{"store=postgres", "postgres", 0},
		{"store=sqlite", "sqlite", 0},
		{"store=postgres/models=1000", "postgres", throughputManyModels},
	} {
		backend := run.backend
		b.Run(run.name, func(b *testing.B) {
			var floor float64
			if backend == "postgres" {
				dsn := pgtest.DSN(b)
				var err error
				if floor, err = enginetest.PgbenchFloor(dsn); err != nil {
					b.Skipf("no pgbench floor: %v", err)
				}
			}
			var perSecond float64
			for range b.N {
				perSecond = drainUnits(b, backend, run.models)
			}
			b.ReportMetric(perSecond, "units/s")
			if floor > 0 {
				b.ReportMetric(floor, "floor-tps")
			}
		})
	}
}

// drainUnits prefills a fresh store, lets four workers drain it and returns
// the units applied per second. Only the draining is timed. models 0 is
// throughputSpec's three models, otherwise that many hourly models.
func drainUnits(b *testing.B, backend string, models int) float64 {
	b.StopTimer()
	total := enginetest.BenchUnits(b, throughputUnitsEnv, 20_000)
	dir := b.TempDir()
	specText, windows := throughputSpec, throughputWindows(total)
	if models > 0 {
		specText, windows = manyModelsSpec(models), manyModelsWindows(models, total)
	}
	sp, _ := enginetest.SpecFile(b, dir, specText)
	stores := enginetest.OpenHandles(b, backend, dir, throughputWorkers)
	ctx := b.Context()
	setup := engine.New(stores[0], sp, engine.Options{SpecDir: dir, Actor: "bench"})
	if _, err := setup.Apply(ctx); err != nil {
		b.Fatal(err)
	}
	counts := map[string]int{}
	for model, ws := range windows {
		if len(ws) == 0 {
			continue
		}
		if _, err := stores[0].Prefill(ctx, state.PrefillRequest{Model: model, Windows: ws, Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
		counts[model] = len(ws)
	}

	x := &noopExec{}
	elapsed := enginetest.Drain(b, len(stores), func(ctx context.Context, i int) error {
		e := engine.New(stores[i], sp, engine.Options{SpecDir: dir, Actor: "bench"})
		return e.Work(ctx, x, engine.WorkOptions{Workers: 1, Name: fmt.Sprintf("bench-w%d", i)})
	}, func(started time.Time) time.Duration { return waitApplied(b, stores[0], x, counts, started) })
	x.check(b, total)
	return float64(total) / elapsed.Seconds()
}

// throughputWindows splits total units over the spec's models: half on the
// quarter-hour grid, 40% on the hourly grid, and the rest flexible windows
// of two hours starting every hour, each overlapping both neighbours.
func throughputWindows(total int) map[string][]state.Window {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	grid := func(n int, step, length time.Duration) []state.Window {
		ws := make([]state.Window, n)
		for i := range ws {
			since := start.Add(time.Duration(i) * step)
			ws[i] = state.MustWindow(since, since.Add(length))
		}
		return ws
	}
	quarter, hourly := total/2, total*2/5
	flex := total - quarter - hourly
	return map[string][]state.Window{
		"bench.quarter": grid(quarter, 15*time.Minute, 15*time.Minute),
		"bench.hourly":  grid(hourly, time.Hour, time.Hour),
		"bench.flex":    grid(flex, time.Hour, 2*time.Hour),
	}
}

// manyModelsSpec is n hourly models without upstreams.
func manyModelsSpec(n int) string {
	var sb strings.Builder
	sb.WriteString("models:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - name: bench.m%04d\n    chunking: {interval: 1h, start: \"2024-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n", i)
	}
	return sb.String()
}

// manyModelsWindows spreads total hourly units evenly over manyModelsSpec's
// n models (the first total%n models get one more).
func manyModelsWindows(n, total int) map[string][]state.Window {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := map[string][]state.Window{}
	for i := range n {
		k := total / n
		if i < total%n {
			k++
		}
		ws := make([]state.Window, k)
		for j := range ws {
			since := start.Add(time.Duration(j) * time.Hour)
			ws[j] = state.MustWindow(since, since.Add(time.Hour))
		}
		out[fmt.Sprintf("bench.m%04d", i)] = ws
	}
	return out
}

// waitApplied waits until every unit is applied and returns how long it took
// since started. The executor's count says when to start asking the store,
// so the poll adds next to nothing to the load being measured.
func waitApplied(b *testing.B, s state.Store, x *noopExec, counts map[string]int, started time.Time) time.Duration {
	total := 0
	for _, n := range counts {
		total += n
	}
	waiting := maps.Clone(counts)
	deadline := started.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if x.calls.Load() < int64(total) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for model, n := range waiting {
			st, err := s.Stats(b.Context(), "", model)
			if err != nil {
				b.Fatal(err)
			}
			if st.Counts[state.Applied] < n {
				break
			}
			delete(waiting, model) // applied units stay applied: never asked again
		}
		if len(waiting) == 0 {
			return time.Since(started)
		}
		time.Sleep(5 * time.Millisecond)
	}
	got := map[string]map[state.UnitStatus]int{}
	for model := range counts {
		st, _ := s.Stats(b.Context(), "", model)
		got[model] = st.Counts
	}
	b.Fatalf("after %s: %d executions of %d units, statuses %v", time.Since(started), x.calls.Load(), total, got)
	return 0
}

// noopExec does no work; it counts executions (every unit applied and as
// many executions as units means each ran exactly once) and logs the
// flexible model's executions on a logical clock, to check that
// overlapping windows never ran at once.
type noopExec struct {
	calls atomic.Int64
	tick  atomic.Int64
	mu    sync.Mutex
	flex  []flexRun
}

type flexRun struct {
	window     state.Window
	start, end int64
}

func (x *noopExec) Execute(_ context.Context, u executor.UnitRun) (executor.Result, error) {
	x.calls.Add(1)
	if u.Model.Name == "bench.flex" {
		start := x.tick.Add(1)
		end := x.tick.Add(1)
		x.mu.Lock()
		x.flex = append(x.flex, flexRun{window: *u.Window, start: start, end: end})
		x.mu.Unlock()
	}
	return executor.Result{}, nil
}

// check fails b when a unit ran more than once or two overlapping flexible
// windows ran at the same time.
func (x *noopExec) check(b *testing.B, total int) {
	if n := x.calls.Load(); n != int64(total) {
		b.Fatalf("%d executions for %d units: some unit ran more than once", n, total)
	}
	for i, a := range x.flex {
		for _, c := range x.flex[i+1:] {
			if a.window.Overlaps(c.window) && a.start < c.end && c.start < a.end {
				b.Fatalf("overlapping flexible windows %s and %s ran at once", a.window, c.window)
			}
		}
	}
}
