package tui

import (
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/fixture"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
)

// BenchmarkUIScalePostgres is BenchmarkUIScale's rows of issue 33 on
// PostgreSQL, at the largest size only (BOLLHAV_BENCH_UNITS): the launch
// (exec to the first frame with data and to the traced incidents, and the
// child's peak RSS), the Blocked view's load, first frame and cursor move,
// and the process's peak RSS with it loaded (under MemoryLimit, as
// UIScale's). The store is a schema of the test server, kept between runs
// with BOLLHAV_BENCH_KEEP (fixture.Postgres); the spec the launch reads is
// written to a folder of the benchmark's.
func BenchmarkUIScalePostgres(b *testing.B) {
	models, sizes := scaleSizes(b)
	units := sizes[len(sizes)-1]
	b.Run("units="+unitsLabel(units), func(b *testing.B) {
		dsn, schema, e, _ := fixture.Postgres(b, gen.Config{Models: models, Units: units, Seed: scaleSeed}, engine.Options{Actor: "bench"})
		resetPeakRSS(b)
		underUIMemoryLimit(b)
		b.Run("launch-to-first-frame", func(b *testing.B) {
			benchLaunch(b, b.TempDir(), models, dsn, "BOLLHAV_PG_SCHEMA="+schema)
		})
		b.Run("view=blocked", func(b *testing.B) {
			benchScaleView(b, e, "blocked", "")
		})
		b.Run("peak-rss", func(b *testing.B) {
			peak := peakRSSMB(b)
			for b.Loop() {
			}
			b.ReportMetric(peak, "peak-MB")
		})
	})
}
