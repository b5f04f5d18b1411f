package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// TestRunAPipelineFromItsHeading: R on the ingest heading of the
// pipelines list opens the run of the whole pipeline, plan first; y runs
// it, and the store has raw.orders' failed hours applied and the run
// recorded for the pipeline.
func TestRunAPipelineFromItsHeading(t *testing.T) {
	w, r := startFixed(t, Options{}, viewPipelines)
	r.keys("g") // the ingest heading
	r.waitFor(t, "the cursor on the ingest heading", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "▾ ingest")
	})
	r.keys("R")
	// By hand: at the UI's clock (2026-01-03) the contract range is two
	// days of hours; discover creates day 1's 24 and runs them with the two
	// failed hours of day 0, reset.
	f := r.waitText(t, "Run pipeline ingest in prod", "Run 26 units of raw.orders in prod?")
	checkFrame(t, f, 80, 24)
	r.keys("y")
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed
	for c := w.counts(t, "raw.orders"); c[state.Applied] != 48 || c[state.Failed] != 0; c = w.counts(t, "raw.orders") {
		if time.Now().After(deadline) {
			t.Fatalf("the pipeline's run did not land: %v", c)
		}
		time.Sleep(20 * time.Millisecond)
	}
	runs, err := w.s.Runs(context.Background(), "", 1)
	if err != nil || len(runs) != 1 || runs[0].Pipeline != "ingest" || runs[0].StateMode != "discover" {
		t.Fatalf("the newest run %+v, %v; want a discover of pipeline ingest", runs, err)
	}
}

// TestPipelineTorchSaysWhatToType: at 80 columns the torch of a pipeline
// still tells the user what to type — its warning names every model of the
// pipeline, which leaves no room on the same line, so the request goes on a
// line of its own with the pipeline's name — and a torch is not run before
// that name is typed.
func TestPipelineTorchSaysWhatToType(t *testing.T) {
	w := newWorld(t)
	before := w.counts(t, "raw.orders")
	r := startUI(t, w.e, 80, 24, Options{})
	r.waitSettled(t, viewPipelines)
	r.keys("g") // the ingest heading
	r.waitFor(t, "the cursor on the ingest heading", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "▾ ingest")
	})
	r.keys("R", "tab", "tab")
	f := r.waitText(t, "[torch]", "delete    24 units", "Torch deletes the state of every model of pipeline ingest in prod.", "Type its name (ingest) to confirm:")
	checkFrame(t, f, 80, 24)
	r.keys("enter")
	r.waitText(t, "type ingest to confirm the torch")
	if after := w.counts(t, "raw.orders"); after[state.Applied] != before[state.Applied] || after[state.Failed] != before[state.Failed] {
		t.Fatalf("an unconfirmed torch changed the store: %v → %v", before, after)
	}
}
