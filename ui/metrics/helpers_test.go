package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/ui/metrics"
)

// worldSpec, worked out by hand: raw.a is hourly over six hours of
// 2026-01-01 (pipeline ingest); mart.b and mart.c read it with freshness
// limits of 2h and 30m, so raw.a's tightest limit is 30m; mart.c reads
// mart.b too, with no limit.
const worldSpec = `models:
  - {name: raw.a, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", end: "2026-01-01T06:00:00Z"},
     run: {command: ["true"]}}
  - {name: mart.b, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", end: "2026-01-01T06:00:00Z"},
     upstream: [{name: raw.a, contract: encapsulate, freshness: {within: 2h}}], run: {command: ["true"]}}
  - name: mart.c
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z"}
    upstream:
      - {name: raw.a, contract: encapsulate, freshness: {within: 30m}}
      - {name: mart.b, contract: whole}
    run: {command: ["true"]}
`

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func hour(h int) state.Window {
	return state.Window{Since: t0.Add(time.Duration(h) * time.Hour), Until: t0.Add(time.Duration(h+1) * time.Hour)}
}

// newWorld is a real SQLite store with worldSpec applied, every window of
// raw.a and mart.b prefilled pending, and an engine whose clock stands at
// now, and the store under it.
func newWorld(t testing.TB, now time.Time) (*engine.Engine, state.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sp, err := spec.Parse("bollhav.yaml", []byte(worldSpec))
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(st, sp, engine.Options{Now: func() time.Time { return now }, LeaseClock: func() time.Time { return now }})
	if _, err := e.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"raw.a", "mart.b"} {
		var ws []state.Window
		for h := range 6 {
			ws = append(ws, hour(h))
		}
		if _, err := st.Prefill(ctx, state.PrefillRequest{Model: m, Windows: ws, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	return e, st
}

// newMonitor starts a Monitor on e whose loop never runs by itself (the
// tests call Refresh).
func newMonitor(t testing.TB, cfg metrics.Config) *metrics.Monitor {
	t.Helper()
	cfg.FeedPoll, cfg.Interval, cfg.FullEvery = time.Hour, time.Hour, time.Hour
	m, err := metrics.NewMonitor(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scrape GETs /metrics from h and parses it with Prometheus' own parser.
func scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, rec.Body)
	}
	return fams
}

// get GETs path from h.
func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

// sample finds the sample of family name whose labels include want; ok is
// false when there is none.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (*dto.Metric, bool) {
	f, ok := fams[name]
	if !ok {
		return nil, false
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && have[k] == v
		}
		if match {
			return m, true
		}
	}
	return nil, false
}

// value is a gauge's or counter's value, or -1 when the sample is absent.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m, ok := sample(fams, name, labels)
	switch {
	case !ok:
		return -1
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return -1
}

func lbl(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
