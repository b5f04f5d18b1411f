package metrics_test

import (
	"context"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/metrics"
)

// everyFamilyWorld is newWorld with something in every family: raw.a's
// hours 0-3 applied (a lag, and a freshness limit read by mart.b and
// mart.c), hour 4 failed and mart.b's hour 4 blocked behind it (a failed
// root that holds a unit), mart.b's hours 0-1 stored blocked; then, after
// the Monitor started, a claim applied, a retry, a lease expiry and a
// finished run, so the counters and both histograms have samples. It
// returns the engine and /metrics as the Monitor's handler serves it after
// a refresh: what `serve --metrics` serves.
func everyFamilyWorld(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	ctx := context.Background()
	e, st := newWorld(t, t0.Add(8*time.Hour))
	at := t0.Add(7 * time.Hour)
	if _, err := st.SetStatus(ctx, state.StatusChange{Model: "raw.a", Window: state.Window{Since: t0, Until: t0.Add(4 * time.Hour)},
		From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: at, Now: at}); err != nil {
		t.Fatal(err)
	}
	settle(t, st, "raw.a", 4, at, time.Hour, &state.Outcome{Status: state.Failed, Error: "exit status 1", At: at})
	for h := range 2 {
		settle(t, st, "mart.b", h, at, time.Hour, &state.Outcome{Status: state.Blocked, BlockedReason: "raw.a (ENCAPSULATE): missing", At: at})
	}
	settle(t, st, "mart.b", 4, at, time.Hour, &state.Outcome{Status: state.Blocked,
		BlockedReason: "raw.a (ENCAPSULATE): missing [2026-01-01T04:00:00Z, 2026-01-01T05:00:00Z)", At: at})
	m := newMonitor(t, metrics.Config{Engine: e, Version: "v1.2.3"})
	settle(t, st, "raw.a", 5, at, time.Hour, &state.Outcome{Status: state.Applied, At: at.Add(90 * time.Second)})
	settle(t, st, "mart.b", 2, at, time.Hour, &state.Outcome{Status: state.Pending, Error: "exit status 1", At: at.Add(30 * time.Second), NotBefore: at.Add(10 * time.Minute)})
	settle(t, st, "mart.b", 3, at, time.Minute, nil)
	if n, err := st.ReleaseExpired(ctx, at.Add(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("ReleaseExpired = %d, %v", n, err)
	}
	wall := time.Now()
	run, err := st.CreateRun(ctx, state.Run{Pipeline: "core", StateMode: "discover", Status: state.RunRunning, StartedAt: wall.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, run, state.RunFailed, wall.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return e, rec.Body.String()
}

// familyLabels are the labels of every bollhav family, as docs/oncall.md
// lists them: every family about a model carries model and pipeline (the
// counters once carried model alone, the unit durations pipeline alone);
// a run, of a pipeline or of named models, carries pipeline.
var familyLabels = map[string][]string{
	"bollhav_units":                      {"model", "pipeline", "status"},
	"bollhav_blocked_units":              {"model", "pipeline"},
	"bollhav_held_units":                 nil,
	"bollhav_incident_holds_units":       {"kind", "model", "pipeline"},
	"bollhav_incident_releases_units":    {"kind", "model", "pipeline"},
	"bollhav_open_incidents":             {"kind"},
	"bollhav_freshness_lag_seconds":      {"model", "pipeline"},
	"bollhav_freshness_limit_seconds":    {"model", "pipeline"},
	"bollhav_snapshot_timestamp_seconds": nil,
	"bollhav_unit_claims_total":          {"model", "pipeline"},
	"bollhav_unit_retries_total":         {"model", "pipeline"},
	"bollhav_lease_expiries_total":       {"model", "pipeline"},
	"bollhav_unit_duration_seconds":      {"model", "pipeline", "status"},
	"bollhav_run_duration_seconds":       {"pipeline", "status"},
	"bollhav_store_errors_total":         {"kind"},
	"bollhav_build_info":                 {"goversion", "version"},
}

// TestLabelsAreTheSameWhereverTheyApply: every bollhav family is served
// with the labels familyLabels gives it, on every sample — model and
// pipeline together wherever a family is about a model — and no family is
// served that the table (and docs/oncall.md) does not list.
func TestLabelsAreTheSameWhereverTheyApply(t *testing.T) {
	_, body := everyFamilyWorld(t)
	fams := parse(t, body)
	for name, want := range familyLabels {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) == 0 {
			t.Errorf("%s is not served: the world has nothing in it, or it is gone", name)
			continue
		}
		for _, m := range f.GetMetric() {
			if got := labelNames(m); !slices.Equal(got, want) {
				t.Errorf("%s has a sample labelled %v, want %v", name, got, want)
				break
			}
		}
	}
	for name, f := range fams {
		if !strings.HasPrefix(name, "bollhav_") {
			continue
		}
		if _, ok := familyLabels[name]; !ok {
			t.Errorf("%s is served but not in familyLabels (nor, likely, in docs/oncall.md)", name)
		}
		for _, m := range f.GetMetric() {
			if got := labelNames(m); slices.Contains(got, "model") != slices.Contains(got, "pipeline") && name != "bollhav_run_duration_seconds" {
				t.Errorf("%s carries %v: model and pipeline go together", name, got)
				break
			}
		}
	}
}

// TestHelpNamesEveryLabelValue: each family's HELP names every value its
// kind and status labels take in the exposition — the open incidents'
// HELP once left out outdated.
func TestHelpNamesEveryLabelValue(t *testing.T) {
	_, body := everyFamilyWorld(t)
	fams := parse(t, body)
	checked := 0
	for name, f := range fams {
		if !strings.HasPrefix(name, "bollhav_") {
			continue
		}
		help := f.GetHelp()
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "kind" && l.GetName() != "status" {
					continue
				}
				checked++
				if !containsWord(help, l.GetValue()) {
					t.Errorf("%s{%s=%q}: its HELP does not name %q: %s", name, l.GetName(), l.GetValue(), l.GetValue(), help)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no kind or status label served: the test checks nothing")
	}
	if !containsWord(fams["bollhav_open_incidents"].GetHelp(), "outdated") {
		t.Errorf("bollhav_open_incidents' HELP does not name outdated: %s", fams["bollhav_open_incidents"].GetHelp())
	}
}

// TestHoldsAreOneSeriesPerOpenRoot: bollhav_incident_holds_units has one
// series per open incident, labelled with its kind, model and pipeline and
// valued at the units it holds — the report's count that `bollhav
// incidents` prints as "holds N units" — so an alert can say "raw.a failed,
// N units wait". The exposition never says "impact".
func TestHoldsAreOneSeriesPerOpenRoot(t *testing.T) {
	e, body := everyFamilyWorld(t)
	fams := parse(t, body)
	got := map[string]float64{}
	for _, s := range fams["bollhav_incident_holds_units"].GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		got[l["kind"]+" "+l["model"]+" "+l["pipeline"]] = s.GetGauge().GetValue()
	}
	// Which root holds which unit is the report's to say: the gauge has
	// exactly its roots, each with its count.
	rep, err := e.Incidents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, inc := range rep.Incidents {
		want[string(inc.Kind)+" "+inc.Model+" "+inc.Pipeline] = float64(inc.Blocked)
	}
	if !maps.Equal(got, want) {
		t.Errorf("holds series %v, want the report's roots %v", got, want)
	}
	if want["failed raw.a ingest"] < 1 {
		t.Errorf("raw.a's failed hour holds no unit in the report %v: the world is not what the test means", want)
	}
	if strings.Contains(strings.ToLower(body), "impact") {
		t.Error("the exposition says impact")
	}
}

// parse reads an exposition with Prometheus' own parser.
func parse(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

func labelNames(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName())
	}
	slices.Sort(out)
	return out
}

// containsWord reports whether s has w as a whole word (gate_error is one).
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before, after := j == 0 || !isWordByte(s[j-1]), j+len(w) == len(s) || !isWordByte(s[j+len(w)])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
