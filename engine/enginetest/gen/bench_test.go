package gen_test

import (
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
)

// BenchmarkPopulate generates the benchmarks' project (gen.BenchConfig at
// BOLLHAV_BENCH_UNITS) into an empty store of each backend, the way every
// benchmark fixture is made: one bulk copy. Goal (issue 33): the 10M
// fixture in under 10 minutes on each store. Reported: s/fixture and
// units/s.
func BenchmarkPopulate(b *testing.B) {
	cfg := gen.BenchConfig(gen.BenchUnits())
	for _, backend := range enginetest.Backends {
		b.Run("units="+gen.SizeName(cfg.Units)+"/"+backend, func(b *testing.B) {
			var units int
			for range b.N {
				b.StopTimer()
				s := enginetest.Open(b, backend)
				b.StartTimer()
				_, sum, err := gen.Populate(b.Context(), s, engine.Options{}, cfg)
				if err != nil {
					b.Fatal(err)
				}
				units += sum.Units
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/fixture")
			b.ReportMetric(float64(units)/b.Elapsed().Seconds(), "units/s")
		})
	}
}
