package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state"
)

// BenchmarkStatusBatch loads every model's status the way `bollhav status`
// and the Pipelines view do (Engine.Status: registrations, outdated counts,
// and the kept summary of counts, coverage and newest applied_at in one
// read), on a generated project of BOLLHAV_BENCH_MODELS models (1,000) and
// BOLLHAV_BENCH_UNITS units (1,000,000 is the goal scale, ≤ 50 ms).
// before-ns is the same project read the way Status did before the kept
// summary — Stats and Coverage per model — timed once in the same run;
// summaries-ns is Store.Summaries alone (mean of 5 reads after the loop).
func BenchmarkStatusBatch(b *testing.B) {
	cfg := gen.BenchConfig(gen.BenchUnits())
	for _, backend := range []string{"postgres", "sqlite"} {
		b.Run(fmt.Sprintf("models=%d/store=%s/units=%s", cfg.Models, backend, gen.SizeName(cfg.Units)), func(b *testing.B) {
			e, sum := generatedEngine(b, backend, cfg)
			ctx := b.Context()
			recs, err := engine.StoreOf(e).Models(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for _, rec := range recs {
				if _, err := engine.StoreOf(e).Stats(ctx, "", rec.Name); err != nil {
					b.Fatal(err)
				}
				if _, err := engine.StoreOf(e).Coverage(ctx, "", rec.Name, state.Window{}); err != nil {
					b.Fatal(err)
				}
			}
			before := time.Since(start)
			for b.Loop() {
				st, err := e.Status(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if len(st) != sum.Models {
					b.Fatalf("Status returned %d models, want %d", len(st), sum.Models)
				}
			}
			// The summary read alone, the part this benchmark is about;
			// the rest of Status is the registrations and outdated counts.
			start = time.Now()
			const reads = 5
			for range reads {
				if _, err := engine.StoreOf(e).Summaries(ctx, "", ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/reads, "summaries-ns")
			b.ReportMetric(float64(before.Nanoseconds()), "before-ns")
			b.ReportMetric(float64(sum.Units), "units")
		})
	}
}

// BenchmarkOutdatedCounts computes every model's outdated count the way
// `bollhav status` does (Engine.OutdatedCounts: the registrations, each
// model's current fingerprint from its stored definition, and the kept
// counts), on a generated project at the largest of the bench sizes
// (BOLLHAV_BENCH_UNITS; 1,000 models and 1,000,000 units is the goal
// scale, ≤ 100 ms). The cost should not grow with the units: compare a
// small run's figure.
func BenchmarkOutdatedCounts(b *testing.B) {
	sizes := gen.BenchSizes()
	n := sizes[len(sizes)-1]
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run("store="+backend+"/units="+gen.SizeName(n), func(b *testing.B) {
			e, sum := generatedEngine(b, backend, gen.BenchConfig(n))
			for b.Loop() {
				if _, err := e.OutdatedCounts(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sum.Models), "models")
		})
	}
}
