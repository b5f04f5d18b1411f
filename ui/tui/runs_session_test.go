package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
)

// TestARunsToastOpensTheRun: the footer message of a run started here
// names the key that opens it, and that key opens the run itself (its
// tasks), over the runs view; its duration is the time it took, not 0s.
func TestARunsToastOpensTheRun(t *testing.T) {
	_, r := startFixed(t, Options{View: "model", Model: "raw.orders"}, viewModel)
	r.keys("r")
	r.waitText(t, "Run 1 unit of raw.orders in prod?")
	r.keys("y")
	r.waitText(t, "started a bulldozer run of raw.orders [2026-01-01 05:00–06:00] — w opens it")
	r.waitText(t, "run 4 succeeded (w opens it)")
	r.keys("w")
	f := r.waitView(t, viewRun, "run 4")
	if !strings.Contains(f, "Runs › run 4") {
		t.Errorf("w did not open run 4 over the runs view:\n%s", f)
	}
	if strings.Contains(f, "took 0s") {
		t.Errorf("the run took 0s by its record:\n%s", f)
	}
	r.keys("esc")
	r.waitText(t, "Started here · 1 run this session", "run 4 done")
}

// TestStartedHereListsEveryRunOrCounts: the runs view lists every run
// this session started while they fit a third of the screen, and says how
// many more there are when they do not — never dropping runs silently.
func TestStartedHereListsEveryRunOrCounts(t *testing.T) {
	w := newWorld(t)
	for _, n := range []int{5, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			app, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", View: "runs", FeedPoll: 100 * time.Millisecond}), standardRenderers())
			if err != nil {
				t.Fatal(err)
			}
			app.frames = &frameRecorder{}
			for i := 1; i <= n; i++ {
				app.runs = append(app.runs, &liveRun{id: i, runID: int64(100 + i), done: true,
					action: action{model: fmt.Sprintf("m.%02d", i), mode: spec.Discover},
					result: &engine.RunResult{RunID: int64(100 + i), Mode: spec.Discover}})
			}
			r := &uiRun{tm: startProgram(t, app, 80, 24), app: app, frames: app.frames}
			r.waitSettled(t, viewRuns)
			// The body is 22 lines: a third is 7, so 5 runs show whole,
			// and of 12 the newest 6 show beside "+6 more".
			r.waitText(t, fmt.Sprintf("Started here · %d runs this session", n))
			f := r.waitText(t, "History")
			listed := 0
			for i := 1; i <= n; i++ {
				if strings.Contains(f, fmt.Sprintf("run %d done", 100+i)) {
					listed++
				}
			}
			switch n {
			case 5:
				if listed != 5 || strings.Contains(f, "more started here") {
					t.Errorf("%d of 5 runs listed:\n%s", listed, f)
				}
			case 12:
				if listed != 6 || !strings.Contains(f, "+6 more started here") || !strings.Contains(f, "run 112 done") || strings.Contains(f, "run 106 done") {
					t.Errorf("12 runs: %d listed, want the newest 6 and +6 more:\n%s", listed, f)
				}
			}
		})
	}
}
