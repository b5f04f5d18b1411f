package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/stores"
)

// suSpec is the world of the status, units, watch and mark tests: an hourly
// fixed model, a daily flexible one and a timeless one in two pipelines.
const suSpec = `models:
  - {name: raw.a, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: stage.f, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", flexibility: flex},
     run: {command: ["true"]}}
  - {name: ref.c, pipeline: side, temporality: timeless, run: {command: ["true"]}}
`

// suExtra is a model added to the spec after apply: in the spec, not
// registered.
const suExtra = `  - {name: marts.new, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

// suWorld is suSpec applied through the CLI to a fresh store, and the store
// itself, opened beside the CLI as a second client, to set up units.
type suWorld struct {
	spec  string
	dsn   string
	store state.Store
}

// args is cmd with --spec and --dsn of the world, then more.
func (w *suWorld) args(cmd string, more ...string) []string {
	return append([]string{cmd, "--spec", w.spec, "--dsn", w.dsn}, more...)
}

// ok runs cmd on the world, as args says, and returns its output, failing
// the test unless it exits 0.
func (w *suWorld) ok(t *testing.T, cmd string, more ...string) string {
	t.Helper()
	code, out, errOut := run(t, w.args(cmd, more...)...)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	return out
}

// suEach runs f on a fresh SQLite world and on a fresh PostgreSQL one (in a
// schema of its own; skipped without a server, as pgtest says).
func suEach(t *testing.T, f func(t *testing.T, w *suWorld)) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { f(t, newSUWorld(t, backend)) })
	}
}

func newSUWorld(t *testing.T, backend string) *suWorld {
	t.Helper()
	dir := t.TempDir()
	w := &suWorld{spec: filepath.Join(dir, "bollhav.yaml")}
	if err := os.WriteFile(w.spec, []byte(suSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := ""
	switch backend {
	case "sqlite":
		w.dsn = filepath.Join(dir, "state.db")
	case "postgres":
		w.dsn = pgtest.DSN(t)
		schema = pgtest.Schema(t, w.dsn)
		t.Setenv("BOLLHAV_PG_SCHEMA", schema)
	}
	t.Setenv("BOLLHAV_ACTOR", "tester")
	if code, _, errOut := run(t, w.args("apply")...); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	s, _, err := stores.Open(context.Background(), w.dsn, dir, stores.Options{PostgresSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w.store = s
	return w
}

// addExtraModel adds marts.new to the spec file without registering it.
func (w *suWorld) addExtraModel(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(w.spec, []byte(suSpec+suExtra), 0o644); err != nil {
		t.Fatal(err)
	}
}

// suH is 2026-01-01 plus hours; suD is 2026-01-01 plus days.
func suH(n int) time.Time { return time.Date(2026, 1, 1, n, 0, 0, 0, time.UTC) }
func suD(n int) time.Time { return time.Date(2026, 1, 1+n, 0, 0, 0, 0, time.UTC) }

func suHW(a, b int) state.Window { return state.MustWindow(suH(a), suH(b)) }

// seedUnits gives the world hand-checkable units:
//
//	raw.a   [00,02) applied at 2026-01-02T00:00Z, [03,04) applied at 01:00Z,
//	        [02,03) running, [04,05) failed, [05,06) blocked, [06,07) pending
//	stage.f [01-01,01-02) [01-02,01-03) [01-04,01-05) applied at 2026-01-06
//	ref.c   its existence row, pending
func (w *suWorld) seedUnits(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	s := w.store
	var ws []state.Window
	for i := 0; i < 7; i++ {
		ws = append(ws, suHW(i, i+1))
	}
	prefill := func(model string, ws ...state.Window) {
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: model, Windows: ws, Now: suH(0)}); err != nil {
			t.Fatal(err)
		}
	}
	prefill("raw.a", ws...)
	set := func(model string, win state.Window, at time.Time) {
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: model, Window: win, From: []state.UnitStatus{state.Pending},
			To: state.Applied, AppliedAt: at, Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	set("raw.a", suHW(0, 2), suD(1))
	set("raw.a", suHW(3, 4), suD(1).Add(time.Hour))
	claim := func(win state.Window) state.Claim {
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.a"}, Window: win, Worker: "w1", Lease: time.Hour, Limit: 1, Now: time.Now()})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", win, cs, err)
		}
		return cs[0]
	}
	claim(suHW(2, 3))
	if err := s.Complete(ctx, claim(suHW(4, 5)), state.Outcome{Status: state.Failed, At: time.Date(2026, 1, 2, 2, 0, 0, 0, time.UTC), Error: "boom\nexit status 1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, claim(suHW(5, 6)), state.Outcome{Status: state.Blocked, At: time.Now(),
		BlockedReason: "raw.x (EXACT): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)"}); err != nil {
		t.Fatal(err)
	}
	prefill("stage.f", state.MustWindow(suD(0), suD(1)), state.MustWindow(suD(1), suD(2)), state.MustWindow(suD(3), suD(4)))
	set("stage.f", state.MustWindow(suD(0), suD(4)), suD(5))
	prefill("ref.c", state.Window{})
}

// suJSONEqual decodes both documents and compares them: same keys, same
// values, nothing more.
func suJSONEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", suCompactJSON(got), suCompactJSON(want))
	}
}

func suCompactJSON(s string) string {
	var v any
	_ = json.Unmarshal([]byte(s), &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// suCheckAligned asserts text is plain (no ANSI escapes) and that every line
// starts each column where the header's does.
func suCheckAligned(t *testing.T, text string) []string {
	t.Helper()
	if strings.Contains(text, "\x1b") {
		t.Fatalf("ANSI codes in piped output:\n%q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	header := lines[0]
	var starts []int
	for i := 1; i < len(header); i++ {
		if header[i] != ' ' && header[i-1] == ' ' && i >= 2 && header[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		t.Fatalf("no columns in header %q", header)
	}
	for _, l := range lines[1:] {
		r := []rune(l)
		for _, s := range starts {
			if s >= len(r) || r[s-1] != ' ' || r[s] == ' ' {
				t.Errorf("column at %d not aligned in\n%s\n%s", s, header, l)
				break
			}
		}
	}
	return lines
}

// suCells splits a table line at the header's column starts.
func suCells(header, line string) []string {
	var starts []int
	starts = append(starts, 0)
	for i := 2; i < len(header); i++ {
		if header[i] != ' ' && header[i-1] == ' ' && header[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	r := []rune(line)
	var out []string
	for i, s := range starts {
		end := len(r)
		if i+1 < len(starts) && starts[i+1] < end {
			end = starts[i+1]
		}
		if s > len(r) {
			s = len(r)
		}
		out = append(out, strings.TrimSpace(string(r[s:end])))
	}
	return out
}

func TestStatusJSON(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		w.seedUnits(t)
		w.addExtraModel(t)
		out := w.ok(t, "status", "-o", "json")
		// Each model's current fingerprint is a hash (the spec package
		// tests what it covers): here only its form is checked.
		fp := regexp.MustCompile(`,\s*"fingerprint":\s*"[0-9a-f]{16}"`)
		if n := len(fp.FindAllString(out, -1)); n != 4 {
			t.Errorf("%d models with a 16-hex fingerprint, want 4:\n%s", n, out)
		}
		out = fp.ReplaceAllString(out, "")
		suJSONEqual(t, out, `{"models": [
  {"name": "raw.a", "pipeline": "core", "temporality": "temporal", "flexibility": "fix", "interval": "1h",
   "counts": {"pending": 1, "running": 1, "applied": 3, "blocked": 1, "failed": 1},
   "coverage": [["2026-01-01T00:00:00Z", "2026-01-01T02:00:00Z"], ["2026-01-01T03:00:00Z", "2026-01-01T04:00:00Z"]],
   "last_applied_at": "2026-01-02T01:00:00Z", "outdated": 0, "state": true},
  {"name": "stage.f", "pipeline": "core", "temporality": "temporal", "flexibility": "flex", "interval": "1d",
   "counts": {"pending": 0, "running": 0, "applied": 3, "blocked": 0, "failed": 0},
   "coverage": [["2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z"], ["2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z"]],
   "last_applied_at": "2026-01-06T00:00:00Z", "outdated": 0, "state": true},
  {"name": "marts.new", "pipeline": "marts", "temporality": "temporal", "flexibility": "fix", "interval": "1d",
   "counts": {"pending": 0, "running": 0, "applied": 0, "blocked": 0, "failed": 0},
   "coverage": [], "last_applied_at": null, "outdated": 0, "state": true},
  {"name": "ref.c", "pipeline": "side", "temporality": "timeless", "flexibility": null, "interval": null,
   "counts": {"pending": 1, "running": 0, "applied": 0, "blocked": 0, "failed": 0},
   "coverage": [], "last_applied_at": null, "outdated": 0, "state": true}
], "retired": null}`)
	})
}

func TestStatusTextIsAlignedAndPlainWhenPiped(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		w.seedUnits(t)
		w.addExtraModel(t)
		out := w.ok(t, "status")
		lines := suCheckAligned(t, out)
		if len(lines) != 5 {
			t.Fatalf("want a header and 4 models:\n%s", out)
		}
		header := lines[0]
		if got := suCells(header, header); !reflect.DeepEqual(got, []string{"MODEL", "PIPELINE", "SHAPE", "PENDING", "RUNNING", "APPLIED", "BLOCKED", "FAILED", "OUTDATED", "LAST APPLIED", "COVERAGE"}) {
			t.Fatalf("header %q", got)
		}
		want := [][]string{
			{"raw.a", "core", "fix 1h", "1", "1", "3", "1", "1", "0", "2026-01-02T01:00:00Z", "2026-01-01T00:00:00Z..2026-01-01T04:00:00Z (1 gap)"},
			{"stage.f", "core", "flex 1d", "0", "0", "3", "0", "0", "0", "2026-01-06T00:00:00Z", "2026-01-01T00:00:00Z..2026-01-05T00:00:00Z (1 gap)"},
			{"marts.new", "marts", "fix 1d", "0", "0", "0", "0", "0", "0", "-", "not registered"},
			{"ref.c", "side", "timeless", "1", "0", "0", "0", "0", "0", "-", "-"},
		}
		for i, w := range want {
			if got := suCells(header, lines[i+1]); !reflect.DeepEqual(got, w) {
				t.Errorf("row %d\n got %q\nwant %q", i+1, got, w)
			}
		}
	})
}

func TestUnitsJSON(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		w.seedUnits(t)
		out := w.ok(t, "units", "raw.a", "-o", "json")
		suJSONEqual(t, out, strings.Replace(`{"model": "raw.a", "units": [
  {"since": "2026-01-01T00:00:00Z", "until": "2026-01-01T01:00:00Z", "status": "applied", "applied_at": "2026-01-02T00:00:00Z", "blocked_reason": null, "reasons": [], "attempts": 0, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": "unknown", "built_on_outdated": false},
  {"since": "2026-01-01T01:00:00Z", "until": "2026-01-01T02:00:00Z", "status": "applied", "applied_at": "2026-01-02T00:00:00Z", "blocked_reason": null, "reasons": [], "attempts": 0, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": "unknown", "built_on_outdated": false},
  {"since": "2026-01-01T02:00:00Z", "until": "2026-01-01T03:00:00Z", "status": "running", "applied_at": null, "blocked_reason": null, "reasons": [{"kind": "lease", "detail": "running under w1's lease", "until": "LEASE_UNTIL"}], "attempts": 0, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": null, "built_on_outdated": false},
  {"since": "2026-01-01T03:00:00Z", "until": "2026-01-01T04:00:00Z", "status": "applied", "applied_at": "2026-01-02T01:00:00Z", "blocked_reason": null, "reasons": [], "attempts": 0, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": "unknown", "built_on_outdated": false},
  {"since": "2026-01-01T04:00:00Z", "until": "2026-01-01T05:00:00Z", "status": "failed", "applied_at": null, "blocked_reason": null, "reasons": [], "attempts": 1, "error": "boom\nexit status 1", "not_before": null, "retry": null,
   "attempt_errors": [{"number": 1, "try": 1, "error": "boom\nexit status 1", "at": "2026-01-02T02:00:00Z", "run_id": null}], "fingerprint": null, "definition": null, "built_on_outdated": false},
  {"since": "2026-01-01T05:00:00Z", "until": "2026-01-01T06:00:00Z", "status": "blocked", "applied_at": null, "blocked_reason": "raw.x (EXACT): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)", "reasons": [{"kind": "missing", "upstream": "raw.x", "contract": "EXACT", "missing": [{"since": "2026-01-01T05:00:00Z", "until": "2026-01-01T06:00:00Z"}], "detail": "missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)"}], "attempts": 1, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": null, "built_on_outdated": false},
  {"since": "2026-01-01T06:00:00Z", "until": "2026-01-01T07:00:00Z", "status": "pending", "applied_at": null, "blocked_reason": null, "reasons": [], "attempts": 0, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": null, "built_on_outdated": false}
]}`, "LEASE_UNTIL", suLeaseUntil(t, out), 1))

		// Narrowed by window (overlap) and by status.
		windowsOf := func(args ...string) string {
			t.Helper()
			code, out, errOut := run(t, w.args("units", append([]string{"raw.a", "-o", "json"}, args...)...)...)
			if code != 0 {
				t.Fatalf("%v: code %d: %s", args, code, errOut)
			}
			var got struct {
				Model string
				Units []struct{ Since, Until, Status string }
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			var s []string
			for _, u := range got.Units {
				s = append(s, u.Since[11:13]+"-"+u.Until[11:13]+":"+u.Status)
			}
			return strings.Join(s, " ")
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--since", "2026-01-01T02:00:00Z", "--until", "2026-01-01T05:00:00Z"}, "02-03:running 03-04:applied 04-05:failed"},
			{[]string{"--since", "2026-01-01T02:30:00Z", "--until", "2026-01-01T03:30:00Z"}, "02-03:running 03-04:applied"},
			{[]string{"--since", "2026-01-01T05:00:00Z"}, "05-06:blocked 06-07:pending"},
			{[]string{"--until", "2026-01-01T01:00:00Z"}, "00-01:applied"},
			{[]string{"--status", "failed,BLOCKED"}, "04-05:failed 05-06:blocked"},
			{[]string{"--status", "applied", "--status", "pending", "--since", "2026-01-01T01:00:00Z"}, "01-02:applied 03-04:applied 06-07:pending"},
			{[]string{"--since", "2026-02-01"}, ""},
		} {
			if got := windowsOf(c.args...); got != c.want {
				t.Errorf("%v: got %q, want %q", c.args, got, c.want)
			}
		}

		// The timeless existence row has no window; a registered model
		// without units and a spec model not registered have none.
		out = w.ok(t, "units", "ref.c", "-o", "json")
		suJSONEqual(t, out, `{"model": "ref.c", "units": [{"since": null, "until": null, "status": "pending", "applied_at": null, "blocked_reason": null, "reasons": [], "attempts": 0, "error": null, "not_before": null, "retry": null, "attempt_errors": [], "fingerprint": null, "definition": null, "built_on_outdated": false}]}`)
		w.addExtraModel(t)
		out = w.ok(t, "units", "marts.new", "-o", "json")
		suJSONEqual(t, out, `{"model": "marts.new", "units": []}`)
	})
}

func TestUnitsTextIsAlignedAndPlainWhenPiped(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		w.seedUnits(t)
		out := w.ok(t, "units", "raw.a", "--since", "2026-01-01T03:00:00Z")
		lines := suCheckAligned(t, out)
		header := lines[0]
		want := [][]string{
			{"SINCE", "UNTIL", "STATUS", "ATTEMPTS", "APPLIED AT", "DEFINITION", "DETAIL"},
			{"2026-01-01T03:00:00Z", "2026-01-01T04:00:00Z", "applied", "0", "2026-01-02T01:00:00Z", "- unknown", "-"},
			{"2026-01-01T04:00:00Z", "2026-01-01T05:00:00Z", "failed", "1", "-", "-", "boom ⏎ exit status 1"},
			{"2026-01-01T05:00:00Z", "2026-01-01T06:00:00Z", "blocked", "1", "-", "-", "raw.x (EXACT): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)"},
			{"2026-01-01T06:00:00Z", "2026-01-01T07:00:00Z", "pending", "0", "-", "-", "-"},
		}
		if len(lines) != len(want) {
			t.Fatalf("lines:\n%s", out)
		}
		for i, w := range want {
			if got := suCells(header, lines[i]); !reflect.DeepEqual(got, w) {
				t.Errorf("line %d\n got %q\nwant %q", i, got, w)
			}
		}
		code, out, _ := run(t, w.args("units", "raw.a", "--status", "running", "--since", "2026-01-01T04:00:00Z")...)
		if code != 0 || out != "no units of raw.a match\n" {
			t.Errorf("no match: code %d out %q", code, out)
		}
	})
}

func TestUnitsBadInputExits2WithOneLine(t *testing.T) {
	w := newSUWorld(t, "sqlite")
	w.seedUnits(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"raw.aa"}, `unknown model "raw.aa": did you mean raw.a`},
		{[]string{"nothing.like.it"}, `unknown model "nothing.like.it"`},
		{[]string{"raw.a", "--since", "2026-01-01T05:00:00Z", "--until", "2026-01-01T05:00:00Z"}, "not before --until"},
		{[]string{"raw.a", "--since", "2026-01-02", "--until", "2026-01-01"}, "not before --until"},
		{[]string{"raw.a", "--since", "yesterday"}, "--since: invalid time"},
		{[]string{"raw.a", "--status", "done"}, `unknown status "done"`},
		{[]string{"ref.c", "--since", "2026-01-01"}, "timeless"},
	} {
		code, out, errOut := run(t, w.args("units", c.args...)...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d out %q err %q; want exit 2 and one line naming %q", c.args, code, out, errOut, c.want)
		}
	}
	if code, _, errOut := run(t, w.args("units")...); code != 2 || !strings.Contains(errOut, "name the model") {
		t.Errorf("no model: code %d err %q", code, errOut)
	}
}

func TestStatusUnitsWatchMarkHelp(t *testing.T) {
	for _, name := range []string{"status", "units", "watch", "mark"} {
		code, out, _ := run(t, "help", name)
		if code != 0 || !strings.Contains(out, "Examples:\n  bollhav "+name) || !strings.Contains(out, "-o json") && !strings.Contains(out, "With -o json") {
			t.Errorf("help %s: code %d\n%s", name, code, out)
		}
	}
}

// suLeaseUntil is when the running unit's lease ends, as units -o json
// gives it in its reasons (the claim ran on the wall clock, so the time is
// not fixed): it must be a time still to come.
func suLeaseUntil(t *testing.T, out string) string {
	t.Helper()
	var doc struct {
		Units []struct {
			Status  string
			Reasons []struct{ Kind, Until string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("units JSON: %v", err)
	}
	for _, u := range doc.Units {
		if u.Status != "running" || len(u.Reasons) != 1 || u.Reasons[0].Kind != "lease" {
			continue
		}
		until, err := time.Parse(time.RFC3339, u.Reasons[0].Until)
		if err != nil || !until.After(time.Now()) {
			t.Fatalf("the running unit's lease ends at %q (%v): want a time to come", u.Reasons[0].Until, err)
		}
		return u.Reasons[0].Until
	}
	t.Fatalf("no running unit with a lease among its reasons:\n%s", out)
	return ""
}
