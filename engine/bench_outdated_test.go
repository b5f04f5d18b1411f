package engine_test

import (
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
)

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
