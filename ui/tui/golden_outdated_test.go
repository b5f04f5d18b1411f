package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

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
