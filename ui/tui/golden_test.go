package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
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
