package ui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// The UI opens on the incidents when something is broken: at 80×24 the
// first card is raw.orders' failure, selected, with its error, before any
// key; enter explains its most impactful blocked unit down to the failed
// hour; esc leads back to the pipelines.
func TestLandingOpensOnTheIncidents(t *testing.T) {
	w := newWorld(t)
	r := startLanding(t, w.e, 80, 24, Options{})
	frame := r.waitSettled(t, viewIncidents)
	lines := strings.Split(frame, "\n")
	if !strings.HasPrefix(lines[1], "›✗ raw.orders failed 2026-01-01 05:00–08:00") {
		t.Errorf("the first card is not raw.orders' failure, selected:\n%s", frame)
	}
	if !strings.Contains(lines[2], "exit status 3: source unavailable") {
		t.Errorf("its error is not under it:\n%s", frame)
	}
	r.keys("enter")
	why := r.waitSettled(t, viewWhy)
	if !strings.Contains(why, "why mart.daily 2026-01-01") || !strings.Contains(why, "→ raw.orders 2026-01-01 05:00–06:00  ✗ failed") {
		t.Errorf("enter does not explain mart.daily down to the failed hour:\n%s", why)
	}
	r.keys("esc", "esc")
	back := r.waitSettled(t, viewPipelines)
	if head := strings.Split(back, "\n")[0]; strings.Contains(head, "›") {
		t.Errorf("the breadcrumb goes deeper than the pipelines: %q", head)
	}
}

// With every unit applied the UI opens on the pipelines, saying all is
// clear, and esc has nothing to go back to.
func TestLandingAllClearOpensOnThePipelines(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sp, err := spec.Parse("bollhav.yaml", []byte(`models:
  - name: raw.orders
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: mart.daily
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["true"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := &engine.Engine{Store: s, Spec: sp, SpecDir: dir, Actor: "test", Now: func() time.Time { return uiClock }}
	day0 := state.Window{Since: t0, Until: t0.Add(24 * time.Hour)}
	if _, err := e.Run(t.Context(), engine.RunRequest{Window: &day0}, e.Executor(), nil); err != nil {
		t.Fatal(err)
	}
	r := startLanding(t, e, 80, 24, Options{})
	frame := r.waitFor(t, "the pipelines, all clear", func(f string, top viewKind) bool {
		return top == viewPipelines && strings.Contains(f, "● live") && strings.Contains(f, "mart.daily")
	})
	if !strings.Contains(frame, "✓ all clear") {
		t.Errorf("no all-clear line:\n%s", frame)
	}
	if head := strings.Split(frame, "\n")[0]; strings.Contains(head, "›") || strings.Contains(head, "Incidents") {
		t.Errorf("the incidents are still on the stack: %q", head)
	}
}
