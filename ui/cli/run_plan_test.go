package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/stores"
)

// The run/plan project: four models of pipeline core, all 1d from
// 2026-01-01 with a fixed contract range [01-01, 01-05) — four windows —
// so every count below is worked out by hand.
//
//	raw.a    fixed, no upstream            ./ok.sh   (rows_written=5)
//	core.b   fixed, ENCAPSULATE raw.a      ./flaky.sh (rows_written=1; fails
//	         for the window whose since is in the file "fail")
//	stage.c  flexible, no upstream         ./ok.sh
//	mart.d   fixed, ENCAPSULATE core.b     ./ok.sh
const runPlanSpec = `models:
  - {name: raw.a, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-05T00:00:00Z"},
     run: {command: ["./ok.sh"]}}
  - {name: core.b, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-05T00:00:00Z"},
     upstream: [{name: raw.a, contract: encapsulate}], run: {command: ["./flaky.sh"]}}
  - name: stage.c
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-05T00:00:00Z", flexibility: flex}
    run: {command: ["./ok.sh"]}
  - {name: mart.d, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-05T00:00:00Z"},
     upstream: [{name: core.b, contract: encapsulate}], run: {command: ["./ok.sh"]}}
`

var runPlanModels = []string{"raw.a", "core.b", "stage.c", "mart.d"}

// runProject is a spec directory with its scripts and a store.
type runProject struct {
	dir, spec, dsn string
}

// newRunProject writes the project into a fresh directory; backend picks
// the store: a SQLite file in the directory, or a fresh PostgreSQL schema
// (skipped without a server).
func newRunProject(t *testing.T, backend string) *runProject {
	t.Helper()
	for _, k := range []string{"STATE_MODE", "INTERVAL_OVERRIDE", "SCHEMA_SUFFIX", "BOLLHAV_DSN", "BOLLHAV_PG_SCHEMA"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	files := map[string]string{
		"bollhav.yaml": runPlanSpec,
		"ok.sh":        "#!/bin/sh\necho rows_written=5\n",
		"flaky.sh": `#!/bin/sh
if [ -f fail ] && [ "$(cat fail)" = "$BOLLHAV_SINCE" ]; then
  echo "flaky: no data for $BOLLHAV_SINCE" >&2
  exit 3
fi
echo rows_written=1
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &runProject{dir: dir, spec: filepath.Join(dir, "bollhav.yaml"), dsn: filepath.Join(dir, "state.db")}
	if backend == "postgres" {
		p.dsn = pgtest.DSN(t)
		t.Setenv("BOLLHAV_PG_SCHEMA", pgtest.Schema(t, p.dsn))
	}
	return p
}

// failOn makes core.b fail for the window starting at since ("" heals it).
func (p *runProject) failOn(t *testing.T, since string) {
	t.Helper()
	path := filepath.Join(p.dir, "fail")
	if since == "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, []byte(since+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cli runs bollhav against the project's spec and store.
func (p *runProject) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return run(t, append(args, "--spec", p.spec, "--dsn", p.dsn)...)
}

// cliIn is cli with stdin.
func (p *runProject) cliIn(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append(args, "--spec", p.spec, "--dsn", p.dsn), Streams{In: strings.NewReader(in), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// runStoreState is every model's units by status and the number of runs: what
// "nothing changed" compares.
type runStoreState struct {
	Models int
	Units  map[string]map[state.UnitStatus]int
	Runs   int
}

func (p *runProject) state(t *testing.T) runStoreState {
	t.Helper()
	ctx := context.Background()
	s, _, err := stores.Open(ctx, p.dsn, p.dir, stores.Options{PostgresSchema: os.Getenv("BOLLHAV_PG_SCHEMA")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.Models(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	st := runStoreState{Models: len(recs), Units: map[string]map[state.UnitStatus]int{}}
	for _, m := range runPlanModels {
		st.Units[m] = map[state.UnitStatus]int{}
		err := s.ScanUnits(ctx, state.UnitQuery{Model: m}, func(u state.Unit) error {
			st.Units[m][u.Status]++
			return nil
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	st.Runs = len(runs)
	return st
}

func (st runStoreState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "models=%d runs=%d", st.Models, st.Runs)
	for _, m := range runPlanModels {
		fmt.Fprintf(&b, " %s=%v", m, st.Units[m])
	}
	return b.String()
}

type runPlanOut struct {
	StateMode string `json:"state_mode"`
	Models    []struct {
		Name         string      `json:"name"`
		Mode         string      `json:"mode"`
		Register     bool        `json:"register"`
		Created      int         `json:"created"`
		Reset        int         `json:"reset"`
		Deleted      int         `json:"deleted"`
		ToRun        int         `json:"to_run"`
		CreatedSpans [][2]string `json:"created_windows"`
		ToRunSpans   [][2]string `json:"to_run_windows"`
		Warnings     []string    `json:"warnings"`
	} `json:"models"`
}

type runRunOut struct {
	RunID     int64  `json:"run_id"`
	StateMode string `json:"state_mode"`
	Tasks     []struct {
		Task  string `json:"task"`
		State string `json:"status"`
		Units struct {
			Applied int `json:"applied"`
			Blocked int `json:"blocked"`
			Failed  int `json:"failed"`
		} `json:"units"`
		RowsWritten *int64 `json:"rows_written"`
	} `json:"tasks"`
	Released []struct {
		Model string  `json:"model"`
		Since *string `json:"since"`
		Until *string `json:"until"`
		Units int     `json:"units"`
	} `json:"released"`
	Then []runRunOut `json:"then"`
}

func decodeRunPlan[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(s))
	if _, exact := any(v).(runRunOut); exact {
		// run's JSON shape is exactly the design's: no other field.
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not the expected JSON: %v\n%s", err, s)
	}
	return v
}

// planCounts renders a plan as "model:created/reset/deleted/to_run".
func planCounts(p runPlanOut) string {
	var parts []string
	for _, m := range p.Models {
		parts = append(parts, fmt.Sprintf("%s:%d/%d/%d/%d", m.Name, m.Created, m.Reset, m.Deleted, m.ToRun))
	}
	return strings.Join(parts, " ")
}

// runCounts renders a run as "model:STATUS/applied/blocked/failed/rows".
func runCounts(r runRunOut) string {
	var parts []string
	for _, t := range r.Tasks {
		rows := "null"
		if t.RowsWritten != nil {
			rows = fmt.Sprint(*t.RowsWritten)
		}
		parts = append(parts, fmt.Sprintf("%s:%s/%d/%d/%d/%s", t.Task, t.State, t.Units.Applied, t.Units.Blocked, t.Units.Failed, rows))
	}
	return strings.Join(parts, " ")
}

func eachRunBackend(t *testing.T, fn func(t *testing.T, p *runProject)) {
	for _, b := range []string{"sqlite", "postgres"} {
		t.Run(b, func(t *testing.T) { fn(t, newRunProject(t, b)) })
	}
}

// planThenRun plans args, checks nothing changed, runs the same args and
// checks the run ran exactly what the plan said; both must match want.
func planThenRun(t *testing.T, p *runProject, wantPlan, wantRun string, args ...string) (runPlanOut, runRunOut) {
	t.Helper()
	before := p.state(t)
	code, out, errOut := p.cli(t, append([]string{"plan", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("plan %v: exit %d: %s", args, code, errOut)
	}
	pl := decodeRunPlan[runPlanOut](t, out)
	if got := planCounts(pl); got != wantPlan {
		t.Fatalf("plan %v:\n got %s\nwant %s", args, got, wantPlan)
	}
	if after := p.state(t); after.String() != before.String() {
		t.Fatalf("plan changed the store:\nbefore %s\nafter  %s", before, after)
	}
	code, out, errOut = p.cli(t, append([]string{"run", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("run %v: exit %d: %s\n%s", args, code, errOut, out)
	}
	r := decodeRunPlan[runRunOut](t, out)
	if got := runCounts(r); got != wantRun {
		t.Fatalf("run %v:\n got %s\nwant %s", args, got, wantRun)
	}
	// The run did exactly what the plan said: as many units ran as the
	// plan listed, and the store's unit count moved by created − deleted
	// for the fixed models (flexible uncovering may trim instead).
	after := p.state(t)
	for i, m := range pl.Models {
		task := r.Tasks[i]
		if task.Task != m.Name {
			t.Fatalf("task %d is %s, plan model %s", i, task.Task, m.Name)
		}
		if ran := task.Units.Applied + task.Units.Blocked + task.Units.Failed; ran != m.ToRun {
			t.Errorf("%s: ran %d units, the plan said %d", m.Name, ran, m.ToRun)
		}
		total := func(st runStoreState) int {
			n := 0
			for _, c := range st.Units[m.Name] {
				n += c
			}
			return n
		}
		if m.Name != "stage.c" {
			if d := total(after) - total(before); d != m.Created-m.Deleted {
				t.Errorf("%s: the store gained %d units, the plan said %d created and %d deleted", m.Name, d, m.Created, m.Deleted)
			}
		}
	}
	if after.Runs != before.Runs+1 {
		t.Errorf("runs %d → %d, want one more", before.Runs, after.Runs)
	}
	return pl, r
}

func TestRunDoesWhatPlanSaid(t *testing.T) {
	eachRunBackend(t, func(t *testing.T, p *runProject) {
		window := []string{"--pipeline", "core", "--since", "2026-01-02", "--until", "2026-01-04T00:00:00Z"}

		// A fresh store, bulldozer [01-02, 01-04): two windows created
		// and run per model; rows 5 per unit (ok.sh) or 1 (flaky.sh).
		pl, r := planThenRun(t, p,
			"raw.a:2/0/0/2 core.b:2/0/0/2 stage.c:2/0/0/2 mart.d:2/0/0/2",
			"raw.a:SUCCESS/2/0/0/10 core.b:SUCCESS/2/0/0/2 stage.c:SUCCESS/2/0/0/10 mart.d:SUCCESS/2/0/0/10",
			window...)
		if pl.StateMode != "bulldozer" || r.StateMode != "bulldozer" || !pl.Models[0].Register || r.RunID != 1 {
			t.Errorf("plan %+v run %+v", pl, r)
		}
		if got := pl.Models[0].CreatedSpans; len(got) != 1 || got[0] != [2]string{"2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z"} {
			t.Errorf("created spans %v", got)
		}
		if st := p.state(t); st.Units["raw.a"][state.Applied] != 2 || st.Units["stage.c"][state.Applied] != 2 {
			t.Errorf("after the first run: %s", st)
		}

		// Bulldozer again: the fixed models reset their two units; the
		// flexible one uncovers its two and re-covers the window.
		pl, _ = planThenRun(t, p,
			"raw.a:0/2/0/2 core.b:0/2/0/2 stage.c:2/0/2/2 mart.d:0/2/0/2",
			"raw.a:SUCCESS/2/0/0/10 core.b:SUCCESS/2/0/0/2 stage.c:SUCCESS/2/0/0/10 mart.d:SUCCESS/2/0/0/10",
			window...)
		if pl.Models[0].Register {
			t.Error("the spec is registered already")
		}

		// Discover without a window over two models: what is missing of
		// the contract range, [01-01, 01-02) and [01-04, 01-05), is
		// created and run; applied units stay.
		pl, _ = planThenRun(t, p,
			"raw.a:2/0/0/2 stage.c:2/0/0/2",
			"raw.a:SUCCESS/2/0/0/10 stage.c:SUCCESS/2/0/0/10",
			"raw.a", "stage.c", "--mode", "discover")
		if got := pl.Models[1].ToRunSpans; len(got) != 2 || got[0][0] != "2026-01-01T00:00:00Z" || got[1][1] != "2026-01-05T00:00:00Z" {
			t.Errorf("discover to_run spans %v", got)
		}
		if st := p.state(t); st.Units["raw.a"][state.Applied] != 4 || st.Units["stage.c"][state.Applied] != 4 || st.Units["core.b"][state.Applied] != 2 {
			t.Errorf("after discover: %s", st)
		}

		// The environment variable is honoured, and the flag wins over it.
		t.Setenv("STATE_MODE", "torch")
		code, out, errOut := p.cli(t, "plan", "raw.a", "-o", "json", "--mode", "discover")
		if code != 0 || decodeRunPlan[runPlanOut](t, out).StateMode != "discover" {
			t.Errorf("--mode wins over STATE_MODE: %d %s %s", code, out, errOut)
		}
		code, out, errOut = p.cli(t, "plan", "raw.a", "-o", "json")
		if pl := decodeRunPlan[runPlanOut](t, out); code != 0 || pl.StateMode != "torch" || planCounts(pl) != "raw.a:4/0/4/4" {
			t.Errorf("STATE_MODE=torch: %d %s %s", code, out, errOut)
		}
	})
}

func TestRunFailedUnitExits1AndRetryResumes(t *testing.T) {
	eachRunBackend(t, func(t *testing.T, p *runProject) {
		p.failOn(t, "2026-01-03T00:00:00Z")
		args := []string{"run", "core.b", "--downstream", "--since", "2026-01-02", "--until", "2026-01-04"}
		// raw.a is not in the run: core.b's gate finds nothing of it, so
		// a first run blocks; run raw.a first.
		if code, _, errOut := p.cli(t, "run", "raw.a", "--since", "2026-01-02", "--until", "2026-01-04"); code != 0 {
			t.Fatalf("raw.a: %d %s", code, errOut)
		}
		code, out, errOut := p.cli(t, append(args, "-o", "json")...)
		if code != 1 {
			t.Fatalf("a failed unit exits 1, got %d: %s\n%s", code, errOut, out)
		}
		r := decodeRunPlan[runRunOut](t, out)
		// core.b: 01-02 applied, 01-03 failed; mart.d runs once core.b's
		// task is done, and its gate blocks the day that needs the failed one.
		if got, want := runCounts(r), "core.b:FAILED/1/0/1/1 mart.d:SUCCESS/1/1/0/5"; got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
		if !strings.Contains(errOut, "flaky: no data for 2026-01-03T00:00:00Z") {
			t.Errorf("the unit's error is not on stderr: %q", errOut)
		}
		if st := p.state(t); st.Units["core.b"][state.Failed] != 1 || st.Units["mart.d"][state.Applied] != 1 || st.Units["mart.d"][state.Blocked] != 1 {
			t.Fatalf("store after the failed run: %s", st)
		}

		// Text output of the same failure names the retry.
		code, out, _ = p.cli(t, "run", "--retry", fmt.Sprint(r.RunID))
		if code != 1 || !strings.Contains(out, fmt.Sprintf("bollhav run --retry %d", r.RunID)) {
			t.Fatalf("a retry that fails again: %d\n%s", code, out)
		}

		// Healed: the retry runs the failed unit and nothing else (core.b's
		// applied unit is not run again, and mart.d's task succeeded, so it
		// never runs again in this run).
		p.failOn(t, "")
		code, out, errOut = p.cli(t, "run", "--retry", fmt.Sprint(r.RunID), "-o", "json")
		if code != 0 {
			t.Fatalf("retry: %d %s\n%s", code, errOut, out)
		}
		rr := decodeRunPlan[runRunOut](t, out)
		if got, want := runCounts(rr), "core.b:SUCCESS/1/0/0/1 mart.d:SUCCESS/0/0/0/null"; got != want || rr.RunID != r.RunID {
			t.Fatalf("retry got %s (run %d)\nwant %s (run %d)", got, rr.RunID, want, r.RunID)
		}
		if st := p.state(t); st.Units["core.b"][state.Applied] != 2 || st.Units["mart.d"][state.Applied] != 1 || st.Units["mart.d"][state.Blocked] != 1 {
			t.Fatalf("store after the retry: %s", st)
		}
		// The retry re-judged the day its failed unit held: its reason no
		// longer holds, so it is released (mart.d's one day, 01-03) and
		// named; a discover run of mart.d picks it up.
		if len(rr.Released) != 1 || rr.Released[0].Model != "mart.d" || rr.Released[0].Units != 1 ||
			rr.Released[0].Since == nil || *rr.Released[0].Since != "2026-01-03T00:00:00Z" || len(rr.Then) != 0 {
			t.Errorf("the retry released %+v (then %v), want mart.d's day 2026-01-03 and no run of it", rr.Released, rr.Then)
		}
		if code, out, errOut := p.cli(t, "run", "mart.d", "--since", "2026-01-02", "--until", "2026-01-04", "--mode", "discover"); code != 0 {
			t.Fatalf("discover mart.d: %d %s\n%s", code, errOut, out)
		}
		if st := p.state(t); st.Units["mart.d"][state.Applied] != 2 {
			t.Fatalf("store after discovering mart.d: %s", st)
		}
		// A succeeded run has nothing to retry; an unknown one is not there.
		for _, id := range []string{fmt.Sprint(r.RunID), "999"} {
			before := p.state(t)
			code, out, errOut = p.cli(t, "run", "--retry", id)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
				t.Errorf("retry %s: %d %q %q", id, code, out, errOut)
			}
			if after := p.state(t); after.String() != before.String() {
				t.Errorf("retry %s changed the store", id)
			}
		}
	})
}

func TestRunTorchConfirmation(t *testing.T) {
	p := newRunProject(t, "sqlite")
	win := []string{"--since", "2026-01-02", "--until", "2026-01-04"}
	if code, _, errOut := p.cli(t, append([]string{"run", "raw.a"}, win...)...); code != 0 {
		t.Fatalf("first run: %s", errOut)
	}
	before := p.state(t)
	torch := append([]string{"run", "raw.a", "--mode", "torch"}, win...)

	// No terminal, no --yes: refused, exit 2, nothing changed.
	code, out, errOut := p.cli(t, torch...)
	if code != 2 || !strings.Contains(errOut, "--yes") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("torch without a terminal: %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(out, "plan: torch") {
		t.Errorf("the plan is printed first:\n%s", out)
	}
	if after := p.state(t); after.String() != before.String() {
		t.Fatalf("a refused torch changed the store:\nbefore %s\nafter  %s", before, after)
	}

	// --read-only: the engine refuses, even with --yes.
	code, out, errOut = p.cli(t, append(torch, "--yes", "--read-only")...)
	if code != 2 || out != "" || !strings.Contains(errOut, "read-only") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("read-only torch: %d %q %q", code, out, errOut)
	}
	if after := p.state(t); after.String() != before.String() {
		t.Fatalf("a read-only torch changed the store")
	}

	// On a terminal, anything but "yes" declines.
	old := runStdinIsTerminal
	runStdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { runStdinIsTerminal = old })
	code, _, errOut = p.cliIn(t, "y\n", torch...)
	if code != 1 || !strings.Contains(errOut, "Type yes") || !strings.Contains(errOut, "not confirmed") {
		t.Fatalf("declined torch: %d %q", code, errOut)
	}
	if after := p.state(t); after.String() != before.String() {
		t.Fatalf("a declined torch changed the store")
	}

	// Typed "yes": the 2 units are deleted, the contract range's 4
	// re-created, the window's 2 run.
	code, out, errOut = p.cliIn(t, "yes\n", append(torch, "-o", "json")...)
	if code != 0 {
		t.Fatalf("confirmed torch: %d %s", code, errOut)
	}
	if got := runCounts(decodeRunPlan[runRunOut](t, out)); got != "raw.a:SUCCESS/2/0/0/10" {
		t.Fatalf("confirmed torch ran %s", got)
	}
	if !strings.Contains(errOut, "plan: torch") {
		t.Errorf("with -o json the plan goes to stderr: %q", errOut)
	}
	runStdinIsTerminal = old

	// --yes without a terminal runs it again.
	code, out, errOut = p.cli(t, append(torch, "--yes", "-o", "json")...)
	if code != 0 {
		t.Fatalf("torch --yes: %d %s", code, errOut)
	}
	if got := runCounts(decodeRunPlan[runRunOut](t, out)); got != "raw.a:SUCCESS/2/0/0/10" {
		t.Fatalf("torch --yes ran %s", got)
	}
	st := p.state(t)
	if got := st.Units["raw.a"]; got[state.Applied] != 2 || got[state.Pending] != 2 || len(got) != 2 {
		t.Fatalf("after torch: %s", st)
	}
}

func TestRunPlanBadInputExits2(t *testing.T) {
	p := newRunProject(t, "sqlite")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--since", "2026-01-03", "--until", "2026-01-02"}, "empty"},
		{[]string{"--since", "2026-01-02", "--until", "2026-01-02"}, "empty"},
		{[]string{"raw.a", "--since", "2026-01-02T06:00:00Z", "--until", "2026-01-03"}, "not aligned"},
		{[]string{"raw.aa"}, `unknown model "raw.aa"`},
		{[]string{"--pipeline", "nope"}, "unknown pipeline"},
		{[]string{"--mode", "nuke"}, "unknown state mode"},
		{[]string{"--interval-override", "fortnight"}, "--interval-override"},
		{[]string{"--since", "2026-01-02"}, "--since needs --until"},
		{[]string{"--until", "2026-01-02"}, "--until needs --since"},
		{[]string{"--since", "yesterday", "--until", "2026-01-02"}, "--since"},
	}
	for _, cmd := range []string{"plan", "run"} {
		for _, c := range cases {
			code, out, errOut := p.cli(t, append([]string{cmd}, c.args...)...)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", cmd, c.args, code, out, errOut, c.want)
			}
		}
	}
	t.Setenv("STATE_MODE", "yolo")
	code, _, errOut := p.cli(t, "run")
	if code != 2 || !strings.Contains(errOut, "STATE_MODE") {
		t.Errorf("a bad STATE_MODE names the variable: %d %q", code, errOut)
	}
	t.Setenv("STATE_MODE", "")
	for _, args := range [][]string{
		{"run", "--workers", "0"},
		{"run", "--as-of", "2026-01-02"},
		{"run", "--retry", "1", "--since", "2026-01-01", "--until", "2026-01-02"},
		{"run", "--retry", "1", "raw.a"},
		{"run", "--retry", "0"},
		{"plan", "--retry", "1"},
	} {
		code, out, errOut := p.cli(t, args...)
		if code != 2 || out != "" || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if st := p.state(t); st.Models != 0 || st.Runs != 0 {
		t.Errorf("bad input changed the store: %s", st)
	}
}

func TestPlanAsOfAndText(t *testing.T) {
	p := newRunProject(t, "sqlite")
	sp := filepath.Join(p.dir, "open.yaml")
	if err := os.WriteFile(sp, []byte(`models:
  - {name: raw.open, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["./ok.sh"]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// As of 01-03 12:00 the complete windows are 01-01 and 01-02; bulldozer
	// without a window runs as discover, with a warning.
	code, out, errOut := run(t, "plan", "--spec", sp, "--dsn", p.dsn, "--as-of", "2026-01-03T12:00:00Z", "-o", "json")
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	pl := decodeRunPlan[runPlanOut](t, out)
	if got := planCounts(pl); got != "raw.open:2/0/0/2" || pl.Models[0].Mode != "discover" || len(pl.Models[0].Warnings) != 1 {
		t.Fatalf("plan as of: %s\n%s", got, out)
	}
	code, out, _ = run(t, "plan", "--spec", sp, "--dsn", p.dsn, "--as-of", "2026-01-03T12:00:00Z")
	containsAll(t, "plan text", out, "plan: bulldozer in prod, no window, as of 2026-01-03T12:00:00Z", "MODEL", "raw.open", "register, runs as discover",
		"[2026-01-01T00:00:00Z, 2026-01-03T00:00:00Z)", "2 created", "warnings:\n  raw.open: bulldozer without a window")
	if code != 0 || strings.Contains(out, "\x1b") {
		t.Errorf("code %d, or ANSI codes in piped output:\n%q", code, out)
	}
}

func TestRunPipedTextHasNoANSIAndEndsWithTheSummary(t *testing.T) {
	p := newRunProject(t, "sqlite")
	p.failOn(t, "2026-01-03T00:00:00Z")
	code, out, errOut := p.cli(t, "run", "--pipeline", "core", "--since", "2026-01-02", "--until", "2026-01-04")
	if code != 1 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("ANSI codes in piped output:\n%q", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "run 1 (bulldozer) failed: 4 task(s): 3 succeeded, 1 failed; units: 6 applied, 1 blocked, 1 failed") ||
		!strings.HasSuffix(last, "bollhav run --retry 1") {
		t.Errorf("last line %q", last)
	}
	containsAll(t, "output", out,
		"TASK     STATUS   APPLIED  BLOCKED  FAILED  ROWS_WRITTEN\n",
		"core.b   FAILED   1        0        1       1\n",
		"mart.d   SUCCESS  1        1        0       5\n",
		"errors:\n  core.b: exit status 3: flaky: no data for 2026-01-03T00:00:00Z\n",
	)
	// One finish line per task that ran, before the summary.
	for _, m := range []string{"raw.a", "core.b", "stage.c"} {
		if !strings.Contains(out, m+strings.Repeat(" ", 12-len(m))+"  ") || !strings.Contains(out, " units  blocked ") {
			t.Errorf("no finish line for %s:\n%s", m, out)
		}
	}
	p.failOn(t, "")
	code, out, _ = p.cli(t, "run", "raw.a", "--since", "2026-01-01", "--until", "2026-01-02")
	lines = strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != 0 || lines[len(lines)-1] != "run 2 (bulldozer) succeeded: 1 task(s); units: 1 applied, 0 blocked, 0 failed" {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestRunViewLiveIsSafeFromManyGoroutines(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := runViewWriter(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(b)
	})
	models := []string{"a.one", "b.two", "c.three", "d.four"}
	totals := map[string]int{"a.one": 50, "b.two": 50, "c.three": 50, "d.four": 50}
	v := newRunView(w, palette{}, models, totals, false, true, time.Now)
	exec := v.executor(runViewExec(func() {}))
	var wg sync.WaitGroup
	for _, m := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inner sync.WaitGroup
			for i := 1; i <= 50; i++ {
				inner.Add(1)
				go func() {
					defer inner.Done()
					_, _ = exec.Execute(context.Background(), executor.UnitRun{Model: &spec.Model{Name: m}})
					v.update(engine.Progress{Model: m, Applied: i, Total: i})
				}()
			}
			inner.Wait()
			v.update(engine.Progress{Model: m, Applied: 50, Total: 50, Done: true, Status: graph.StatusSuccess})
		}()
	}
	wg.Wait()
	v.stop()
	got := buf.String()
	for _, m := range models {
		if n := strings.Count(got, m+" "); n < 1 {
			t.Errorf("%s never shown:\n%q", m, got)
		}
		if !strings.Contains(got, "SUCCESS") || !strings.Contains(got, "50/50 units") {
			t.Errorf("no finished line:\n%q", got)
		}
	}
	if !strings.Contains(got, "\x1b[") {
		t.Errorf("the live view redraws in place:\n%q", got)
	}

	// Not live: exactly one line per finished task, in finishing order.
	buf.Reset()
	v = newRunView(w, palette{}, models, totals, false, false, time.Now)
	v.update(engine.Progress{Model: "b.two", Applied: 1})
	v.update(engine.Progress{Model: "b.two", Applied: 2, Failed: 1, Done: true, Status: graph.StatusFailed})
	v.update(engine.Progress{Model: "a.one", Blocked: 3, Done: true, Status: graph.StatusSuccess})
	v.stop()
	want := "b.two    FAILED   3/50 units  blocked 0  failed 1  0s\n" +
		"a.one    SUCCESS  3/50 units  blocked 3  failed 0  0s\n"
	if got := buf.String(); !strings.Contains(got, "b.two") || strings.Count(got, "\n") != 2 {
		t.Errorf("finish lines:\n%q\nwant like\n%q", got, want)
	}
}

type runViewWriter func([]byte) (int, error)

func (f runViewWriter) Write(b []byte) (int, error) { return f(b) }

type runViewExec func()

func (f runViewExec) Execute(context.Context, executor.UnitRun) (executor.Result, error) {
	f()
	return executor.Result{}, nil
}

func TestRunAndPlanHelp(t *testing.T) {
	for cmd, wants := range map[string][]string{
		"run":  {"Examples:", "--retry", "--yes", "--workers", `"rows_written"`, "bollhav run --retry 42"},
		"plan": {"Examples:", `"to_run"`, `"created_windows"`, "--mode", "changes nothing"},
	} {
		code, out, _ := run(t, "help", cmd)
		for _, w := range wants {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("help %s lacks %q (exit %d)", cmd, w, code)
			}
		}
	}
	if code, out, _ := run(t, "help", "plan"); code != 0 || strings.Contains(out, "--retry") || strings.Contains(out, "--yes") {
		t.Errorf("plan has no --retry or --yes:\n%s", out)
	}
}

func TestRunStopsOnSIGINTAndReleasesItsUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI as a process")
	}
	p := newRunProject(t, "sqlite")
	if err := os.WriteFile(p.spec, []byte(`models:
  - {name: raw.a, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-05T00:00:00Z"},
     run: {command: ["sleep", "60"]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := cliProcess(t, "run", "raw.a", "--workers", "2", "--since", "2026-01-01", "--until", "2026-01-05",
		"--spec", p.spec, "--dsn", p.dsn)
	deadline := time.Now().Add(30 * time.Second)
	for p.state(t).Units["raw.a"][state.Running] < 2 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no unit started running\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1 after SIGINT, got %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "run 1 (bulldozer) cancelled") || !strings.Contains(stdout.String(), "bollhav run --retry 1") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// Nothing is left claimed: the two running units were stopped and
	// released — interrupted, not failed — and all four are pending again.
	st := p.state(t)
	if got := st.Units["raw.a"]; got[state.Running] != 0 || got[state.Failed] != 0 || got[state.Pending] != 4 {
		t.Errorf("units after SIGINT: %s", st)
	}
}
