package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/ui/metrics"
)

// BenchmarkScrape times one scrape of /metrics over a store of 1,000
// models (BOLLHAV_BENCH_MODELS) and 10,000 units from the production-shaped
// generator: the goal is ≤ 50 ms. The scrape serves the snapshot, so its
// cost grows with the models, not the units. Also timed: a full refresh of
// the snapshot (every model's counts and coverage, the blocked units and
// the incidents, the registry), which runs in the background every minute
// and never inside a scrape.
func BenchmarkScrape(b *testing.B) {
	ctx := b.Context()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	e, sum, err := gen.Populate(ctx, s, engine.Options{Actor: "bench"}, gen.BenchConfig(10_000))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d models, %d units", sum.Models, sum.Units)
	m, err := metrics.NewMonitor(ctx, metrics.Config{Engine: e})
	if err != nil {
		b.Fatal(err)
	}
	h := m.Handler()
	for _, format := range []struct{ name, accept, encoding string }{
		{"text", "", ""},
		{"openmetrics", "application/openmetrics-text;version=1.0.0", ""},
		// What a Prometheus server sends: OpenMetrics first, gzip.
		{"prometheus", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", "gzip"},
	} {
		b.Run("models="+gen.SizeName(sum.Models)+"/format="+format.name, func(b *testing.B) {
			size := 0
			for b.Loop() {
				req := httptest.NewRequest("GET", "/metrics", nil)
				if format.accept != "" {
					req.Header.Set("Accept", format.accept)
				}
				if format.encoding != "" {
					req.Header.Set("Accept-Encoding", format.encoding)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("/metrics: %d", rec.Code)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size)/1024, "KiB")
		})
	}
	b.Run("models="+gen.SizeName(sum.Models)+"/refresh=full", func(b *testing.B) {
		for b.Loop() {
			if err := m.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
