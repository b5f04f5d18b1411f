package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
	if code != 0 || !strings.HasPrefix(out, "bollhav ") {
		t.Fatalf("--version: code %d, out %q", code, out)
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
