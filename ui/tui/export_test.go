package tui

import (
	"io"
	"testing"

	"github.com/bollhav/bollhav/engine"
)

// What the external tests (package ui_test, which can seed the demo through
// ui/cli without an import cycle) drive the program with.

// DemoUI is a running program under teatest with its frames recorded.
type DemoUI = uiRun

// StartDemoUI opens the UI as the product does (Options.View empty: the
// incidents first) with the "none" theme.
func StartDemoUI(t *testing.T, e *engine.Engine, w, h int, opts Options) *DemoUI {
	t.Helper()
	return startLanding(t, e, w, h, opts)
}

// Keys sends key presses (see keyPress).
func (r *uiRun) Keys(names ...string) { r.keys(names...) }

// WaitText waits until the screen shows every string.
func (r *uiRun) WaitText(t *testing.T, want ...string) string {
	t.Helper()
	return r.waitText(t, want...)
}

// WaitFor waits until the newest frame satisfies cond.
func (r *uiRun) WaitFor(t *testing.T, what string, cond func(frame string) bool) string {
	t.Helper()
	return r.waitFor(t, what, func(f string, _ viewKind) bool { return cond(f) })
}

// WaitView waits for the named view ("incidents", "why", "blocked",
// "pipelines", as the palette names them) to be shown and settled, and
// returns its frame.
func (r *uiRun) WaitView(t *testing.T, name string) string {
	t.Helper()
	return r.waitSettled(t, viewKind(name))
}

// CheckFrame asserts a frame's size.
func CheckFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	checkFrame(t, frame, w, h)
}

// Output is the bytes the program wrote to its terminal (escape sequences
// and all), as teatest records them.
func (r *uiRun) Output() io.Reader { return r.tm.Output() }

// SelectedLine is the frame's line the cursor is on ("›" first).
func SelectedLine(frame string) string { return selectedLine(frame) }
