package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// metricsServe is a `bollhav serve --metrics` process on a free port.
type metricsServe struct {
	addr   string
	cmd    *exec.Cmd
	stderr *sshScreen
}

// startMetricsServe runs `bollhav serve --metrics` as a real process with
// args (--spec, --dsn) and env added, and waits until it listens.
func startMetricsServe(t *testing.T, env []string, args ...string) *metricsServe {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &metricsServe{addr: l.Addr().String(), stderr: &sshScreen{}}
	l.Close()
	s.cmd = exec.Command(os.Args[0], append([]string{"-test.run=^$", "--", "serve", "--metrics", s.addr}, args...)...)
	s.cmd.Env = append(append(os.Environ(), "BOLLHAV_CLI_MAIN=1"), env...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
	s.stderr.waitFor(t, "metrics on http://"+s.addr)
	return s
}

func (s *metricsServe) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// scrape GETs /metrics and parses it with Prometheus' own parser.
func (s *metricsServe) scrape(t *testing.T) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	code, body := s.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams, body
}

// stop sends SIGTERM and wants exit 0.
func (s *metricsServe) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, s.stderr.text())
	}
}

// gauges indexes a gauge family by the values of labels.
func gauges(fams map[string]*dto.MetricFamily, name string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		var key []string
		for _, l := range labels {
			key = append(key, have[l])
		}
		out[strings.Join(key, " ")] = m.GetGauge().GetValue()
	}
	return out
}

// timeInLabel is a window bound or any other timestamp as bollhav prints one.
var timeInLabel = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)

// checkLabels fails t for a label value that carries a time (a window), or
// any of secrets (a DSN, a password, a path).
func checkLabels(t *testing.T, fams map[string]*dto.MetricFamily, secrets ...string) {
	t.Helper()
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				if timeInLabel.MatchString(v) {
					t.Errorf("%s: label %s=%q carries a time", name, l.GetName(), v)
				}
				for _, s := range secrets {
					if s != "" && strings.Contains(v, s) {
						t.Errorf("%s: label %s=%q carries %q", name, l.GetName(), v, s)
					}
				}
			}
		}
	}
}

// checkAgainstCLI compares the exposition with `status -o json` and
// `blocked -o json` run on the same store: units by model and status,
// blocked units per model, and `incidents -o json`: incidents by kind, what
// each holds and releases, and the held units.
func checkAgainstCLI(t *testing.T, fams map[string]*dto.MetricFamily, args ...string) {
	t.Helper()
	var st struct {
		Models []struct {
			Name     string         `json:"name"`
			Pipeline string         `json:"pipeline"`
			Counts   map[string]int `json:"counts"`
		} `json:"models"`
	}
	jsonOf(t, &st, append([]string{"status", "-o", "json"}, args...)...)
	var bl blockedJSON
	jsonOf(t, &bl, append([]string{"blocked", "-o", "json"}, args...)...)
	var inc struct {
		Incidents []struct {
			Kind     string `json:"kind"`
			Model    string `json:"model"`
			Holds    int    `json:"blocked_units"`
			Releases int    `json:"releases"`
		} `json:"incidents"`
		Held     int `json:"held"`
		Untraced int `json:"untraced"`
	}
	jsonOf(t, &inc, append([]string{"incidents", "-o", "json"}, args...)...)
	wantKinds := map[string]float64{}
	for _, i := range inc.Incidents {
		wantKinds[i.Kind]++
	}
	open := gauges(fams, "bollhav_open_incidents", "kind")
	if len(open) != 7 {
		t.Errorf("bollhav_open_incidents has %d kinds, want all 7: %v", len(open), open)
	}
	for kind, n := range open {
		if n != wantKinds[kind] {
			t.Errorf("bollhav_open_incidents{kind=%s} = %v, incidents -o json lists %v", kind, n, wantKinds[kind])
		}
	}
	units := gauges(fams, "bollhav_units", "model", "pipeline", "status")
	if len(st.Models) == 0 || len(units) != 5*len(st.Models) {
		t.Errorf("%d bollhav_units samples for %d models in status, want 5 each", len(units), len(st.Models))
	}
	for _, m := range st.Models {
		for status, n := range m.Counts {
			key := m.Name + " " + m.Pipeline + " " + status
			if got, ok := units[key]; !ok || got != float64(n) {
				t.Errorf("bollhav_units{%s} = %v (present %v), status -o json says %d", key, got, ok, n)
			}
		}
	}
	wantBlocked := map[string]float64{}
	for _, u := range bl.Units {
		wantBlocked[u.Model]++
	}
	blocked := gauges(fams, "bollhav_blocked_units", "model")
	for _, m := range st.Models {
		if blocked[m.Name] != wantBlocked[m.Name] {
			t.Errorf("%s: bollhav_blocked_units %v; blocked -o json: %v units", m.Name, blocked[m.Name], wantBlocked[m.Name])
		}
	}
	holds, releases := gauges(fams, "bollhav_incident_holds_units", "kind", "model"), gauges(fams, "bollhav_incident_releases_units", "kind", "model")
	if len(holds) != len(inc.Incidents) || len(releases) != len(inc.Incidents) {
		t.Errorf("%d holds and %d releases samples for %d incidents", len(holds), len(releases), len(inc.Incidents))
	}
	for _, i := range inc.Incidents {
		key := i.Kind + " " + i.Model
		if holds[key] != float64(i.Holds) || releases[key] != float64(i.Releases) {
			t.Errorf("incident %s: holds %v, releases %v; incidents -o json: %d, %d", key, holds[key], releases[key], i.Holds, i.Releases)
		}
	}
	if held := gauges(fams, "bollhav_held_units")[""]; held != float64(inc.Held+inc.Untraced) {
		t.Errorf("bollhav_held_units %v; incidents -o json: held %d + untraced %d", held, inc.Held, inc.Untraced)
	}
}

// TestServeMetricsOnTheDemo: `serve --metrics` alone on the demo store
// serves what `status -o json` and `blocked -o json` say, labels carry no
// window and no path of the store, /healthz and /readyz answer, and
// SIGTERM stops it with exit 0.
func TestServeMetricsOnTheDemo(t *testing.T) {
	dir, sp := demoCopy(t)
	s := startMetricsServe(t, nil, "--spec", sp)
	fams, body := s.scrape(t)
	checkAgainstCLI(t, fams, "--spec", sp)
	if blocked := gauges(fams, "bollhav_blocked_units", "model"); blocked["core.daily_revenue"] == 0 || blocked["mart.kpi_daily"] == 0 {
		t.Errorf("the demo's blocked models are not blocked in the metrics: %v", blocked)
	}
	if incidents := gauges(fams, "bollhav_open_incidents", "kind"); incidents["failed"] != 1 || incidents["stale"] != 1 {
		t.Errorf("bollhav_open_incidents = %v, want raw.payments' failure and the stale clicks", incidents)
	}
	// One series per open root, with what `incidents` prints for it: an
	// alert says "raw.payments failed, 4 units wait".
	if holds := gauges(fams, "bollhav_incident_holds_units", "kind", "model", "pipeline"); holds["failed raw.payments ingest"] != 4 || holds["stale raw.clickstream ingest"] != 5 {
		t.Errorf("bollhav_incident_holds_units = %v, want raw.payments' failure holding 4 and the stale clicks 5", holds)
	}
	checkLabels(t, fams, dir, "state.db")
	if strings.Contains(body, dir) {
		t.Errorf("/metrics names the demo's folder %s", dir)
	}
	if code, body := s.get(t, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := s.get(t, "/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	s.stop(t)
}

// failingSpec: raw.f's hour 02 fails; core.g reads raw.f through
// ENCAPSULATE per day, so its day is blocked behind the failure.
const failingSpec = `models:
  - name: raw.f
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", end: "2026-01-01T06:00:00Z"}
    run:
      command: [sh, -c, 'test "$BOLLHAV_SINCE" != 2026-01-01T02:00:00Z || { echo upstream down >&2; exit 1; }']
  - {name: core.g, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z"},
     upstream: [{name: raw.f, contract: encapsulate, freshness: {within: 1h}}], run: {command: ["true"]}}
`

// TestServeMetricsOnPostgresNamesNoPassword: on PostgreSQL opened with a
// DSN that carries a password, the metrics match the CLI and neither the
// exposition, nor a label, nor serve's own output names the password, the
// DSN or the server's address.
func TestServeMetricsOnPostgresNamesNoPassword(t *testing.T) {
	base := pgtest.DSN(t)
	u, err := url.Parse(base)
	if err != nil || u.User == nil {
		t.Skip("BOLLHAV_TEST_DSN is not a URL with a user")
	}
	const pw = "s3cret-metrics-pw"
	u.User = url.UserPassword(u.User.Username(), pw)
	dsn := u.String()
	schema := pgtest.Schema(t, base)
	t.Setenv("BOLLHAV_PG_SCHEMA", schema)
	sp := writeSpec(t, failingSpec)
	code, _, errOut := run(t, "run", "--spec", sp, "--dsn", dsn, "--pipeline", "ingest")
	if code != ExitFailure {
		t.Fatalf("run ingest: exit %d, want 1 (the failed hour)\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "run", "--spec", sp, "--dsn", dsn, "--pipeline", "core"); code != ExitOK {
		t.Fatalf("run core: exit %d\n%s", code, errOut)
	}
	s := startMetricsServe(t, []string{"BOLLHAV_PG_SCHEMA=" + schema}, "--spec", sp, "--dsn", dsn)
	fams, body := s.scrape(t)
	checkAgainstCLI(t, fams, "--spec", sp, "--dsn", dsn)
	if got := gauges(fams, "bollhav_units", "model", "status")["raw.f failed"]; got != 1 {
		t.Errorf("bollhav_units{raw.f,failed} = %v, want the failed hour", got)
	}
	if got := gauges(fams, "bollhav_blocked_units", "model")["core.g"]; got != 1 {
		t.Errorf("bollhav_blocked_units{core.g} = %v, want its day", got)
	}
	if got := gauges(fams, "bollhav_freshness_limit_seconds", "model")["raw.f"]; got != 3600 {
		t.Errorf("bollhav_freshness_limit_seconds{raw.f} = %v, want 3600", got)
	}
	checkLabels(t, fams, pw, dsn, u.Host, schema)
	if code, body := s.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q", code, body)
	}
	s.stop(t)
	for where, text := range map[string]string{"/metrics": body, "serve's output": s.stderr.text()} {
		for _, secret := range []string{pw, dsn} {
			if strings.Contains(text, secret) {
				t.Errorf("%s names %q", where, secret)
			}
		}
	}
}

// TestServeMetricsBadAddress: an address that is not host:port, a port
// that is no port, and a port another process holds: exit 2 with one line
// naming the address, before the store is opened (no store file appears
// beside the spec).
func TestServeMetricsBadAddress(t *testing.T) {
	sp := writeSpec(t, serveSpec)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct{ addr, want string }{
		{"nope", `--metrics "nope" is not host:port (missing port in address)`},
		{"127.0.0.1:99999", "--metrics 127.0.0.1:99999: cannot listen:"},
		{busy.Addr().String(), fmt.Sprintf("--metrics %s: the address is in use", busy.Addr())},
	} {
		for _, args := range [][]string{
			{"serve", "--spec", sp, "--metrics", c.addr},
			{"serve", "--spec", sp, "--metrics", c.addr, "--ssh", "127.0.0.1:0", "--viewers", filepath.Join(t.TempDir(), "viewers")},
		} {
			code, out, errOut := run(t, args...)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if code != ExitUsage || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "bollhav serve: "+c.want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", args, code, out, errOut, c.want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(sp), ".bollhav")); !os.IsNotExist(err) {
		t.Errorf("a refused serve created .bollhav beside the spec (stat: %v)", err)
	}
}
