package tui

import (
	"strings"
	"testing"
)

// At 80×24, / in Pipelines filters by status as well as by name: /failed
// keeps the model with failed units (raw.orders) and no other, /blocked
// the four with blocked ones; and :model with a name no model has answers
// in the palette, as every other command's mistake does, instead of
// opening a screen that can only say so.
func TestPipelinesFilterByStatusAndUnknownModelInline(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)
	r.keys("/")
	r.typeText("failed")
	f := r.waitText(t, "/failed")
	if !strings.Contains(f, "raw.orders") || strings.Contains(f, "mart.") || strings.Contains(f, "report.snapshot") {
		t.Errorf("/failed does not keep raw.orders alone:\n%s", f)
	}
	r.keys("esc")
	r.waitText(t, "raw.orders", "mart.hourly")
	r.keys("/")
	r.typeText("blocked")
	f = r.waitText(t, "/blocked")
	for _, want := range []string{"mart.daily", "mart.fresh", "mart.hourly", "report.snapshot"} {
		if !strings.Contains(f, want) {
			t.Errorf("/blocked does not keep %s:\n%s", want, f)
		}
	}
	if strings.Contains(f, "raw.orders") {
		t.Errorf("/blocked keeps raw.orders, which has no blocked unit:\n%s", f)
	}
	r.keys("esc")

	r.command("model nosuch")
	f = r.waitText(t, `unknown model "nosuch" (tab completes the known ones)`)
	if !strings.Contains(f, ":model nosuch") {
		t.Errorf("the palette closed on the mistake:\n%s", f)
	}
	r.keys("esc")
	// A near name: the palette says which.
	r.command("why mart.dayly 2026-01-01")
	r.waitText(t, `unknown model "mart.dayly": did you mean mart.daily?`)
	r.keys("esc")
	r.keys("/")
	r.typeText("raw")
	r.waitFor(t, "the pipelines, filtered, no model screen opened", func(f string, top viewKind) bool {
		return top == viewPipelines && strings.Contains(f, "/raw")
	})
}
