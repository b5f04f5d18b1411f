package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/stores"
)

// The bad-input table (issue 9, item 6): every row is one mistake an
// operator can make — a broken spec, a hostile identifier, a bad duration,
// time zone, window or DSN, a store written by a newer bollhav — run through
// the real CLI in a process of its own against a store that already holds
// registrations, units, a run and audit entries. Each row must exit 2 with
// one line on stderr that names the problem (a usage error may add the help
// hint), print nothing on stdout, write nothing to the working directory,
// and leave the store exactly as it was: registry, every unit, runs and their
// task log, the audit log and the change feed, compared through the Store
// API. A second table puts a sentinel password into malformed and
// unreachable DSNs for every command that opens a store, and checks that it
// reaches no output, no file and no store.

// btSpec is the world's spec: an hourly and a daily fixed model (the daily
// one gated on the hourly) and a daily flexible one.
const btSpec = `models:
  - name: raw.a
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: core.b
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: raw.a, contract: encapsulate}
    run: {command: ["true"]}
  - name: stage.f
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {command: ["true"]}
`

// btInject is the classic SQL injection attempt, put wherever a name goes.
const btInject = `x"; DROP TABLE y; --`

// btWorld is btSpec applied to a fresh store and given state through the
// CLI and the Store API.
type btWorld struct {
	backend string
	dir     string // the spec's folder
	spec    string
	dsn     string
	schema  string // the PostgreSQL schema; "" for SQLite
}

// btWindow is the window flags of hours a..b of 2026-01-01.
func btWindow(a, b int) []string {
	h := func(n int) string { return fmt.Sprintf("2026-01-01T%02d:00:00Z", n) }
	return []string{"--since", h(a), "--until", h(b)}
}

func newBTWorld(t *testing.T, backend string) *btWorld {
	t.Helper()
	dir := t.TempDir()
	w := &btWorld{backend: backend, dir: dir, spec: filepath.Join(dir, "bollhav.yaml")}
	if err := os.WriteFile(w.spec, []byte(btSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	switch backend {
	case "sqlite":
		w.dsn = filepath.Join(dir, "state.db")
	case "postgres":
		w.dsn = pgtest.DSN(t)
		w.schema = pgtest.Schema(t, w.dsn)
	}
	must := func(args ...string) {
		t.Helper()
		if code, _, errOut := btCLI(t, dir, w.env(), w.args(args[0], args[1:]...)...); code != 0 {
			t.Fatalf("seeding %v: exit %d: %s", args, code, errOut)
		}
	}
	must("apply")
	// A run: raw.a [00,03) applied, a run row and its task log.
	must(append([]string{"run", "raw.a"}, btWindow(0, 3)...)...)
	// More units, one failed, one of core.b; then a mark, which is audited.
	ctx := context.Background()
	s := w.open(t)
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	var ws []state.Window
	for h := 3; h < 6; h++ {
		since := time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC)
		ws = append(ws, state.MustWindow(since, since.Add(time.Hour)))
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.a", Windows: ws, Now: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "raw.a", Window: ws[1], From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: at}); err != nil {
		t.Fatal(err)
	}
	day := state.MustWindow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "core.b", Windows: []state.Window{day}, Now: at}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	must(append([]string{"mark", "raw.a", "--status", "applied"}, btWindow(3, 4)...)...)

	// The state the table relies on, worked out from the steps above.
	snap := w.snapshot(t)
	if len(snap.Models) != 3 || len(snap.Runs) != 1 || len(snap.Audit) == 0 || len(snap.Units["raw.a"]) != 6 || len(snap.Units["core.b"]) != 1 {
		t.Fatalf("the seeded world is not what the table expects: %d models, %d runs, %d audit entries, %d raw.a units, %d core.b units",
			len(snap.Models), len(snap.Runs), len(snap.Audit), len(snap.Units["raw.a"]), len(snap.Units["core.b"]))
	}
	return w
}

// args is cmd against the world's spec and store, then more.
func (w *btWorld) args(cmd string, more ...string) []string {
	return append([]string{cmd, "--spec", w.spec, "--dsn", w.dsn}, more...)
}

// env is what every command of the world gets in its environment.
func (w *btWorld) env() []string {
	env := []string{"BOLLHAV_ACTOR=tester"}
	if w.schema != "" {
		env = append(env, "BOLLHAV_PG_SCHEMA="+w.schema)
	}
	return env
}

// file writes a file into the world's folder and returns its path.
func (w *btWorld) file(t *testing.T, name string, body []byte) string {
	t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *btWorld) open(t *testing.T) state.Store {
	t.Helper()
	s, _, err := stores.Open(context.Background(), w.dsn, w.dir, stores.Options{PostgresSchema: w.schema})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// btSnapshot is everything the store holds for the production environment,
// plus the audit log and the change feed of every environment: a unit
// created, moved or deleted anywhere shows in the feed.
type btSnapshot struct {
	Version  int
	Models   []state.ModelRecord
	Edges    []state.EdgeRecord
	Units    map[string][]state.Unit
	Runs     []state.Run
	TaskLogs map[int64][]state.TaskRunEntry
	Audit    []state.AuditEntry
	Changes  []state.Change
}

func (w *btWorld) snapshot(t *testing.T) btSnapshot {
	t.Helper()
	s := w.open(t)
	defer s.Close()
	return btSnapshotOf(t, s)
}

func btSnapshotOf(t *testing.T, s state.Store) btSnapshot {
	t.Helper()
	ctx := context.Background()
	const all = 1 << 20
	var snap btSnapshot
	var err error
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("snapshot: %s: %v", what, err)
		}
	}
	snap.Version, err = s.SchemaVersion(ctx)
	check("version", err)
	snap.Models, err = s.Models(ctx, "")
	check("models", err)
	snap.Edges, err = s.Edges(ctx, "")
	check("edges", err)
	snap.Units = map[string][]state.Unit{}
	for _, m := range snap.Models {
		var units []state.Unit
		check("units of "+m.Name, s.ScanUnits(ctx, state.UnitQuery{Model: m.Name}, func(u state.Unit) error {
			units = append(units, u)
			return nil
		}))
		snap.Units[m.Name] = units
	}
	snap.Runs, err = s.Runs(ctx, "", all)
	check("runs", err)
	snap.TaskLogs = map[int64][]state.TaskRunEntry{}
	for _, r := range snap.Runs {
		snap.TaskLogs[r.ID], err = s.TaskLog(ctx, r.ID)
		check("task log", err)
	}
	snap.Audit, err = s.AuditLog(ctx, all)
	check("audit log", err)
	snap.Changes, err = s.Changes(ctx, 0, all)
	check("change feed", err)
	return snap
}

// String is the snapshot as indented JSON, one fact per line, so two can be
// compared and their first difference shown.
func (s btSnapshot) String() string {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return "unprintable snapshot: " + err.Error()
	}
	return string(b)
}

// btFirstDiff shows where two snapshots part.
func btFirstDiff(a, b string) string {
	if line, x, y := enginetest.FirstLineDiff(a, b); line > 0 {
		return fmt.Sprintf("line %d: before %q, after %q", line, x, y)
	}
	return "no difference"
}

var (
	btBinaryOnce sync.Once
	btBinary     string
)

// btHang is far beyond the time any refusal takes, even on a loaded machine.
const btHang = 2 * time.Minute

// btCLI runs bollhav as a process of its own — this test binary, which
// TestMain turns into the CLI — in dir, with a clean environment plus env.
func btCLI(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	btBinaryOnce.Do(func() {
		// The working directory changes per row: make the path absolute.
		btBinary, _ = filepath.Abs(os.Args[0])
	})
	// Every row is refused at once; the bound only turns a command that
	// wrongly goes on serving (watch, worker) into a failure that says so
	// instead of a suite timeout.
	ctx, cancel := context.WithTimeout(context.Background(), btHang)
	defer cancel()
	cmd := exec.CommandContext(ctx, btBinary, append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(btCleanEnv(), "BOLLHAV_CLI_MAIN=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("bollhav %v was still running after %v: it went on instead of refusing\nstdout %q\nstderr %q", args, btHang, out.String(), errOut.String())
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatalf("running bollhav %v: %v", args, err)
	}
	return 0, out.String(), errOut.String()
}

// btCleanEnv is this process's environment without anything that selects a
// store, an environment or a mode, or that libpq-style clients read.
func btCleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "BOLLHAV_"), strings.HasPrefix(k, "PG"),
			k == spec.SchemaSuffixEnvVar, k == "STATE_MODE", k == "INTERVAL_OVERRIDE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// btOneLine is stderr's one line (a usage error's help hint after it
// allowed), or false when stderr is not one line.
func btOneLine(stderr string) (string, bool) {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) == 2 && strings.HasPrefix(lines[1], "Run 'bollhav help") {
		lines = lines[:1]
	}
	return lines[0], len(lines) == 1 && lines[0] != "" && strings.HasSuffix(stderr, "\n")
}

// btFiles hashes every file under dir by its relative path (directories
// hash to zero), except the world's store files named in skip, which its own
// snapshots open and close.
func btFiles(t *testing.T, dir string, skip ...string) map[string][32]byte {
	t.Helper()
	files := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		for _, s := range skip {
			if rel == s || rel == s+"-wal" || rel == s+"-shm" || rel == s+"-journal" {
				return nil
			}
		}
		if rel == "." {
			return nil
		}
		var sum [32]byte
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = sha256.Sum256(b)
		}
		files[rel] = sum
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func btSameFiles(a, b map[string][32]byte) string {
	for name, sum := range b {
		old, ok := a[name]
		switch {
		case !ok:
			return "created " + name
		case old != sum:
			return "changed " + name
		}
	}
	for name := range a {
		if _, ok := b[name]; !ok {
			return "removed " + name
		}
	}
	return ""
}

// btRow is one bad input.
type btRow struct {
	name string
	// args builds the command line; it may write files into the world.
	args func(t *testing.T, w *btWorld) []string
	// env is added to the world's environment.
	env []string
	// want are the words the one line on stderr must hold; {dir} stands
	// for the world's folder.
	want []string
	// store marks a row about the store: it runs against PostgreSQL too.
	store bool
	// pgOnly marks a row that means something only for PostgreSQL.
	pgOnly bool
	// audited marks a refusal the engine writes to the audit log (a refused
	// mark, by design): the audit log may gain exactly that one entry,
	// whose outcome names the error; nothing else may change.
	audited bool
}

// btSpecWith is btSpec with old replaced by new (old must occur once).
func btSpecWith(t *testing.T, old, new string) []byte {
	t.Helper()
	if strings.Count(btSpec, old) != 1 {
		t.Fatalf("btSpec holds %q %d times, want once", old, strings.Count(btSpec, old))
	}
	return []byte(strings.Replace(btSpec, old, new, 1))
}

// btSpecRows are broken specs, each tried with the commands that would
// register it (apply, run) and one that only reads (status).
func btSpecRows() []btRow {
	type bad struct {
		name string
		body func(t *testing.T) []byte
		want []string
	}
	with := func(old, new string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return btSpecWith(t, old, new) }
	}
	literal := func(b []byte) func(*testing.T) []byte { return func(*testing.T) []byte { return b } }
	injected := strings.ReplaceAll(btInject, `"`, `\"`) // inside a YAML double-quoted scalar
	bads := []bad{
		// Malformed YAML.
		{"unclosed flow mapping", with(`{interval: 1h, start: "2026-01-01T00:00:00Z"}`, `{interval: 1h, start: "2026-01-01T00:00:00Z"`),
			[]string{"spec.yaml:"}},
		{"unclosed quote", with(`start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: core.b`, `start: "2026-01-01T00:00:00Z}
    run: {command: ["true"]}
  - name: core.b`), []string{"spec.yaml:"}},
		{"tab indentation", with("    pipeline: core\n    chunking: {interval: 1h", "\tpipeline: core\n    chunking: {interval: 1h"), []string{"spec.yaml:3", `'\t'`}},
		{"models is not a list", literal([]byte("models: raw.a\n")), []string{"spec.yaml:1", "models"}},
		{"duplicate key", with("  - name: stage.f\n", "  - name: stage.f\n    name: stage.g\n"), []string{"spec.yaml:13", "name"}},
		{"empty file", literal(nil), []string{"spec.yaml", "empty"}},
		// Unknown keys: the bad key is named.
		{"unknown top-level key", literal([]byte(strings.Replace(btSpec, "models:", "modles:", 1))), []string{"spec.yaml:1", `"modles"`}},
		{"unknown model key", with("    pipeline: core\n    chunking: {interval: 1h", "    pipline: core\n    chunking: {interval: 1h"), []string{"spec.yaml:3", `"pipline"`}},
		{"unknown chunking key", with(`{interval: 1h, start:`, `{intervall: 1h, start:`), []string{"spec.yaml:4", `"intervall"`}},
		{"unknown run key", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {comand: [\"true\"]}\n  - name: core.b"), []string{"spec.yaml:5", `"comand"`}},
		// Identifiers that would be SQL: refused at load, the name quoted.
		{"injection as a model name", with("name: stage.f", `name: "`+injected+`"`), []string{"spec.yaml:12", "DROP TABLE y", "schema.table"}},
		{"injection in a model's schema", with("name: stage.f", `name: "`+injected+`.f"`), []string{"spec.yaml:12", "DROP TABLE y", "identifier"}},
		{"injection in a model's table", with("name: stage.f", `name: "stage.`+injected+`"`), []string{"spec.yaml:12", "DROP TABLE y", "identifier"}},
		{"injection in an upstream name", with("{name: raw.a, contract: encapsulate}", `{name: "raw.`+injected+`", contract: encapsulate}`), []string{"spec.yaml:10", "DROP TABLE y", "identifier"}},
		{"injection in an upstream's schema", with("{name: raw.a, contract: encapsulate}", `{name: raw.z, contract: encapsulate, model: {schema: "`+injected+`"}}`), []string{"spec.yaml:10", "DROP TABLE y", "identifier"}},
		{"injection as a pipeline", with("    pipeline: core\n    chunking: {interval: 1d, start: \"2026-01-01T00:00:00Z\", flex", "    pipeline: \""+injected+"\"\n    chunking: {interval: 1d, start: \"2026-01-01T00:00:00Z\", flex"), []string{"spec.yaml:13", "DROP TABLE y"}},
		{"injection in an after task", with("    run: {command: [\"true\"]}\n  - name: stage.f", "    run: {command: [\"true\"]}\n    after: [{task: \"raw."+injected+"\", on: success}]\n  - name: stage.f"), []string{"spec.yaml:12", "DROP TABLE y"}},
		{"injection in a {{ ref }} of SQL", with("    run: {command: [\"true\"]}\n  - name: stage.f", "    run:\n      sql: |\n        INSERT INTO {{ this }} SELECT * FROM {{ ref \"raw."+injected+"\" }}\n  - name: stage.f"), []string{"spec.yaml:11", "DROP TABLE y", "ref"}},
		// Durations.
		{"interval in an unknown unit", with("interval: 1h,", "interval: 1 fortnight,"), []string{"spec.yaml:4", "1 fortnight"}},
		{"zero interval", with("interval: 1h,", "interval: 0h,"), []string{"spec.yaml:4", "0h"}},
		{"negative interval", with("interval: 1h,", "interval: -1h,"), []string{"spec.yaml:4", "-1h"}},
		{"freshness that is not a duration", with("{name: raw.a, contract: encapsulate}", "{name: raw.a, contract: encapsulate, freshness: {within: soonish}}"), []string{"spec.yaml:10", "soonish"}},
		{"negative run timeout", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {command: [\"true\"], timeout: -5m}\n  - name: core.b"), []string{"spec.yaml:5", "-5m"}},
		// Time zones and times.
		{"unknown time zone", with(`{interval: 1h, start:`, `{interval: 1h, timezone: Mars/Olympus_Mons, start:`), []string{"spec.yaml:4", "Mars/Olympus_Mons"}},
		{"time zone as a path", with(`{interval: 1h, start:`, `{interval: 1h, timezone: ../../../../etc/passwd, start:`), []string{"spec.yaml:4", "../../../../etc/passwd"}},
		{"start that is not a time", with(`{interval: 1h, start: "2026-01-01T00:00:00Z"}`, `{interval: 1h, start: "2026-13-01"}`), []string{"spec.yaml:4", "2026-13-01"}},
		// Retry budgets: each field named at its line.
		{"retry attempts zero", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {command: [\"true\"]}\n    retry: {attempts: 0}\n  - name: core.b"), []string{"spec.yaml:6", "attempts must be at least 1"}},
		{"retry attempts not a number", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {command: [\"true\"]}\n    retry: {attempts: many}\n  - name: core.b"), []string{"spec.yaml:6", "attempts", "many"}},
		{"retry negative delay", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {command: [\"true\"]}\n    retry: {attempts: 2, delay: -1m}\n  - name: core.b"), []string{"spec.yaml:6", "retry delay", "-1m"}},
		{"retry max_delay under delay", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {command: [\"true\"]}\n    retry: {attempts: 2, delay: 5m, max_delay: 1m}\n  - name: core.b"), []string{"spec.yaml:6", "max_delay", "shorter than delay"}},
		{"retry unknown key", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {command: [\"true\"]}\n    retry: {attempts: 2, backoff: 2}\n  - name: core.b"), []string{"spec.yaml:6", `"backoff"`}},
		// A transaction statement in a unit's SQL.
		{"COMMIT inside sql", with("    run: {command: [\"true\"]}\n  - name: core.b", "    run: {sql: [\"INSERT INTO {{ this }} VALUES (1)\", \"COMMIT\"]}\n  - name: core.b"), []string{"spec.yaml:5", "COMMIT"}},
		// Encoding and size.
		{"not UTF-8", with("name: stage.f", "name: stage.f\xff\xfe"), []string{"spec.yaml:12", "UTF-8"}},
		{"over 10 MiB", func(*testing.T) []byte {
			return append([]byte(btSpec+"# "), bytes.Repeat([]byte("x"), spec.MaxSize)...)
		}, []string{"spec.yaml", "10 MiB"}},
	}
	var rows []btRow
	for _, b := range bads {
		for _, cmd := range []string{"apply", "run", "status"} {
			rows = append(rows, btRow{
				name: "spec " + b.name + " " + cmd,
				args: func(t *testing.T, w *btWorld) []string {
					p := w.file(t, "spec.yaml", b.body(t))
					return []string{cmd, "--spec", p, "--dsn", w.dsn}
				},
				want: b.want,
			})
		}
	}
	// A spec that loads but that lint proves wrong (here a cycle) is
	// refused by every command that would register or run it, naming the
	// models, before the store is opened; reading commands still work.
	cyclic := func(t *testing.T) []byte {
		return btSpecWith(t, "    run: {command: [\"true\"]}\n  - name: core.b", "    upstream: [{name: core.b, contract: encapsulate}]\n    run: {command: [\"true\"]}\n  - name: core.b")
	}
	for _, cmd := range []string{"apply", "run", "worker"} {
		rows = append(rows, btRow{
			name: "spec with a cycle " + cmd,
			args: func(t *testing.T, w *btWorld) []string {
				return []string{cmd, "--spec", w.file(t, "spec.yaml", cyclic(t)), "--dsn", w.dsn}
			},
			want: []string{"refused", "raw.a", "core.b", "cycle", "nothing was changed"},
		})
	}
	// A data model's connection variable unset or empty: run and worker
	// name it and stop before the store is opened.
	onWarehouse := func(t *testing.T) []byte {
		return btSpecWith(t, "    run: {command: [\"true\"]}\n  - name: core.b",
			"    connection: {dsn_env_var: BOLLHAV_BT_WAREHOUSE}\n    run: {query: \"SELECT 1 AS n\", write: {mode: append}}\n  - name: core.b")
	}
	for _, cmd := range []string{"run", "worker"} {
		for _, env := range [][]string{nil, {"BOLLHAV_BT_WAREHOUSE="}, {"BOLLHAV_BT_WAREHOUSE=  "}} {
			rows = append(rows, btRow{
				name: fmt.Sprintf("connection variable %q %s", env, cmd),
				args: func(t *testing.T, w *btWorld) []string {
					return []string{cmd, "--spec", w.file(t, "spec.yaml", onWarehouse(t)), "--dsn", w.dsn}
				},
				env:  env,
				want: []string{"$BOLLHAV_BT_WAREHOUSE is not set or empty", "raw.a"},
			})
		}
	}
	rows = append(rows, btRow{
		name: "spec is a directory",
		args: func(t *testing.T, w *btWorld) []string { return []string{"apply", "--spec", w.dir, "--dsn", w.dsn} },
		want: []string{"{dir}", "directory"},
	})
	return rows
}

// btFlagRows are bad flags, windows, durations and names given on the
// command line (or in the environment) against a good spec and store.
func btFlagRows() []btRow {
	args := func(cmd string, more ...string) func(*testing.T, *btWorld) []string {
		return func(_ *testing.T, w *btWorld) []string { return w.args(cmd, more...) }
	}
	win := btWindow
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	const model = "raw." + btInject
	return []btRow{
		// Windows on run (and plan), refused before anything registers.
		{name: "run window ends before it starts", args: args("run", cat([]string{"raw.a"}, win(3, 1))...), want: []string{"2026-01-01T03:00:00Z", "2026-01-01T01:00:00Z", "empty"}, store: true},
		{name: "run window is empty", args: args("run", cat([]string{"raw.a"}, win(2, 2))...), want: []string{"empty"}, store: true},
		{name: "run window without --until", args: args("run", "raw.a", "--since", "2026-01-01"), want: []string{"--until"}, store: true},
		{name: "run window with a bad time", args: args("run", "raw.a", "--since", "2026-01-01", "--until", "2026-01-32"), want: []string{"--until", "2026-01-32"}, store: true},
		{name: "run window not on the grid", args: args("run", "raw.a", "--since", "2026-01-01T00:30:00Z", "--until", "2026-01-01T02:00:00Z"), want: []string{"raw.a", "aligned"}, store: true},
		{name: "plan window not on the grid", args: args("plan", "core.b", "--since", "2026-01-01T06:00:00Z", "--until", "2026-01-02T00:00:00Z"), want: []string{"core.b", "aligned"}, store: true},
		{name: "run mode unknown", args: args("run", "raw.a", "--mode", "obliterate"), want: []string{"obliterate"}, store: true},
		{name: "run STATE_MODE unknown", args: args("run", "raw.a"), env: []string{"STATE_MODE=obliterate"}, want: []string{"obliterate"}, store: true},
		{name: "run interval override not a duration", args: args("run", "stage.f", "--interval-override", "5parsecs"), want: []string{"5parsecs"}, store: true},
		{name: "run INTERVAL_OVERRIDE negative", args: args("run", "stage.f"), env: []string{"INTERVAL_OVERRIDE=-6h"}, want: []string{"-6h"}, store: true},
		{name: "run workers zero", args: args("run", "raw.a", "--workers", "0"), want: []string{"--workers"}, store: true},
		{name: "run workers past the ceiling", args: args("run", "raw.a", "--workers", "10000000"), want: []string{"--workers 10000000", "1024"}, store: true},
		{name: "retry workers past the ceiling", args: args("run", "--retry", "1", "--workers", "1025"), want: []string{"--workers 1025", "1024"}, store: true},
		{name: "run injection as a model", args: args("run", model), want: []string{"DROP TABLE y"}, store: true},
		{name: "run injection as a pipeline", args: args("run", "--pipeline", btInject), want: []string{"DROP TABLE y"}, store: true},
		{name: "run injection as an env", args: args("run", "raw.a", "--env", btInject), want: []string{"--env", "DROP TABLE y"}, store: true},
		{name: "run injection in SCHEMA_SUFFIX", args: args("run", "raw.a"), env: []string{spec.SchemaSuffixEnvVar + "=" + btInject}, want: []string{"DROP TABLE y"}, store: true},
		// Windows on mark: parsed before the store is opened.
		{name: "mark window ends before it starts", args: args("mark", cat([]string{"raw.a", "--status", "pending"}, win(4, 2))...), want: []string{"2026-01-01T04:00:00Z", "2026-01-01T02:00:00Z", "empty"}, store: true},
		{name: "mark applied backdated with --as-of", args: args("mark", cat([]string{"raw.a", "--status", "applied", "--as-of", "2026-01-01T00:00:00Z"}, win(2, 3))...), want: []string{"--as-of", "applied_at", "freshness"}, store: true},
		{name: "mark window is empty", args: args("mark", cat([]string{"raw.a", "--status", "pending"}, win(2, 2))...), want: []string{"empty"}, store: true},
		{name: "mark window without --since", args: args("mark", "raw.a", "--status", "pending", "--until", "2026-01-01T02:00:00Z"), want: []string{"--since"}, store: true},
		{name: "mark window with a bad time", args: args("mark", "raw.a", "--status", "pending", "--since", "noonish", "--until", "2026-01-02"), want: []string{"--since", "noonish"}, store: true},
		{name: "mark status unknown", args: args("mark", cat([]string{"raw.a", "--status", "done"}, win(0, 1))...), want: []string{"done"}, store: true},
		// Refused by the engine, which audits every mark, refused or not.
		{name: "mark window not on the grid", args: args("mark", "raw.a", "--status", "pending", "--since", "2026-01-01T00:30:00Z", "--until", "2026-01-01T02:00:00Z"), want: []string{"raw.a", "aligned"}, store: true, audited: true},
		{name: "mark injection as a model", args: args("mark", cat([]string{model, "--status", "pending"}, win(0, 1))...), want: []string{"DROP TABLE y"}, store: true, audited: true},
		// why, units, blocked, watch, status, worker.
		{name: "why time not a time", args: args("why", "raw.a", "--at", "yesterday-ish"), want: []string{"--at", "yesterday-ish"}, store: true},
		{name: "why injection as a model", args: args("why", model, "--at", "2026-01-01"), want: []string{"DROP TABLE y"}, store: true},
		{name: "units window ends before it starts", args: args("units", cat([]string{"raw.a"}, win(5, 1))...), want: []string{"2026-01-01T05:00:00Z", "2026-01-01T01:00:00Z", "empty"}, store: true},
		{name: "units window with a bad time", args: args("units", "raw.a", "--until", "2026-02-30"), want: []string{"--until", "2026-02-30"}, store: true},
		{name: "units status unknown", args: args("units", "raw.a", "--status", "stuck"), want: []string{"stuck"}, store: true},
		{name: "units injection as a model", args: args("units", model), want: []string{"DROP TABLE y"}, store: true},
		{name: "blocked injection as a model", args: args("blocked", "--model", model), want: []string{"DROP TABLE y"}, store: true},
		{name: "blocked injection as a pipeline", args: args("blocked", "--pipeline", btInject), want: []string{"DROP TABLE y"}, store: true},
		{name: "watch poll not a duration", args: args("watch", "--poll", "soon"), want: []string{"--poll", "soon"}, store: true},
		{name: "watch poll zero", args: args("watch", "--poll", "0s"), want: []string{"--poll"}, store: true},
		{name: "watch injection as a model", args: args("watch", model), want: []string{"DROP TABLE y"}, store: true},
		{name: "status as-of not a time", args: args("status", "--as-of", "2026-02-30"), want: []string{"--as-of", "2026-02-30"}, store: true},
		{name: "status theme unknown", args: args("status", "--theme", "evil"), want: []string{"--theme", "evil", "dark"}, store: true},
		{name: "run theme unknown", args: args("run", "raw.a", "--theme", "evil"), want: []string{"--theme", "evil"}, store: true},
		{name: "worker lease zero", args: args("worker", "--lease", "0s"), want: []string{"--lease"}, store: true},
		{name: "worker workers past the ceiling", args: args("worker", "--workers", "10000000"), want: []string{"--workers 10000000", "1024"}, store: true},
		{name: "worker lease not a duration", args: args("worker", "--lease", "forever"), want: []string{"--lease", "forever"}, store: true},
		// The store's schema name is an identifier too.
		{name: "injection as the PostgreSQL schema", args: args("status"), env: []string{"BOLLHAV_PG_SCHEMA=" + btInject}, want: []string{"schema", "DROP TABLE y"}, pgOnly: true},
	}
}

// btDSNRows are DSNs that name no usable store, each tried with apply, run
// and status. None of them reaches the world's store, which must stay as it
// was; those that need a PostgreSQL server that answers use the world's.
func btDSNRows() []btRow {
	type bad struct {
		name   string
		dsn    func(t *testing.T, w *btWorld) string
		want   []string
		pgOnly bool
	}
	fixed := func(s string) func(*testing.T, *btWorld) string {
		return func(*testing.T, *btWorld) string { return s }
	}
	bads := []bad{
		{"URL that does not parse", fixed("postgres://u@[::1/db"), []string{"URL"}, false},
		{"unknown scheme", fixed("mysql://root@localhost/db"), []string{`"mysql"`}, false},
		{"keyword form without a value", fixed("host=127.0.0.1 port"), []string{`"port"`}, false},
		{"keyword form with an unknown key", fixed("host=127.0.0.1 port=1 connect_timeout=2 hots=db.example"), []string{`"hots"`}, false},
		{"unreachable host", fixed("postgres://u@127.0.0.1:1/db?connect_timeout=2"), []string{"127.0.0.1:1"}, false},
		{"unknown host", fixed("postgres://u@no-such-host.invalid/db?connect_timeout=2"), []string{"no-such-host.invalid"}, false},
		{"bad sslmode", fixed("postgres://u@127.0.0.1:1/db?sslmode=sometimes"), []string{"sslmode"}, false},
		{"sqlite: without a file", fixed("sqlite:"), []string{"sqlite:"}, false},
		{"SQLite path with a query", func(_ *testing.T, w *btWorld) string { return filepath.Join(w.dir, "s.db?mode=ro") }, []string{"'?'"}, false},
		{"SQLite path that is a directory", func(_ *testing.T, w *btWorld) string { return w.dir }, []string{"{dir}", "is a directory"}, false},
		{"SQLite path that is the spec", func(_ *testing.T, w *btWorld) string { return w.spec }, []string{"bollhav.yaml", "not a database"}, false},
		{"database the server does not have", func(t *testing.T, w *btWorld) string { return btServerURL(t, w, "bollhav_no_such_db", "") },
			[]string{`"bollhav_no_such_db"`, "does not exist"}, true},
		{"setting the server does not know", func(t *testing.T, w *btWorld) string { return btServerURL(t, w, "", "bollhav_no_such_setting=1") },
			[]string{`"bollhav_no_such_setting"`}, true},
	}
	var rows []btRow
	for _, b := range bads {
		for _, cmd := range []string{"apply", "run", "status"} {
			rows = append(rows, btRow{
				name:   "dsn " + b.name + " " + cmd,
				args:   func(t *testing.T, w *btWorld) []string { return []string{cmd, "--spec", w.spec, "--dsn", b.dsn(t, w)} },
				want:   b.want,
				pgOnly: b.pgOnly,
			})
		}
	}
	return rows
}

// btServerURL is the world's PostgreSQL server as a URL, with another
// database when db is set and an extra parameter when param is.
func btServerURL(t *testing.T, w *btWorld, db, param string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(w.dsn)
	if err != nil {
		t.Fatal(err)
	}
	if db == "" {
		db = cfg.Database
	}
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + db, RawQuery: "sslmode=disable&connect_timeout=10"}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	if param != "" {
		u.RawQuery += "&" + param
	}
	return u.String()
}

// TestBadInputTable runs every row against a seeded store on SQLite, and
// the rows about the store against PostgreSQL too. The worlds are
// independent and run at once; the rows of one world run one after another,
// so that a change to its store is blamed on the row that made it.
func TestBadInputTable(t *testing.T) {
	rows := append(append(btSpecRows(), btFlagRows()...), btDSNRows()...)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			w := newBTWorld(t, backend)
			for _, r := range rows {
				if (backend == "postgres" && !r.store && !r.pgOnly) || (backend == "sqlite" && r.pgOnly) {
					continue
				}
				t.Run(r.name, func(t *testing.T) { btCheckRow(t, w, r) })
			}
			t.Run("store of a newer schema version", func(t *testing.T) { btNewerSchema(t, w) })
		})
	}
	t.Run("sentinel password", func(t *testing.T) {
		t.Parallel()
		btSentinel(t)
	})
}

// btCheckRow runs one row and checks its exit code, its one line, and that
// nothing changed: the store, the world's folder, the working directory.
func btCheckRow(t *testing.T, w *btWorld, r btRow) {
	args := r.args(t, w)
	before := w.snapshot(t).String()
	files := btFiles(t, w.dir, "state.db")
	cwd := t.TempDir()

	code, out, errOut := btCLI(t, cwd, append(w.env(), r.env...), args...)

	line, one := btOneLine(errOut)
	if code != ExitUsage || out != "" || !one {
		t.Errorf("bollhav %s: exit %d, stdout %q, stderr %q; want exit 2, no stdout and one line", args[0], code, out, errOut)
	}
	if !strings.HasPrefix(line, "bollhav "+args[0]+": ") {
		t.Errorf("the line %q does not say which command speaks (bollhav %s: …)", line, args[0])
	}
	for _, want := range r.want {
		want = strings.ReplaceAll(want, "{dir}", w.dir)
		if !strings.Contains(line, want) {
			t.Errorf("the line %q does not name %q", line, want)
		}
	}
	after := w.snapshot(t)
	if r.audited {
		// The one entry the refusal adds is the newest; drop it to compare.
		if n := len(after.Audit); n == 0 || !strings.HasPrefix(after.Audit[0].Outcome, "error: ") {
			t.Errorf("the refusal was not audited as an error: %+v", after.Audit)
		} else {
			after.Audit = after.Audit[1:]
		}
	}
	if a := after.String(); a != before {
		t.Errorf("the store changed: %s", btFirstDiff(before, a))
	}
	if d := btSameFiles(files, btFiles(t, w.dir, "state.db")); d != "" {
		t.Errorf("the world's folder changed: %s", d)
	}
	if d := btSameFiles(nil, btFiles(t, cwd)); d != "" {
		t.Errorf("the working directory changed: %s", d)
	}
}

// btStoreCommands are the commands that open a store, with what each needs
// besides the store to get that far.
var btStoreCommands = [][]string{
	{"apply"},
	{"status"},
	{"units", "raw.a"},
	{"run", "raw.a", "--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T01:00:00Z"},
	{"plan", "raw.a"},
	{"mark", "raw.a", "--status", "pending", "--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T01:00:00Z"},
	{"why", "raw.a", "--at", "2026-01-01T00:30:00Z"},
	{"blocked"},
	{"watch", "--count", "1"},
	{"worker"},
}

// btNewerSchema: a store migrated by a newer bollhav is refused by every
// command that opens a store, with one line that says so, and is left
// exactly as it was.
func btNewerSchema(t *testing.T, w *btWorld) {
	before := w.snapshot(t).String()
	tool := btSchemaTool(t, w.backend)
	dsn := w.dsn
	var toolEnv []string
	switch w.backend {
	case "sqlite":
		// A copy, so that the world's store stays current.
		dsn = filepath.Join(w.dir, "newer.db")
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(w.dsn + suffix)
			if errors.Is(err, fs.ErrNotExist) && suffix != "" {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dsn+suffix, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		toolEnv = []string{"BOLLHAV_BADINPUT_STORE=" + dsn}
	case "postgres":
		toolEnv = []string{"BOLLHAV_BADINPUT_DSN=" + w.dsn, "BOLLHAV_BADINPUT_SCHEMA=" + w.schema}
	}
	current := tool(t, toolEnv, "show")
	known := len(strings.Split(current, ","))
	newer := tool(t, toolEnv, "newer")
	if want := current + "," + strconv.Itoa(known+1); newer != want {
		t.Fatalf("the store records versions %s after the bump, want %s", newer, want)
	}
	// Put the world back even when a check below fails.
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if got := tool(t, toolEnv, "current"); got != current {
				t.Errorf("after the restore the store records versions %s, want %s", got, current)
			}
		}
	}
	defer restore()
	fileSum := func() [32]byte {
		if w.backend != "sqlite" {
			return [32]byte{}
		}
		b, err := os.ReadFile(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	sum := fileSum()

	for _, c := range btStoreCommands {
		args := append([]string{c[0], "--spec", w.spec, "--dsn", dsn}, c[1:]...)
		code, out, errOut := btCLI(t, t.TempDir(), w.env(), args...)
		line, one := btOneLine(errOut)
		if code != ExitUsage || out != "" || !one || !strings.HasPrefix(line, "bollhav "+c[0]+": ") ||
			!strings.Contains(line, "newer") || !strings.Contains(line, "upgrade bollhav") {
			t.Errorf("bollhav %s on a newer store: exit %d, stdout %q, stderr %q; want exit 2 and one line saying the store is newer and to upgrade bollhav",
				c[0], code, out, errOut)
		}
	}

	if fileSum() != sum {
		t.Errorf("the refused commands changed the newer store's file")
	}
	if got := tool(t, toolEnv, "show"); got != newer {
		t.Errorf("the refused commands changed the recorded versions: %s, want %s", got, newer)
	}
	restore()
	// Back at this binary's version, the store holds what it held.
	s, _, err := stores.Open(context.Background(), dsn, w.dir, stores.Options{PostgresSchema: w.schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if after := btSnapshotOf(t, s).String(); after != before {
		t.Errorf("the newer store's content changed: %s", btFirstDiff(before, after))
	}
}

// btSchemaTool builds the test binary of the backend's package, whose
// TestBadInputSchemaVersion moves a store's schema version (that takes SQL,
// which lives only in the backends), and returns a function that runs op
// with env and returns the versions the store records afterwards.
func btSchemaTool(t *testing.T, backend string) func(t *testing.T, env []string, op string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), backend+".test")
	build := exec.Command("go", "test", "-c", "-o", bin, "github.com/bollhav/bollhav/state/"+backend)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the %s schema tool: %v\n%s", backend, err, out)
	}
	return func(t *testing.T, env []string, op string) string {
		t.Helper()
		cmd := exec.Command(bin, "-test.run=^TestBadInputSchemaVersion$", "-test.count=1")
		cmd.Env = append(append(btCleanEnv(), env...), "BOLLHAV_BADINPUT_OP="+op)
		out, err := cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "versions: "); ok && err == nil {
				return v
			}
		}
		t.Fatalf("the %s schema tool (%s): %v\n%s", backend, op, err, out)
		return ""
	}
}

// btSecret is the sentinel password: it must never be seen again.
const btSecret = "S3ntinel-PW-9f2c"

// btSentinel puts btSecret into DSNs that are malformed or name a server
// that cannot be used — in the URL, in keyword form, in PGPASSWORD, in
// BOLLHAV_DSN — and runs every command that opens a store with each: exit 2,
// and the password appears in no output, no file the command leaves (in its
// working directory or beside the spec) and not in the world's store.
func btSentinel(t *testing.T) {
	w := newBTWorld(t, "sqlite")
	pgpass := []string{"PGPASSWORD=" + btSecret}
	forms := []btSentinelForm{
		{"URL that does not parse", "postgres://u:" + btSecret + "@[::1/db", nil},
		{"URL with a bad port", "postgres://u:" + btSecret + "@127.0.0.1:notaport/db", nil},
		{"URL with an unescaped @ in the password", "postgres://u:" + btSecret + "@x@127.0.0.1:1/db?connect_timeout=2", nil},
		{"URL with an unescaped / in the password", "postgres://u:" + btSecret + "/x@127.0.0.1:1/db?connect_timeout=2", nil},
		{"URL with the password in the query and a bad sslmode", "postgres://u@127.0.0.1:1/db?password=" + btSecret + "&sslmode=sometimes", nil},
		{"URL of an unknown scheme", "mysql://u:" + btSecret + "@127.0.0.1/db", nil},
		{"URL, unreachable", "postgres://u:" + btSecret + "@127.0.0.1:1/db?connect_timeout=2", nil},
		{"URL, unknown host", "postgres://u:" + btSecret + "@no-such-host.invalid/db?connect_timeout=2", nil},
		{"keyword form with a bad port", "host=127.0.0.1 port=notaport password=" + btSecret, nil},
		{"keyword form with an unterminated quote", "host=127.0.0.1 password='" + btSecret, nil},
		{"keyword form with a stray word", "host=127.0.0.1 password=" + btSecret + " port", nil},
		{"keyword form with a misspelt first key", "hots=127.0.0.1 password=" + btSecret, nil},
		{"keyword form, unreachable", "host=127.0.0.1 port=1 connect_timeout=2 password=" + btSecret, nil},
		{"keyword form, quoted, unreachable", "host=127.0.0.1 port=1 connect_timeout=2 password='" + btSecret + " x'", nil},
		{"PGPASSWORD, URL that does not parse", "postgres://u@[::1/db", pgpass},
		{"PGPASSWORD, URL unreachable", "postgres://u@127.0.0.1:1/db?connect_timeout=2", pgpass},
		{"PGPASSWORD, keyword form with a bad port", "host=127.0.0.1 port=notaport", pgpass},
		{"PGPASSWORD, keyword form, unreachable", "host=127.0.0.1 port=1 connect_timeout=2", pgpass},
		{"BOLLHAV_DSN, unreachable", "", []string{"BOLLHAV_DSN=postgres://u:" + btSecret + "@127.0.0.1:1/db?connect_timeout=2"}},
	}
	btSentinelForms(t, w, forms)

	// A server that answers, and refuses: the password travels further.
	t.Run("server", func(t *testing.T) {
		srv, err := pgconn.ParseConfig(pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		host := net.JoinHostPort(srv.Host, strconv.Itoa(int(srv.Port)))
		kw := fmt.Sprintf("host=%s port=%d user=%s dbname=bollhav_no_such_db sslmode=disable", srv.Host, srv.Port, srv.User)
		btSentinelForms(t, w, []btSentinelForm{
			{"URL to a database that does not exist", "postgres://" + srv.User + ":" + btSecret + "@" + host + "/bollhav_no_such_db?sslmode=disable", nil},
			{"URL with a setting the server does not know", "postgres://" + srv.User + ":" + btSecret + "@" + host + "/" + srv.Database + "?sslmode=disable&bollhav_no_such_setting=1", nil},
			{"keyword form to a database that does not exist", kw + " password=" + btSecret, nil},
			{"PGPASSWORD to a database that does not exist", kw, pgpass},
		})
	})
}

// btSentinelForm is a DSN (or an environment) that carries btSecret.
type btSentinelForm struct {
	name string
	dsn  string // "" leaves --dsn out
	env  []string
}

// btSentinelForms runs every command that opens a store with each form.
func btSentinelForms(t *testing.T, w *btWorld, forms []btSentinelForm) {
	for _, f := range forms {
		for _, c := range btStoreCommands {
			t.Run(f.name+" "+c[0], func(t *testing.T) {
				args := []string{c[0], "--spec", w.spec}
				if f.dsn != "" {
					args = append(args, "--dsn", f.dsn)
				}
				args = append(args, c[1:]...)
				cwd := t.TempDir()
				code, out, errOut := btCLI(t, cwd, append(w.env(), f.env...), args...)
				if _, one := btOneLine(errOut); code != ExitUsage || !one {
					t.Errorf("exit %d, stderr %q; want exit 2 and one line", code, errOut)
				}
				if strings.Contains(out, btSecret) || strings.Contains(errOut, btSecret) {
					t.Errorf("the password reached the output:\nstdout %q\nstderr %q", out, errOut)
				}
				for _, dir := range []string{cwd, w.dir} {
					if where := btFind(t, dir, btSecret); where != "" {
						t.Errorf("the password is in %s", where)
					}
				}
			})
		}
	}
}

// btFind returns the first file under dir whose name or content holds s.
func btFind(t *testing.T, dir, s string) string {
	t.Helper()
	found := ""
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return err
		}
		if strings.Contains(p, s) {
			found = p
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			found = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
