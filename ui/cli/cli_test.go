package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
)

// containsAll checks that a command's output holds every piece of text
// wanted (enginetest.ContainsAll, which the UI's tests share).
var containsAll = enginetest.ContainsAll

// run invokes the CLI in-process and returns exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func writeSpec(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bollhav.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A small pipeline worked out by hand: raw.a and raw.b have no dependencies
// (wave 1); core.c gates on both (wave 2); core.d runs after core.c fails
// (wave 3). marts.e lives in another pipeline and gates on core.c.
const smallSpec = `models:
  - {name: raw.a, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: raw.b, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: core.c, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.a, contract: encapsulate}, {name: raw.b, contract: exists}], run: {command: ["true"]}}
  - {name: core.d, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     after: [{task: core.c, on: failure}], run: {command: ["true"]}}
  - {name: marts.e, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: core.c, contract: whole}], run: {command: ["true"]}}
`

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := run(t, "--version")
	if want := "bollhav " + Version() + "\n" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"; code != 0 || out != want {
		t.Fatalf("--version: code %d, out %q, want %q", code, out, want)
	}
	if strings.HasPrefix(out, "bollhav dev\n") {
		t.Errorf("--version prints the old placeholder: %q", out)
	}
	code, out, _ = run(t, "help")
	if code != 0 || !strings.Contains(out, "lint") || !strings.Contains(out, "graph") {
		t.Fatalf("help lists the commands: code %d\n%s", code, out)
	}
	code, out, _ = run(t, "help", "graph")
	if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--format") {
		t.Fatalf("help graph shows flags and examples: code %d\n%s", code, out)
	}
	code, out2, _ := run(t, "graph", "--help")
	if code != 0 || out2 != out {
		t.Fatalf("graph --help is help graph: code %d\n%s", code, out2)
	}
}

// TestVersionFromBuildInfo: --version names the module version a build
// carries (go install …@v1.2.3, or the pseudo-version go build stamps in a
// git clone), else the VCS revision and commit time, marked modified for a
// dirty tree, else says there is none — never one placeholder for all.
func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.2"}}, "v1.4.2"},
		{"go build in a clone", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261129214258-0123456789ab+dirty"},
			Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-29T21:42:58Z")}, "v0.0.0-20261129214258-0123456789ab+dirty"},
		{"VCS only", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs", "git", "vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-29T21:42:58Z", "vcs.modified", "false")},
			"devel 0123456789ab 2026-11-29T21:42:58Z"},
		{"VCS, uncommitted changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-29T21:42:58Z", "vcs.modified", "true")},
			"devel 0123456789ab 2026-11-29T21:42:58Z modified"},
		{"nothing built in", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("-buildvcs", "false")},
			"devel, with no version or VCS information built in (-buildvcs=false, or not built in a git clone)"},
		{"no build information", nil, "devel (no build information)"},
	} {
		if got := versionOf(c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHelpAlignsEveryCommand: bollhav help lists every command, each
// summary starting in one column however long the name (incidents, nine
// letters, once pushed its own out).
func TestHelpAlignsEveryCommand(t *testing.T) {
	_, out, _ := run(t, "help")
	_, block, ok := strings.Cut(out, "\nCommands:\n")
	if !ok {
		t.Fatalf("no Commands: block\n%s", out)
	}
	block, _, _ = strings.Cut(block, "\n\n")
	column := -1
	seen := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		name := strings.Fields(line)[0]
		seen[name] = true
		col := strings.Index(line, commands[name].summary)
		switch {
		case col < 0:
			t.Errorf("%q does not carry %s's summary", line, name)
		case column < 0:
			column = col
		case col != column:
			t.Errorf("%s's summary starts at column %d, the others' at %d:\n%s", name, col, column, block)
		}
	}
	for name := range commands {
		if !seen[name] {
			t.Errorf("help does not list %s", name)
		}
	}
	if !strings.Contains(commands["incidents"].summary, "failures first, then by units held") {
		t.Errorf("incidents' summary does not say its order: %q", commands["incidents"].summary)
	}
}

// TestCommandHelpListsTheFlagsItUses: a command's help lists its own flags
// and the global flags it uses, not the others — graph and lint open no
// store, status evaluates nothing as of a time and changes nothing, run
// and worker refuse --as-of, demo its own store and spec — yet every
// command still accepts every global flag.
func TestCommandHelpListsTheFlagsItUses(t *testing.T) {
	for _, c := range []struct {
		cmd        string
		want, gone []string
	}{
		{"graph", []string{"--spec", "--output", "--format"}, []string{"--dsn", "--env", "--as-of", "--read-only", "--allow-lint-errors", "--theme"}},
		{"lint", []string{"--spec", "--output"}, []string{"--dsn", "--env", "--as-of", "--read-only", "--allow-lint-errors", "--theme"}},
		{"status", []string{"--spec", "--dsn", "--env", "--output", "--theme"}, []string{"--as-of", "--read-only", "--allow-lint-errors"}},
		{"incidents", []string{"--spec", "--dsn", "--env", "--output", "--as-of"}, []string{"--read-only", "--allow-lint-errors", "--theme"}},
		{"run", []string{"--spec", "--dsn", "--read-only", "--allow-lint-errors", "--mode", "--since"}, []string{"--as-of"}},
		{"worker", []string{"--spec", "--dsn", "--lease"}, []string{"--as-of", "--output", "--theme"}},
		{"demo", []string{"--dir", "--no-ui", "--theme", "--as-of"}, []string{"--spec", "--dsn", "--env", "--read-only", "--output"}},
		{"serve", []string{"--ssh", "--metrics", "--dsn", "--read-only"}, []string{"--as-of", "--output"}},
		{"store", []string{"--to", "--dsn", "--read-only"}, []string{"--env", "--as-of", "--theme"}},
	} {
		_, out, _ := run(t, c.cmd, "--help")
		_, flags, _ := strings.Cut(out, "\nFlags:\n")
		flags, _, _ = strings.Cut(flags, "\n\n")
		for _, f := range c.want {
			if !strings.Contains(flags, f+" ") && !strings.Contains(flags, f+"[") {
				t.Errorf("%s --help does not list %s:\n%s", c.cmd, f, flags)
			}
		}
		for _, f := range c.gone {
			if strings.Contains(flags, f+" ") || strings.Contains(flags, f+"[") {
				t.Errorf("%s --help lists %s, which it does not use:\n%s", c.cmd, f, flags)
			}
		}
	}
	sp := writeSpec(t, smallSpec)
	if code, _, errOut := run(t, "graph", "--spec", sp, "--dsn", filepath.Join(t.TempDir(), "x.db"), "--env", "dev"); code != 0 {
		t.Errorf("graph with --dsn and --env: exit %d, %s", code, errOut)
	}
}

// TestUsageLinesNameRequiredFlags: each command's usage line names what it
// cannot do without, then [flags]: serve needs --ssh or --metrics, store
// copy --to, mark its window and status, why and units a MODEL.
func TestUsageLinesNameRequiredFlags(t *testing.T) {
	want := map[string]string{
		"serve":  "Usage: bollhav serve --ssh ADDR and/or --metrics ADDR [flags]",
		"store":  "Usage: bollhav store copy --to DSN [flags]",
		"mark":   "Usage: bollhav mark MODEL --since T --until T --status applied|pending [flags]",
		"why":    "Usage: bollhav why MODEL [--at TIME] [flags]",
		"units":  "Usage: bollhav units MODEL [flags]",
		"run":    "Usage: bollhav run [MODEL…] [flags]",
		"status": "Usage: bollhav status [flags]",
	}
	for name := range commands {
		_, out, _ := run(t, "help", name)
		line, _, _ := strings.Cut(out, "\n")
		if w, ok := want[name]; ok && line != w {
			t.Errorf("help %s: %q, want %q", name, line, w)
		}
		if !strings.HasPrefix(line, "Usage: bollhav "+name+" ") || !strings.HasSuffix(line, " [flags]") || strings.Contains(line, "  ") {
			t.Errorf("help %s: usage line %q", name, line)
		}
	}
}

func TestUnknownCommandAndBadFlagsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"lint", "--no-such-flag"},
		{"graph", "-o", "yaml"},
		{"graph", "--format", "svg"},
		{"help", "frobnicate"},
		{"lint", "extra-arg"},
		{"graph", "--as-of", "yesterday"},
		{"lint", "--env", `x"; drop table y; --`},
	} {
		code, out, errOut := run(t, args...)
		if code != 2 || errOut == "" || out != "" {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want exit 2 with a message on stderr", args, code, out, errOut)
		}
	}
}

func TestMissingSpecIsAClearError(t *testing.T) {
	code, _, errOut := run(t, "lint", "--spec", filepath.Join(t.TempDir(), "nope.yaml"))
	if code != 2 || !strings.Contains(errOut, "nope.yaml") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestLintReportsDefinitionErrorsWithPosition(t *testing.T) {
	sp := writeSpec(t, `models:
  - name: raw.a
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: dropzone.orders
        file: {path: orders.csv}
        contract: encapsulate
    run: {command: ["true"]}
`)
	code, out, errOut := run(t, "lint", "--spec", sp)
	if code != 2 || out != "" {
		t.Fatalf("code %d, stdout %q", code, out)
	}
	// The contract key sits on line 7, column 9.
	if !strings.Contains(errOut, sp+":7:9") {
		t.Fatalf("stderr lacks %s:7:9:\n%s", sp, errOut)
	}
}

func TestLintJSONShape(t *testing.T) {
	sp := writeSpec(t, `models:
  - name: stage.events
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {query: "SELECT * FROM raw.e WHERE ts >= :since AND ts < :until", write: {mode: append}}
`)
	code, out, errOut := run(t, "lint", "--spec", sp, "-o", "json")
	if code != 0 {
		t.Fatalf("a warning exits 0, got %d: %s", code, errOut)
	}
	var got struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got.Findings) != 1 {
		t.Fatalf("want one finding, got %s", out)
	}
	var keys []string
	for k := range got.Findings[0] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"message", "model", "rule", "severity"}) {
		t.Errorf("keys %v", keys)
	}
	if f := got.Findings[0]; f["model"] != "stage.events" || f["severity"] != "warning" || f["rule"] != "flex-append" {
		t.Errorf("finding %v", f)
	}
}

func TestLintProvenErrorExits1(t *testing.T) {
	sp := writeSpec(t, `models:
  - {name: raw.orders, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: exact}], run: {command: ["true"]}}
`)
	code, out, _ := run(t, "lint", "--spec", sp)
	if code != 1 || !strings.Contains(out, "exact-grain-mismatch") || !strings.Contains(out, "1 error, 0 warnings") {
		t.Fatalf("code %d\n%s", code, out)
	}
}

func TestGraphJSONWaves(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	// Global flags before the command name work too.
	code, out, errOut := run(t, "--spec", sp, "graph", "-o", "json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	var got struct {
		Pipelines []struct {
			Name  string `json:"name"`
			Tasks []struct {
				ID   int    `json:"id"`
				Name string `json:"name"`
			} `json:"tasks"`
			Waves [][]int `json:"waves"`
		} `json:"pipelines"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got.Pipelines) != 2 || got.Pipelines[0].Name != "core" || got.Pipelines[1].Name != "marts" {
		t.Fatalf("pipelines %+v", got.Pipelines)
	}
	core := got.Pipelines[0]
	// Ids in spec order: raw.a=1 raw.b=2 core.c=3 core.d=4 marts.e=5.
	if !reflect.DeepEqual(core.Waves, [][]int{{1, 2}, {3}, {4}}) {
		t.Errorf("core waves %v, want [[1 2] [3] [4]]", core.Waves)
	}
	if core.Tasks[2].ID != 3 || core.Tasks[2].Name != "core.c" {
		t.Errorf("core tasks %+v", core.Tasks)
	}
	if !reflect.DeepEqual(got.Pipelines[1].Waves, [][]int{{5}}) {
		t.Errorf("marts waves %v", got.Pipelines[1].Waves)
	}
}

func TestGraphText(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	code, out, errOut := run(t, "graph", "--spec", sp)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	containsAll(t, "output", out,
		"pipeline core: 4 tasks, 3 edges, 0 cross-pipeline",
		"wave 1   #1 raw.a",
		"#3 core.c  ← raw.a, raw.b",
		"wave 3   #4 core.d  ← core.c (failure)",
		"pipeline marts: 1 task, 0 edges, 1 cross-pipeline",
		"#5 marts.e  ← core.c (pipeline core)",
	)
}

func TestGraphDotAndMermaid(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	_, dot, _ := run(t, "graph", "--spec", sp, "--format", "dot")
	containsAll(t, "dot", dot, `"raw.a" -> "core.c";`, `"core.c" -> "core.d" [label="failure"];`,
		`"core.c" -> "marts.e" [style=dashed, label="cross-pipeline"];`)
	_, mm, _ := run(t, "graph", "--spec", sp, "--format", "mermaid")
	containsAll(t, "mermaid", mm, "flowchart LR", `n1["raw.a"]`, "n1 --> n3", "n3 -- failure --> n4", "n3 -. cross-pipeline .-> n5")
}

func TestGraphCycleIsAClearError(t *testing.T) {
	sp := writeSpec(t, `models:
  - {name: a.x, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: b.y}], run: {command: ["true"]}}
  - {name: b.y, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: a.x}], run: {command: ["true"]}}
`)
	code, _, errOut := run(t, "graph", "--spec", sp)
	if code != 2 || !strings.Contains(errOut, "cycle") || !strings.Contains(errOut, "a.x → b.y → a.x") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestExampleSpecIsLintClean(t *testing.T) {
	code, out, errOut := run(t, "lint", "--spec", "../../examples/shop/bollhav.yaml")
	if code != 0 {
		t.Fatalf("the example must load and prove no error; code %d\n%s%s", code, out, errOut)
	}
	// It shows the patterns to copy: not even a warning (its revenue model
	// once created its table in every unit: unit-ddl).
	if !strings.Contains(out, "no findings") {
		t.Errorf("the example has lint findings:\n%s", out)
	}
}
