package engine_test

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/fixture"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
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

// generatedEngine is cfg's project in a fresh store of backend, closed
// (and, for PostgreSQL, dropped) when b ends: on PostgreSQL
// fixture.Postgres, the kept fixture of cfg with BOLLHAV_BENCH_KEEP set.
func generatedEngine(b *testing.B, backend string, cfg gen.Config) (*engine.Engine, gen.Summary) {
	b.Helper()
	if backend != "sqlite" {
		_, _, e, sum := fixture.Postgres(b, cfg, engine.Options{})
		return e, sum
	}
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatalf("open %s store: %v", backend, err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Errorf("close %s store: %v", backend, err)
		}
	})
	e, sum, err := gen.Populate(b.Context(), s, engine.Options{}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d models, %d units on %s in %v", sum.Models, sum.Units, backend, sum.Elapsed.Round(1e6))
	return e, sum
}

// incrementalBatch is how many units one committed batch changes.
const incrementalBatch = 100

// feedPage is how many changes one read of the feed asks for: a read
// that returns fewer has seen every change committed before it, so the
// batch is read in one.
const feedPage = 500

// incrementalBatches is how many batches one benchmark op times: the
// figure is their median, so one op (scripts/bench runs -benchtime=1x)
// is enough.
const incrementalBatches = 21

// BenchmarkIncrementalGate is issue 21's live-verdict figure: the time from
// a committed batch of 100 changed units (random units of the whole
// platform: applied ones re-pended, the others applied, each its own
// SetStatus and so its own change) to updated verdicts — the feed read
// after the index's seq and gate.Live.Apply — on PostgreSQL, at 1M units
// and, with BOLLHAV_BENCH_UNITS=10000000 BOLLHAV_BENCH_MODELS=10000, at
// 10M (below 1M it runs at BOLLHAV_BENCH_UNITS, 10k by default). The full
// sweep of the same store is timed in the same run (the best of three),
// as the floor: the goal is ≤ 20 ms a batch and ≥ 50× faster than it.
// Commits are outside the timer. After the batches the index's report
// must equal a fresh sweep's, or the benchmark fails.
func BenchmarkIncrementalGate(b *testing.B) {
	sizes := []int{}
	for _, n := range []int{1_000_000, 10_000_000} {
		if n <= gen.BenchUnits() {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		sizes = []int{gen.BenchUnits()}
	}
	for _, n := range sizes {
		b.Run("units="+gen.SizeName(n), func(b *testing.B) {
			e, sum := generatedEngine(b, "postgres", gen.BenchConfig(n))
			benchIncremental(b, e, sum)
		})
	}
}

func benchIncremental(b *testing.B, e *engine.Engine, sum gen.Summary) {
	ctx := b.Context()
	sweep := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		if _, err := e.GateSweep(ctx, gate.BlockedFilter{}, nil); err != nil {
			b.Fatal(err)
		}
		sweep = min(sweep, time.Since(start))
	}
	heapBefore := liveHeap()
	start := time.Now()
	live, err := e.LiveGate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	// What the index holds: the live heap it adds, after a collection.
	indexMB := float64(liveHeap()-heapBefore) / (1 << 20)
	pool := unitPool(b, e)
	r := rand.New(rand.NewPCG(21, 1))
	var times []time.Duration
	var stats gate.ApplyStats
	b.ResetTimer()
	for range b.N {
		for range incrementalBatches {
			b.StopTimer()
			commitBatch(b, e, pool, r)
			b.StartTimer()
			t0 := time.Now()
			for {
				cs, err := engine.StoreOf(e).Changes(ctx, live.Seq(), feedPage)
				if err != nil {
					b.Fatal(err)
				}
				if len(cs) == 0 {
					break
				}
				st, err := live.Apply(ctx, cs)
				if err != nil {
					b.Fatal(err)
				}
				if st.Rebuilt != "" {
					b.Fatalf("the index rebuilt: %s", st.Rebuilt)
				}
				stats.Changes, stats.Read, stats.Rejudged = stats.Changes+st.Changes, stats.Read+st.Read, stats.Rejudged+st.Rejudged
				if len(cs) < feedPage {
					break // the feed held no more when it was read
				}
			}
			times = append(times, time.Since(t0))
		}
	}
	b.StopTimer()
	slices.Sort(times)
	p50 := times[len(times)/2]
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(times[len(times)-1].Nanoseconds()), "max-ns")
	b.ReportMetric(float64(sweep.Nanoseconds()), "floor-ns/op")
	b.ReportMetric(float64(build.Nanoseconds()), "build-ns")
	b.ReportMetric(indexMB, "index-MB")
	b.ReportMetric(float64(stats.Rejudged)/float64(len(times)), "rejudged/batch")
	b.ReportMetric(float64(stats.Read)/float64(len(times)), "read/batch")
	b.Logf("%d units: batch p50 %v (max %v), full sweep %v (%.0fx), index built in %v, holding %.0f MB; per batch %d changes, %d units read, %d re-judged",
		sum.Units, p50, times[len(times)-1], sweep, float64(sweep)/float64(p50), build, indexMB,
		stats.Changes/len(times), stats.Read/len(times), stats.Rejudged/len(times))

	rep, err := e.GateSweep(ctx, gate.BlockedFilter{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	lrep, err := live.Report(gate.BlockedFilter{})
	if err != nil {
		b.Fatal(err)
	}
	if !reflect.DeepEqual(lrep, rep) {
		b.Fatalf("after the batches the live index reports %d units in %d models, a full sweep %d in %d", lrep.Units, len(lrep.Models), rep.Units, len(rep.Models))
	}
}

// liveHeap is the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// poolUnit is a unit a batch may change.
type poolUnit struct {
	model  string
	window state.Window
	status state.UnitStatus
}

// unitPool lists every unit of the store that is not running.
func unitPool(b *testing.B, e *engine.Engine) []poolUnit {
	sr, ok := engine.StoreOf(e).(state.SweepReader)
	if !ok {
		b.Fatal("the store has no SweepReader")
	}
	var pool []poolUnit
	err := sr.SweepUnits(b.Context(), e.Env().Suffix, func(model string, us []state.SweepUnit) error {
		for _, u := range us {
			if u.Status == state.CodeRunning {
				continue
			}
			w := state.Window{}
			if u.Since != 0 || u.Until != 0 {
				w = state.Window{Since: time.UnixMicro(u.Since).UTC(), Until: time.UnixMicro(u.Until).UTC()}
			}
			pool = append(pool, poolUnit{model: model, window: w, status: u.Status.Status()})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	sort.Slice(pool, func(i, j int) bool { // the same order on every run
		if pool[i].model != pool[j].model {
			return pool[i].model < pool[j].model
		}
		return pool[i].window.Since.Before(pool[j].window.Since)
	})
	return pool
}

// commitBatch changes incrementalBatch random units of the pool, each in
// its own SetStatus: an applied unit back to pending, any other applied
// now.
func commitBatch(b *testing.B, e *engine.Engine, pool []poolUnit, r *rand.Rand) {
	now := e.Clock()
	for range incrementalBatch {
		p := &pool[r.IntN(len(pool))]
		to := state.Applied
		if p.status == state.Applied {
			to = state.Pending
		}
		n, err := engine.StoreOf(e).SetStatus(b.Context(), state.StatusChange{Env: e.Env().Suffix, Model: p.model, Window: p.window,
			From: []state.UnitStatus{p.status}, To: to, AppliedAt: now, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		if n != 1 && !p.window.IsZero() {
			b.Fatalf("moved %d units of %s %s, want 1", n, p.model, p.window)
		}
		p.status = to
	}
}
