package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// wbSpec: raw.orders fails its hour 05 of 2026-01-01; mart.daily gates on it
// (ENCAPSULATE), report.snapshot (timeless) on all of mart.daily (WHOLE).
const wbSpec = `models:
  - name: raw.orders
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run:
      command: [sh, -c, 'test "$BOLLHAV_SINCE" != 2026-01-01T05:00:00Z || { echo source unavailable >&2; exit 3; }']
  - {name: mart.daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
  - {name: report.snapshot, pipeline: reports, temporality: timeless,
     upstream: [{name: mart.daily, contract: whole}], run: {command: ["true"]}}
`

// wbWorld writes wbSpec and builds its state with two real engine runs at
// 2026-01-03T00:00Z over the first day: raw.orders 23 hours applied and 05
// failed, then mart.daily day 0 blocked (missing 05-06) and report.snapshot
// blocked (mart.daily's contract range [01-01, 01-03) missing). It returns
// the CLI arguments that point at the world.
func wbWorld(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	specPath := filepath.Join(dir, "bollhav.yaml")
	if err := os.WriteFile(specPath, []byte(wbSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "state.db")
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parsed, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	e := engine.New(s, parsed, engine.Options{SpecDir: dir, Actor: "tester", Now: func() time.Time { return now }})
	day0 := state.MustWindow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	for _, models := range [][]string{{"raw.orders"}, {"mart.daily", "report.snapshot"}} {
		if _, err := e.Run(context.Background(), engine.RunRequest{Models: models, Window: &day0}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Stats(context.Background(), "", "mart.daily")
	if err != nil || st.Counts[state.Blocked] != 1 {
		t.Fatalf("mart.daily %v %v", st.Counts, err)
	}
	return []string{"--spec", specPath, "--dsn", db, "--as-of", "2026-01-03T00:00:00Z"}
}

// The documented shape of `why -o json`.
type wbWhy struct {
	Model     string  `json:"model"`
	Since     *string `json:"since"`
	Until     *string `json:"until"`
	Status    string  `json:"status"`
	Upstreams []struct {
		Name      string      `json:"name"`
		Contract  string      `json:"contract"`
		Satisfied bool        `json:"satisfied"`
		Stale     bool        `json:"stale"`
		Reason    string      `json:"reason"`
		Missing   [][2]string `json:"missing"`
	} `json:"upstreams"`
	RootCause []wbLink `json:"root_cause"`
	Frontier  []struct {
		Model    string  `json:"model"`
		Since    *string `json:"since"`
		Until    *string `json:"until"`
		Releases int     `json:"releases"`
	} `json:"frontier"`
}

type wbLink struct {
	Model  string  `json:"model"`
	Since  *string `json:"since"`
	Until  *string `json:"until"`
	Status string  `json:"status"`
}

func wbSp(s string) *string { return &s }

func wbDecode(t *testing.T, out string, v any) map[string]any {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestWhyJSON(t *testing.T) {
	world := wbWorld(t)
	code, out, errOut := run(t, append([]string{"why", "mart.daily", "--at", "2026-01-01T10:00:00Z", "-o", "json"}, world...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	var got wbWhy
	raw := wbDecode(t, out, &got)
	for _, k := range []string{"model", "since", "until", "status", "upstreams", "root_cause", "frontier"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q in\n%s", k, out)
		}
	}
	d0, d1 := "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
	h5, h6 := "2026-01-01T05:00:00Z", "2026-01-01T06:00:00Z"
	if got.Model != "mart.daily" || *got.Since != d0 || *got.Until != d1 || got.Status != "blocked" {
		t.Errorf("unit %s %v %v %s", got.Model, got.Since, got.Until, got.Status)
	}
	if len(got.Upstreams) != 1 {
		t.Fatalf("upstreams %+v", got.Upstreams)
	}
	u := got.Upstreams[0]
	if u.Name != "raw.orders" || u.Contract != "ENCAPSULATE" || u.Satisfied || u.Stale ||
		u.Reason != "raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)" ||
		!reflect.DeepEqual(u.Missing, [][2]string{{h5, h6}}) {
		t.Errorf("upstream %+v", u)
	}
	wantChain := []wbLink{{"mart.daily", wbSp(d0), wbSp(d1), "blocked"}, {"raw.orders", wbSp(h5), wbSp(h6), "failed"}}
	if !reflect.DeepEqual(got.RootCause, wantChain) {
		t.Errorf("root_cause %s", out)
	}
	// Applying raw 05 releases mart.daily day 0, whose only root it is:
	// 1. report.snapshot (WHOLE over mart.daily's [01-01, 01-03)) also waits
	// on mart.daily's day 1, which nothing has loaded.
	if len(got.Frontier) != 1 || got.Frontier[0].Model != "raw.orders" || *got.Frontier[0].Since != h5 ||
		*got.Frontier[0].Until != h6 || got.Frontier[0].Releases != 1 {
		t.Errorf("frontier %+v", got.Frontier)
	}

	// A timeless unit: since and until are null; as of the end of the first
	// day, mart.daily's contract range is only that day.
	code, out, errOut = run(t, append(append([]string{"why", "report.snapshot", "-o", "json"}, world...), "--as-of", "2026-01-02T00:00:00Z")...)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	got = wbWhy{}
	wbDecode(t, out, &got)
	if got.Since != nil || got.Until != nil || got.Status != "blocked" || len(got.Upstreams) != 1 ||
		!reflect.DeepEqual(got.Upstreams[0].Missing, [][2]string{{d0, d1}}) || got.Upstreams[0].Contract != "WHOLE" {
		t.Errorf("snapshot %s", out)
	}
	wantChain = []wbLink{{"report.snapshot", nil, nil, "blocked"}, {"mart.daily", wbSp(d0), wbSp(d1), "blocked"}, {"raw.orders", wbSp(h5), wbSp(h6), "failed"}}
	if !reflect.DeepEqual(got.RootCause, wantChain) {
		t.Errorf("snapshot root_cause %s", out)
	}
	// mart.daily day 0 is held itself, by raw 05: a run of it alone
	// releases nothing (its roots come first).
	if len(got.Frontier) != 1 || got.Frontier[0].Model != "mart.daily" || got.Frontier[0].Releases != 0 {
		t.Errorf("snapshot frontier %s", out)
	}

	// No gated upstream and nothing to do: empty lists are [], not null.
	code, out, _ = run(t, append([]string{"why", "raw.orders", "--at", "2026-01-01", "-o", "json"}, world...)...)
	if code != 0 {
		t.Fatal(out)
	}
	for _, want := range []string{`"upstreams": []`, `"frontier": []`, `"status": "applied"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
}

func TestWhyText(t *testing.T) {
	world := wbWorld(t)
	code, out, errOut := run(t, append([]string{"why", "mart.daily", "--at", "2026-01-01"}, world...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("styles reached a pipe:\n%s", out)
	}
	for _, want := range []string{
		"mart.daily [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)  blocked\n",
		"raw.orders  ENCAPSULATE  blocked  -       -       missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)\n",
		"\nRoot cause\n  mart.daily [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)  blocked: ",
		"\n  → raw.orders [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)  failed: ",
		"raw.orders  2026-01-01T05:00:00Z  2026-01-01T06:00:00Z  failed  1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}

	// As of 2026-01-05, report.snapshot waits on mart.daily's days 0..3:
	// day 0 blocked, days 1..3 without units; the three contiguous missing
	// days (each releasing nothing alone: the snapshot waits on all of them
	// and on raw 05 behind day 0) are one row. Its two roots: raw 05 (through
	// day 0) and the stretch of mart.daily no unit covers.
	code, out, _ = run(t, append(append([]string{"why", "report.snapshot"}, world...), "--as-of", "2026-01-05T00:00:00Z")...)
	wantRoots := "\nHeld by 2 roots (fixing one alone does not release it)\n" +
		"  raw.orders [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)  failed: exit status 3: source unavailable\n" +
		"  mart.daily [2026-01-02T00:00:00Z, 2026-01-05T00:00:00Z)  missing\n"
	if !strings.Contains(out, wantRoots) {
		t.Errorf("no %q in\n%s", wantRoots, out)
	}
	wantFrontier := "MODEL       SINCE                 UNTIL                 STATUS   RELEASES\n" +
		"mart.daily  2026-01-01T00:00:00Z  2026-01-02T00:00:00Z  blocked  0\n" +
		"mart.daily  2026-01-02T00:00:00Z  2026-01-05T00:00:00Z  missing  0 each (3 windows)\n"
	if code != 0 || !strings.HasSuffix(out, "\nUnblock frontier\n"+wantFrontier) {
		t.Errorf("grouped frontier: code %d\n%s", code, out)
	}
	if !strings.Contains(out, "\nRoot cause\n  report.snapshot (existence row)  blocked: ") ||
		!strings.Contains(out, "\n    → raw.orders [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)  failed: exit status 3: source unavailable  ← root cause\n") {
		t.Errorf("indented chain:\n%s", out)
	}
}

func TestWhyBadInputExits2WithOneLine(t *testing.T) {
	world := wbWorld(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"why", "mart.daily", "--at", "yesterday"}, `bollhav why: --at: invalid time "yesterday"`},
		{[]string{"why", "mart.daly", "--at", "2026-01-01"}, `bollhav why: unknown model "mart.daly": did you mean mart.daily?`},
		// Nothing of mart.daily is failed or blocked in env dev: no unit to
		// pick without --at.
		{[]string{"why", "mart.daily", "--env", "dev"}, "bollhav why: mart.daily has no failed or blocked unit to explain: give --at TIME"},
		{[]string{"why", "mart.daily", "--at", "2025-12-31"}, "bollhav why: model mart.daily starts at 2026-01-01T00:00:00Z"},
		{[]string{"blocked", "--model", "nope.nope"}, `bollhav blocked: unknown model "nope.nope"`},
		{[]string{"blocked", "--pipeline", "nope"}, `bollhav blocked: unknown pipeline "nope": the pipelines are core, ingest, reports`},
	} {
		code, out, errOut := run(t, append(c.args, world...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want exit 2 and one line starting %q", c.args, code, out, errOut, c.want)
		}
	}
	// A missing MODEL is a usage error.
	if code, _, errOut := run(t, append([]string{"why", "--at", "2026-01-01"}, world...)...); code != 2 || !strings.Contains(errOut, "MODEL") {
		t.Errorf("no model: code %d, stderr %q", code, errOut)
	}
}

// TestWhyWithoutAtExplainsTheWorstUnit: why MODEL with no --at explains
// the unit the engine picks for the UI's :why MODEL (Engine.WorstUnitAt):
// for raw.orders its failed hour 05 (the root mart.daily day 0 and the
// snapshot wait on), for mart.daily its blocked day 0; the timeless
// snapshot needs no time.
func TestWhyWithoutAtExplainsTheWorstUnit(t *testing.T) {
	world := wbWorld(t)
	s, err := sqlite.Open(context.Background(), world[3])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp, err := spec.Load(world[1])
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	e := engine.New(s, sp, engine.Options{Now: func() time.Time { return now }})
	for _, c := range []struct {
		model, since, status string
	}{
		{"raw.orders", "2026-01-01T05:00:00Z", "failed"},
		{"mart.daily", "2026-01-01T00:00:00Z", "blocked"},
		{"report.snapshot", "", "blocked"},
	} {
		var got wbWhy
		code, out, errOut := run(t, append([]string{"why", c.model, "-o", "json"}, world...)...)
		if code != 0 {
			t.Fatalf("why %s: exit %d, %s", c.model, code, errOut)
		}
		wbDecode(t, out, &got)
		since := ""
		if got.Since != nil {
			since = *got.Since
		}
		if since != c.since || got.Status != c.status {
			t.Errorf("why %s explains %q (%s), want %q (%s)", c.model, since, got.Status, c.since, c.status)
		}
		at, err := e.WorstUnitAt(context.Background(), c.model)
		if err != nil {
			t.Fatal(err)
		}
		if want := state.FormatTime(at); !at.IsZero() && since != want {
			t.Errorf("why %s explains %s, the engine's pick for :why is %s", c.model, since, want)
		}
	}
}

func TestBlockedJSONAndText(t *testing.T) {
	world := wbWorld(t)
	code, out, errOut := run(t, append([]string{"blocked", "-o", "json"}, world...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	type unit struct {
		Model  string  `json:"model"`
		Since  *string `json:"since"`
		Until  *string `json:"until"`
		Reason string  `json:"reason"`
		Holds  int     `json:"holds"`
	}
	var got struct {
		Units []unit `json:"units"`
	}
	wbDecode(t, out, &got)
	// mart.daily day 0 holds back report.snapshot (1); the snapshot holds
	// back nothing (0).
	want := []unit{
		{"mart.daily", wbSp("2026-01-01T00:00:00Z"), wbSp("2026-01-02T00:00:00Z"), "raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)", 1},
		{"report.snapshot", nil, nil, "mart.daily (WHOLE): missing [2026-01-01T00:00:00Z, 2026-01-03T00:00:00Z)", 0},
	}
	if !reflect.DeepEqual(got.Units, want) {
		t.Errorf("units %s", out)
	}

	code, out, _ = run(t, append([]string{"blocked", "--pipeline", "ingest", "-o", "json"}, world...)...)
	if code != 0 || !strings.Contains(out, `"units": []`) {
		t.Errorf("no blocked units in ingest: code %d\n%s", code, out)
	}

	code, out, _ = run(t, append([]string{"blocked"}, world...)...)
	wantText := "MODEL            SINCE                 UNTIL                 HOLDS  REASON\n" +
		"mart.daily       2026-01-01T00:00:00Z  2026-01-02T00:00:00Z  1      raw.orders (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)\n" +
		"report.snapshot  -                     -                     0      mart.daily (WHOLE): missing [2026-01-01T00:00:00Z, 2026-01-03T00:00:00Z)\n" +
		"2 blocked units\n"
	if code != 0 || out != wantText {
		t.Errorf("text: code %d\n%s\nwant\n%s", code, out, wantText)
	}
}

func TestWhyBlockedHelp(t *testing.T) {
	for _, cmd := range []string{"why", "blocked"} {
		code, out, _ := run(t, "help", cmd)
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "bollhav "+cmd) {
			t.Errorf("help %s: code %d\n%s", cmd, code, out)
		}
	}
}
