package metrics_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"github.com/bollhav/bollhav/engine/gate"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/metrics"
)

// settle claims model's unit of hour h at at and records out for it.
func settle(t *testing.T, st state.Store, model string, h int, at time.Time, lease time.Duration, out *state.Outcome) state.Claim {
	t.Helper()
	ctx := context.Background()
	cs, err := st.Claim(ctx, state.ClaimRequest{Models: []string{model}, Window: hour(h), Worker: "test", Lease: lease, Limit: 1, Now: at})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim %s hour %d: %v, %d claims", model, h, err, len(cs))
	}
	if out != nil {
		if err := st.Complete(ctx, cs[0], *out); err != nil {
			t.Fatalf("complete %s hour %d: %v", model, h, err)
		}
	}
	return cs[0]
}

// TestGaugesMatchTheStore: every gauge against a state worked out by hand.
// raw.a: hours 0-3 applied at 07:00, hour 4 failed, hour 5 pending;
// mart.b: hours 0-1 blocked, 2-5 pending; mart.c: its one day pending,
// which both blocked mart.b hours reach (WHOLE). Two units are held.
func TestGaugesMatchTheStore(t *testing.T) {
	ctx := context.Background()
	now := t0.Add(8 * time.Hour)
	e, st := newWorld(t, now)
	if _, err := st.SetStatus(ctx, state.StatusChange{Model: "raw.a", Window: state.Window{Since: t0, Until: t0.Add(4 * time.Hour)},
		From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: t0.Add(7 * time.Hour), Now: t0.Add(7 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	settle(t, st, "raw.a", 4, t0.Add(7*time.Hour), time.Hour, &state.Outcome{Status: state.Failed, Error: "exit status 1", At: t0.Add(7 * time.Hour)})
	for h := range 2 {
		settle(t, st, "mart.b", h, t0.Add(7*time.Hour), time.Hour, &state.Outcome{Status: state.Blocked, BlockedReason: "raw.a (ENCAPSULATE): missing", At: t0.Add(7 * time.Hour)})
	}
	if _, err := st.Prefill(ctx, state.PrefillRequest{Model: "mart.c", Windows: []state.Window{{Since: t0, Until: t0.Add(24 * time.Hour)}}, Now: t0}); err != nil {
		t.Fatal(err)
	}

	m := newMonitor(t, metrics.Config{Engine: e, Version: "v1.2.3"})
	fams := scrape(t, m.Handler())
	for _, c := range []struct {
		model, pipeline string
		counts          map[state.UnitStatus]float64
	}{
		{"raw.a", "ingest", map[state.UnitStatus]float64{state.Applied: 4, state.Failed: 1, state.Pending: 1}},
		{"mart.b", "core", map[state.UnitStatus]float64{state.Blocked: 2, state.Pending: 4}},
		{"mart.c", "core", map[state.UnitStatus]float64{state.Pending: 1}},
	} {
		for _, s := range state.Statuses {
			got := value(fams, "bollhav_units", lbl("model", c.model, "pipeline", c.pipeline, "status", string(s)))
			if got != c.counts[s] {
				t.Errorf("bollhav_units{%s,%s} = %v, want %v", c.model, s, got, c.counts[s])
			}
		}
	}
	for _, c := range []struct {
		name, model string
		want        float64
	}{
		{"bollhav_blocked_units", "mart.b", 2},
		{"bollhav_blocked_units", "raw.a", 0},
		{"bollhav_freshness_lag_seconds", "raw.a", 3600}, // now 08:00 − newest applied_at 07:00
		{"bollhav_freshness_lag_seconds", "mart.b", -1},  // nothing applied: absent
		{"bollhav_freshness_limit_seconds", "raw.a", 1800},
		{"bollhav_freshness_limit_seconds", "mart.b", -1}, // mart.c reads it with no limit
	} {
		if got := value(fams, c.name, lbl("model", c.model)); got != c.want {
			t.Errorf("%s{model=%q} = %v, want %v", c.name, c.model, got, c.want)
		}
	}
	// The rows of `incidents`, by kind: every kind present.
	rep, err := e.Incidents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[gate.IncidentKind]float64{}
	for _, inc := range rep.Incidents {
		want[inc.Kind]++
	}
	if len(rep.Incidents) == 0 {
		t.Fatal("the world has no incident to count")
	}
	for _, k := range gate.IncidentKinds {
		if got := value(fams, "bollhav_open_incidents", lbl("kind", string(k))); got != want[k] {
			t.Errorf("bollhav_open_incidents{kind=%s} = %v, want %v", k, got, want[k])
		}
	}
	// What each incident holds and releases is the report's, and the held
	// units are the two blocked mart.b hours, each counted once.
	if got := value(fams, "bollhav_held_units", nil); got != 2 {
		t.Errorf("bollhav_held_units = %v, want the 2 blocked mart.b hours", got)
	}
	holding := 0
	for _, inc := range rep.Incidents {
		l := lbl("kind", string(inc.Kind), "model", inc.Model)
		if got := value(fams, "bollhav_incident_holds_units", l); got != float64(inc.Blocked) {
			t.Errorf("bollhav_incident_holds_units{%s %s} = %v, want the report's %d", inc.Kind, inc.Model, got, inc.Blocked)
		}
		if got := value(fams, "bollhav_incident_releases_units", l); got != float64(inc.Releases) {
			t.Errorf("bollhav_incident_releases_units{%s %s} = %v, want the report's %d", inc.Kind, inc.Model, got, inc.Releases)
		}
		holding += inc.Blocked
	}
	if holding == 0 {
		t.Error("no incident holds the blocked mart.b hours: the holds gauges are not tested")
	}
	if got := value(fams, "bollhav_build_info", lbl("version", "v1.2.3")); got != 1 {
		t.Errorf("bollhav_build_info{version=v1.2.3} = %v, want 1", got)
	}
}

// TestCountersFollowTheFeed: what workers do after the Monitor started is
// counted — claims, a retry, lease expiries (one alone, two released at
// once), unit durations measured claim to outcome — and what happened
// before it is not.
func TestCountersFollowTheFeed(t *testing.T) {
	ctx := context.Background()
	e, st := newWorld(t, t0.Add(8*time.Hour))
	at := t0.Add(7 * time.Hour)
	settle(t, st, "raw.a", 0, at, time.Hour, &state.Outcome{Status: state.Applied, At: at.Add(time.Minute)}) // before: not counted
	wall := time.Now()
	if _, err := st.CreateRun(ctx, state.Run{Pipeline: "core", StateMode: "discover", Status: state.RunRunning, StartedAt: wall.Add(-3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, 1, state.RunSucceeded, wall.Add(-time.Hour)); err != nil { // finished before: not observed
		t.Fatal(err)
	}

	m := newMonitor(t, metrics.Config{Engine: e})
	settle(t, st, "raw.a", 5, at, time.Hour, &state.Outcome{Status: state.Applied, At: at.Add(90 * time.Second)})
	settle(t, st, "mart.b", 2, at, time.Hour, &state.Outcome{Status: state.Pending, Error: "exit status 1", At: at.Add(30 * time.Second), NotBefore: at.Add(10 * time.Minute)})
	settle(t, st, "mart.b", 3, at, time.Minute, nil)
	if n, err := st.ReleaseExpired(ctx, at.Add(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("ReleaseExpired = %d, %v; want hour 3", n, err)
	}
	settle(t, st, "mart.b", 4, at.Add(3*time.Minute), time.Minute, nil)
	settle(t, st, "mart.b", 5, at.Add(3*time.Minute), time.Minute, nil)
	if n, err := st.ReleaseExpired(ctx, at.Add(10*time.Minute)); err != nil || n != 2 {
		t.Fatalf("ReleaseExpired = %d, %v; want hours 4 and 5", n, err)
	}
	run, err := st.CreateRun(ctx, state.Run{Pipeline: "core", StateMode: "discover", Status: state.RunRunning, StartedAt: wall.Add(-2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, run, state.RunFailed, wall.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second refresh observes nothing twice
		if err := m.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}

	fams := scrape(t, m.Handler())
	for _, c := range []struct {
		name, model string
		want        float64
	}{
		{"bollhav_unit_claims_total", "raw.a", 1},
		{"bollhav_unit_claims_total", "mart.b", 4},
		{"bollhav_unit_retries_total", "mart.b", 1},
		{"bollhav_unit_retries_total", "raw.a", 0},
		{"bollhav_lease_expiries_total", "mart.b", 3},
		{"bollhav_lease_expiries_total", "raw.a", 0},
	} {
		if got := value(fams, c.name, lbl("model", c.model)); got != c.want {
			t.Errorf("%s{model=%q} = %v, want %v", c.name, c.model, got, c.want)
		}
	}
	for _, c := range []struct {
		name           string
		labels         map[string]string
		count          uint64
		sum            float64
		notInBucketsLE float64 // the sample is above this bucket
	}{
		{"bollhav_unit_duration_seconds", lbl("pipeline", "ingest", "status", "applied"), 1, 90, 32},
		{"bollhav_unit_duration_seconds", lbl("pipeline", "core", "status", "retry"), 1, 30, 8},
		{"bollhav_run_duration_seconds", lbl("pipeline", "core", "status", "failed"), 1, 121, 64},
	} {
		s, ok := sample(fams, c.name, c.labels)
		if !ok || s.Histogram == nil {
			t.Errorf("%s%v: no histogram", c.name, c.labels)
			continue
		}
		h := s.Histogram
		if h.GetSampleCount() != c.count || h.GetSampleSum() != c.sum {
			t.Errorf("%s%v: count %d sum %v, want %d and %v", c.name, c.labels, h.GetSampleCount(), h.GetSampleSum(), c.count, c.sum)
		}
		for _, b := range h.GetBucket() {
			if b.GetUpperBound() == c.notInBucketsLE && b.GetCumulativeCount() != 0 {
				t.Errorf("%s%v: bucket le=%v holds %d, want 0", c.name, c.labels, b.GetUpperBound(), b.GetCumulativeCount())
			}
		}
	}
	if _, ok := sample(fams, "bollhav_run_duration_seconds", lbl("status", "succeeded")); ok {
		t.Error("the run that finished before the Monitor started was observed")
	}
	if _, ok := sample(fams, "bollhav_unit_duration_seconds", lbl("status", "pending")); ok {
		t.Error("a lease expiry was observed as a unit duration")
	}
}

// TestScrapeReadsNoStore: once the snapshot is taken, a scrape serves it
// with the store closed; the refresh then fails, counts the store error
// and keeps the gauges; /readyz says not ready in one line that names the
// store's kind and not its path; /healthz stays ok.
func TestScrapeReadsNoStore(t *testing.T) {
	ctx := context.Background()
	e, st := newWorld(t, t0.Add(8*time.Hour))
	m := newMonitor(t, metrics.Config{Engine: e})
	h := m.Handler()
	if code, body := get(h, "/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q, want 200 ready", code, body)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, h)
	if got := value(fams, "bollhav_units", lbl("model", "raw.a", "status", "pending")); got != 6 {
		t.Errorf("with the store closed, bollhav_units{raw.a,pending} = %v, want the snapshot's 6", got)
	}
	if err := m.Refresh(ctx); err == nil {
		t.Fatal("Refresh on a closed store succeeded")
	}
	fams = scrape(t, h)
	for _, kind := range []string{"feed", "status"} {
		if got := value(fams, "bollhav_store_errors_total", lbl("kind", kind)); got != 1 {
			t.Errorf("bollhav_store_errors_total{kind=%q} = %v, want 1", kind, got)
		}
	}
	if got := value(fams, "bollhav_store_errors_total", lbl("kind", "incidents")); got != 0 {
		t.Errorf("bollhav_store_errors_total{kind=incidents} = %v, want 0 (present before any failure)", got)
	}
	if got := value(fams, "bollhav_units", lbl("model", "raw.a", "status", "pending")); got != 6 {
		t.Errorf("after a failed refresh, bollhav_units{raw.a,pending} = %v, want the last good 6", got)
	}
	code, body := get(h, "/readyz")
	if code != 503 || body != "not ready: the sqlite state store cannot be read\n" {
		t.Errorf("/readyz on a closed store = %d %q", code, body)
	}
	if code, body := get(h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
}

// TestIncidentsHook: the open incident count comes from Config.Incidents
// when it is set; when it fails, the last count stays and the failure is
// a store error of kind incidents.
func TestIncidentsHook(t *testing.T) {
	ctx := context.Background()
	e, _ := newWorld(t, t0.Add(8*time.Hour))
	n, fail := 7, false
	m := newMonitor(t, metrics.Config{Engine: e, Incidents: func(context.Context) (*gate.IncidentReport, error) {
		if fail {
			return nil, errors.New("incidents unavailable")
		}
		rep := &gate.IncidentReport{}
		for i := range n {
			rep.Incidents = append(rep.Incidents, gate.Incident{Kind: gate.IncidentStale, Model: fmt.Sprint("raw.", i)})
		}
		return rep, nil
	}})
	if got := value(scrape(t, m.Handler()), "bollhav_open_incidents", lbl("kind", "stale")); got != 7 {
		t.Errorf("bollhav_open_incidents = %v, want 7 from the hook", got)
	}
	n, fail = 3, true
	if err := m.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "incidents unavailable") {
		t.Errorf("Refresh = %v, want the hook's error", err)
	}
	fams := scrape(t, m.Handler())
	if got := value(fams, "bollhav_open_incidents", lbl("kind", "stale")); got != 7 {
		t.Errorf("bollhav_open_incidents after a failed count = %v, want the last 7", got)
	}
	if got := value(fams, "bollhav_store_errors_total", lbl("kind", "incidents")); got != 1 {
		t.Errorf("bollhav_store_errors_total{kind=incidents} = %v, want 1", got)
	}
}

// TestRunKeepsTheGaugesCurrent: with the loop running, a unit that fails
// in the store shows in the gauges within a few intervals, without a call
// to Refresh; the loop ends with its context.
func TestRunKeepsTheGaugesCurrent(t *testing.T) {
	e, st := newWorld(t, t0.Add(8*time.Hour))
	m, err := metrics.NewMonitor(context.Background(), metrics.Config{Engine: e, FeedPoll: 10 * time.Millisecond, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if got := value(scrape(t, m.Handler()), "bollhav_units", lbl("model", "raw.a", "status", "failed")); got != 0 {
		t.Fatalf("bollhav_units{raw.a,failed} = %v before the failure, want 0", got)
	}
	settle(t, st, "raw.a", 1, t0.Add(7*time.Hour), time.Hour, &state.Outcome{Status: state.Failed, Error: "boom", At: t0.Add(7 * time.Hour)})
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams := scrape(t, m.Handler())
		if value(fams, "bollhav_units", lbl("model", "raw.a", "status", "failed")) == 1 &&
			value(fams, "bollhav_units", lbl("model", "raw.a", "status", "pending")) == 5 &&
			value(fams, "bollhav_unit_claims_total", lbl("model", "raw.a")) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the failed unit never reached the gauges")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestScrapeGzip: a scraper that accepts gzip (Prometheus does) gets the
// exposition compressed, and it parses to the same samples; one that does
// not gets plain text.
func TestScrapeGzip(t *testing.T) {
	e, _ := newWorld(t, t0.Add(8*time.Hour))
	h := newMonitor(t, metrics.Config{Engine: e}).Handler()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept-Encoding", "deflate, gzip;q=0.8")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("/metrics with gzip accepted: %d, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(zr)
	if err != nil {
		t.Fatalf("the gzipped exposition does not parse: %v", err)
	}
	if got := value(fams, "bollhav_units", lbl("model", "raw.a", "status", "pending")); got != 6 {
		t.Errorf("gzipped bollhav_units{raw.a,pending} = %v, want 6", got)
	}
	for _, enc := range []string{"", "gzip;q=0", "identity"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", enc)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Header().Get("Content-Encoding") != "" || !strings.Contains(rec.Body.String(), "bollhav_units{") {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want plain text", enc, rec.Header().Get("Content-Encoding"))
		}
	}
}
