package tui

import (
	"strings"
	"testing"
	"time"
)

// TestWithoutRenderers: an app given no renderers draws the simple forms —
// the model view's one-line strip, the pipelines list only — and does not
// offer the keys that need a renderer.
func TestWithoutRenderers(t *testing.T) {
	w := newWorld(t)
	app, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", FeedPoll: 100 * time.Millisecond, View: "model", Model: "mart.hourly"}), renderers{})
	if err != nil {
		t.Fatal(err)
	}
	app.frames = &frameRecorder{}
	r := &uiRun{tm: startProgram(t, app, 80, 24), app: app, frames: app.frames}
	f := r.waitSettled(t, viewModel)
	if strings.Contains(f, "zoom") || !strings.Contains(f, "Timeline ✓✓✓✓✓⊘✓⊘✓") {
		t.Errorf("the model view without a timeline renderer draws a one-line strip:\n%s", f)
	}
	r.keys("?")
	f = r.waitText(t, "Keys — mart.hourly")
	if strings.Contains(f, "zoom in") {
		t.Errorf("the zoom keys are offered without a timeline:\n%s", f)
	}
	r.keys("esc", "1")
	f = r.waitSettled(t, viewPipelines)
	if strings.Contains(f, "graph/list") {
		t.Errorf("the graph key is offered without a graph renderer:\n%s", f)
	}
}
