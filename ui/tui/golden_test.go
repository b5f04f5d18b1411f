package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/charmbracelet/x/exp/golden"
)

// sizes are the terminal sizes every view is checked at: the 80×24 floor
// and a large terminal that should use its space.
var sizes = [][2]int{{80, 24}, {160, 48}}

// screen is one golden screen: how to get there from the program's start.
type screen struct {
	name string
	opts Options
	// landing opens as the product does (opts.View empty: the incidents).
	landing bool
	// steps drive the program to the screen; settled waits until it shows.
	steps func(t *testing.T, r *uiRun) string
}

var screens = []screen{
	{name: "pipelines", steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewPipelines) }},
	{name: "model", opts: Options{View: "model", Model: "mart.hourly"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
	{name: "pipelines_graph", steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewPipelines)
		r.keys("v")
		return r.waitText(t, "[ingest]", "▸✗ raw.orders")
	}},
	{name: "pipelines_graph_core", steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewPipelines)
		r.keys("v", "tab", "right")
		return r.waitText(t, "[core]", "▸⊘ mart.hourly")
	}},
	{name: "model_source", opts: Options{View: "model", Model: "raw.orders"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
	{name: "model_daily", opts: Options{View: "model", Model: "mart.daily"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
	{name: "model_zoom", opts: Options{View: "model", Model: "mart.hourly"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewModel)
		r.keys("_")
		return r.waitText(t, "[day]")
	}},
	{name: "model_timeless", opts: Options{View: "model", Model: "report.snapshot"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
	{name: "why", opts: Options{View: "why", Model: "mart.daily", At: t0.Add(10 * time.Hour)},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewWhy) }},
	{name: "why_stale", opts: Options{View: "why", Model: "mart.fresh", At: t0.Add(2 * time.Hour)},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewWhy) }},
	{name: "why_timeless", opts: Options{View: "why", Model: "report.snapshot"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewWhy) }},
	{name: "blocked", opts: Options{View: "blocked"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewBlocked) }},
	{name: "runs", opts: Options{View: "runs"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewRuns) }},
	{name: "run", opts: Options{View: "runs"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewRuns)
		r.keys("down", "down", "enter") // run 1, raw.orders: a failed task
		return r.waitSettled(t, viewRun)
	}},
	{name: "run_waves", opts: Options{View: "runs"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewRuns)
		r.keys("down", "enter") // run 2: mart.daily and mart.hourly, then report.snapshot
		return r.waitText(t, "Wave 2")
	}},
	{name: "audit", opts: Options{View: "audit"},
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewAudit) }},
	{name: "audit_filter", opts: Options{View: "audit"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewAudit)
		r.keys("/")
		r.typeText("refused")
		r.keys("enter")
		return r.waitFor(t, "the refusals alone", func(f string, _ viewKind) bool {
			return strings.Contains(f, `match "refused"`) && !strings.Contains(f, "ok: 0 units") && strings.Contains(f, "? help")
		})
	}},
	{name: "incidents", landing: true,
		steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewIncidents) }},
	{name: "incidents_why", landing: true, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewIncidents)
		r.keys("enter")
		return r.waitSettled(t, viewWhy)
	}},
	{name: "help", steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewPipelines)
		r.keys("?")
		return r.waitText(t, "Keys — Pipelines")
	}},
	{name: "help_model", opts: Options{View: "model", Model: "mart.hourly"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewModel)
		r.keys("?")
		return r.waitText(t, "Keys — mart.hourly")
	}},
	{name: "palette", steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewPipelines)
		r.keys(":")
		r.typeText("model mart")
		return r.waitText(t, ":model mart", "model mart.hourly")
	}},
	{name: "filter", steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewPipelines)
		r.keys("/")
		r.typeText("fresh")
		return r.waitFor(t, "the filtered list", func(f string, _ viewKind) bool {
			return strings.Contains(f, "/fresh") && !strings.Contains(f, "raw.orders")
		})
	}},
	{name: "dialog_run", opts: Options{View: "model", Model: "raw.orders"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewModel)
		r.keys("r")
		return r.waitText(t, "Run 1 unit of raw.orders in prod?")
	}},
	{name: "dialog_torch", opts: Options{View: "model", Model: "mart.hourly"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewModel)
		r.keys("R", "tab", "tab")
		return r.waitText(t, "[torch]", "Type its name to confirm", "delete    24 units")
	}},
	{name: "dialog_mark", opts: Options{View: "model", Model: "raw.orders"}, steps: func(t *testing.T, r *uiRun) string {
		r.waitSettled(t, viewModel)
		r.keys("a")
		return r.waitText(t, "Mark 1 unit of raw.orders applied in prod?")
	}},
}

// TestGolden draws every view at 80×24 and 160×48 against a real store
// seeded by real runs, and compares the screen (as plain text: the frame
// with its styles removed) with testdata/TestGolden/<screen>_<size>.golden.
// Update them with go test ./ui -update, then read every one.
func TestGolden(t *testing.T) {
	goldenScreens(t, newWorld(t).e, screens, nil)
}

// goldenScreens draws each of scs over e at every one of sizes, in a
// subtest <screen>_<size>, checks the frame (checkFrame, then check when it
// is not nil) and compares it with the subtest's golden file.
func goldenScreens(t *testing.T, e *engine.Engine, scs []screen, check func(t *testing.T, sc screen, frame string)) {
	for _, sc := range scs {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				start := startUI
				if sc.landing {
					start = startLanding
				}
				r := start(t, e, sz[0], sz[1], sc.opts)
				frame := sc.steps(t, r)
				checkFrame(t, frame, sz[0], sz[1])
				if check != nil {
					check(t, sc, frame)
				}
				golden.RequireEqual(t, []byte(frame+"\n"))
			})
		}
	}
}

// checkFrame asserts what every frame must be: exactly the terminal's
// height, no line wider than the terminal.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("the frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := width(l); n > w {
			t.Errorf("line %d is %d cells wide (terminal %d): %q", i+1, n, w, l)
		}
	}
}

// TestThemesDoNotChangeLayout: every theme draws the same characters in the
// same cells; colour only ever adds to what the glyphs say.
func TestThemesDoNotChangeLayout(t *testing.T) {
	w := newWorld(t)
	for _, sc := range screens {
		switch sc.name {
		case "pipelines", "pipelines_graph_core", "model", "why":
		default:
			continue
		}
		var want string
		for _, name := range themes.Names() {
			opts := sc.opts
			opts.Theme = name
			r := startUI(t, w.e, 80, 24, opts)
			frame := sc.steps(t, r)
			if want == "" {
				want = frame
				continue
			}
			if frame != want {
				t.Errorf("%s under theme %s differs from %s:\n%s\n---\n%s", sc.name, name, themes.Names()[0], frame, want)
			}
		}
	}
}

// outdatedSpec is a loader and a daily model reading it; the loader's
// argument is its definition.
const outdatedSpec = `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true", "v1"]}}
  - {name: mart.daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`

// newOutdatedWorld runs raw.orders' hours 00–12 of 2026-01-01 under v1,
// then, the command changed to v2, hours 12–24: the first twelve hours are
// outdated, the last twelve current (the UI's clock is 2026-01-02 00:00).
func newOutdatedWorld(t *testing.T) *engine.Engine {
	t.Helper()
	s := enginetest.Open(t, enginetest.SQLite)
	opts := engine.Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return t0.Add(24 * time.Hour) }}
	e := engine.New(s, enginetest.Parse(t, outdatedSpec), opts)
	run := func(w state.Window) {
		t.Helper()
		res, err := e.Run(context.Background(), engine.RunRequest{Models: []string{"raw.orders"}, Window: &w}, e.Executor(), nil)
		if err != nil || res.Failed() {
			t.Fatalf("run %s: %v %+v", w, err, res)
		}
	}
	run(hours(0, 12))
	e = engine.New(s, enginetest.Parse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1)), opts)
	run(hours(12, 24))
	return e
}

// TestGoldenOutdated draws the model view of a model with outdated windows
// — their own cells (▓) beside the applied ones, "outdated" in the legend —
// and the dialog "O" opens: the plan of rebuilding exactly them.
func TestGoldenOutdated(t *testing.T) {
	goldenScreens(t, newOutdatedWorld(t), []screen{
		{name: "model_outdated", opts: Options{View: "model", Model: "raw.orders"},
			steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
		{name: "dialog_rebuild", opts: Options{View: "model", Model: "raw.orders"}, steps: func(t *testing.T, r *uiRun) string {
			r.waitSettled(t, viewModel)
			r.keys("O")
			return r.waitText(t, "Rebuild the outdated windows of raw.orders", "Run 12 units of raw.orders in prod?")
		}},
	}, func(t *testing.T, sc screen, frame string) {
		if sc.name == "model_outdated" && !strings.Contains(frame, strings.Repeat("▓", 12)+strings.Repeat("█", 12)) {
			t.Errorf("the timeline lacks twelve outdated hours then twelve applied ones:\n%s", frame)
		}
	})
}

// The dialog's rebuild runs exactly the outdated hours and they become
// current; a read-only UI refuses the key and the engine audits it.
func TestRebuildOutdatedFromTheModelView(t *testing.T) {
	e := newOutdatedWorld(t)
	r := startUI(t, e, 80, 24, Options{View: "model", Model: "raw.orders", ReadOnly: true})
	r.waitSettled(t, viewModel)
	r.keys("O")
	r.waitText(t, "read-only: run refused")

	r = startUI(t, e, 80, 24, Options{View: "model", Model: "raw.orders"})
	r.waitSettled(t, viewModel)
	r.keys("O")
	r.waitText(t, "Run 12 units of raw.orders in prod?")
	r.keys("y")
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := e.ModelStatus(context.Background(), "raw.orders")
		if err != nil {
			t.Fatal(err)
		}
		if st.Outdated == 0 && st.Counts[state.Applied] == 24 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the rebuild: %d outdated, %v", st.Outdated, st.Counts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, err := e.AuditLog(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, a := range log {
		if a.Action == "run" && a.Outcome == "refused: read-only" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refused runs in the audit log, want the read-only key press", refused)
	}
}

// retrySpec is one source with a retry budget of 5 tries.
const retrySpec = `models:
  - {name: raw.payments, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 5, delay: 5m}, run: {command: ["true"]}}
`

// newRetryWorld seeds retrySpec's store by hand, worked out so (times on
// 2026-01-03, the UI's clock 14:01):
//
//	raw.payments [00h,01h)  applied
//	raw.payments [01h,02h)  failed at 13:50 (run 1, try 1) and 14:00 (run
//	                        1, try 2), waiting for try 3 at 14:05
//	raw.payments [02h,03h)  pending
func newRetryWorld(t *testing.T) *engine.Engine {
	t.Helper()
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, retrySpec)
	at := func(h, m int) time.Time { return time.Date(2026, 1, 3, h, m, 0, 0, time.UTC) }
	e := engine.New(s, sp, engine.Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return at(14, 1) }})
	ctx := t.Context()
	if _, err := e.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.payments", Windows: []state.Window{hours(0, 1), hours(1, 2), hours(2, 3)}, Now: at(13, 0)}); err != nil {
		t.Fatal(err)
	}
	runID, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: at(13, 0), Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	claim := func(w state.Window, now time.Time) state.Claim {
		t.Helper()
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.payments"}, Window: w, Worker: "w", Lease: time.Minute, Limit: 1, RunID: runID, Now: now})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", w, cs, err)
		}
		return cs[0]
	}
	if err := s.Complete(ctx, claim(hours(0, 1), at(13, 10)), state.Outcome{Status: state.Applied, At: at(13, 10)}); err != nil {
		t.Fatal(err)
	}
	retry := func(now, notBefore time.Time, try int, msg string) {
		t.Helper()
		o := state.Outcome{Status: state.Pending, Error: msg, At: now, NotBefore: notBefore, Try: try}
		if err := s.Complete(ctx, claim(hours(1, 2), now), o); err != nil {
			t.Fatal(err)
		}
	}
	retry(at(13, 50), at(13, 55), 1, "exit status 1: GET /settlements: 503 Service Unavailable")
	retry(at(14, 0), at(14, 5), 2, "exit status 1: GET /settlements: 502 Bad Gateway")
	if runID != 1 {
		t.Fatalf("run id %d, want 1", runID)
	}
	return e
}

// TestGoldenRetry draws the why view and the model view of a unit waiting
// for its retry: "retry 3/5 at 2026-01-03 14:05Z (in 4m)", its last error,
// and the earlier attempt with its time and run in why; the retry line and
// the failed try in the model view's unit list.
func TestGoldenRetry(t *testing.T) {
	goldenScreens(t, newRetryWorld(t), []screen{
		{name: "why_retry", opts: Options{View: "why", Model: "raw.payments", At: time.Date(2026, 1, 1, 1, 30, 0, 0, time.UTC)},
			steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewWhy) }},
		{name: "model_retry", opts: Options{View: "model", Model: "raw.payments"},
			steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
	}, func(t *testing.T, sc screen, frame string) {
		if sc.name != "why_retry" {
			return
		}
		for _, want := range []string{"retry 3/5 at 2026-01-03 14:05Z", "error: exit status 1: GET /settlements: 502",
			"try 1 · 11m ago run 1: exit status 1: GET /settlements: 503"} {
			if !strings.Contains(frame, want) {
				t.Errorf("the why view lacks %q", want)
			}
		}
	})
}
