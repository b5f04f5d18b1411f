package tui

import (
	"strings"
	"testing"
)

// headerLine is the frame's first line, where the breadcrumb is.
func headerLine(f string) string { return strings.SplitN(f, "\n", 2)[0] }

// TestScreenKeysKeepABackStack: 1–4 (and i) are jumps, and - goes back
// through them, newest first, as k9s's - does; with nowhere to go back to
// it says so.
func TestScreenKeysKeepABackStack(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)
	for _, step := range []struct {
		key  string
		view viewKind
	}{
		{"2", viewBlocked}, {"3", viewRuns}, {"4", viewAudit},
		{"-", viewRuns}, {"-", viewBlocked}, {"-", viewPipelines},
	} {
		r.keys(step.key)
		r.waitSettled(t, step.view)
	}
	r.keys("-")
	r.waitText(t, "no previous screen")
}

// TestPaletteJumpsDoNotGrowTheBreadcrumb: each : jump opens its view over
// the pipelines, so model after model leaves a two-part breadcrumb, and -
// goes back to the model before.
func TestPaletteJumpsDoNotGrowTheBreadcrumb(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)
	for _, m := range []string{"mart.daily", "mart.hourly", "raw.orders", "mart.fresh"} {
		r.command("model " + m)
		f := r.waitView(t, viewModel, m)
		if h := headerLine(f); !strings.Contains(h, "Pipelines › "+m) || strings.Count(h, "›") != 1 {
			t.Fatalf("after :model %s the breadcrumb is %q, want Pipelines › %s", m, h, m)
		}
	}
	r.command("why mart.daily 2026-01-01")
	f := r.waitView(t, viewWhy, "why mart.daily")
	if h := headerLine(f); strings.Count(h, "›") != 2 || !strings.Contains(h, "Pipelines › mart.daily › why 2026-01-01") {
		t.Errorf("after :why the breadcrumb is %q, want Pipelines › mart.daily › why 2026-01-01", h)
	}
	r.keys("-")
	r.waitView(t, viewModel, "mart.fresh")
	r.keys("-")
	r.waitView(t, viewModel, "raw.orders")
}

// TestWhyWithoutATimeOpensTheWorstUnit: :why MODEL with no time explains
// the model's holding the most failed or blocked unit — for raw.orders, its
// failed hours (05:00 and 07:00, 4 units waiting on them), the first of
// them; a timeless model's one unit needs no time either.
func TestWhyWithoutATimeOpensTheWorstUnit(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)
	r.command("why raw.orders")
	f := r.waitView(t, viewWhy, "why raw.orders 2026-01-01 05:00–06:00")
	if !strings.Contains(f, "✗ failed") || !strings.Contains(f, "source unavailable") {
		t.Errorf("the why view of raw.orders' failed hour:\n%s", f)
	}
	r.command("why report.snapshot")
	r.waitView(t, viewWhy, "why report.snapshot")
}

// TestGraphFollowsEdgesAcrossPipelines: in the graph form ] follows an
// edge downstream — from raw.orders (ingest) into core, a pipeline of its
// own — and [ back upstream, to ingest again; shift+tab goes to the
// previous pipeline, from ingest round to the last, reports.
func TestGraphFollowsEdgesAcrossPipelines(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)
	r.keys("v")
	r.waitText(t, "[ingest]", "▸✗ raw.orders")
	r.keys("]")
	f := r.waitText(t, "[core]", "downstream: ")
	if !strings.Contains(f, "(pipeline core) · also ") {
		t.Errorf("three models read raw.orders, and the footer names the other two:\n%s", f)
	}
	r.keys("[")
	r.waitText(t, "[ingest]", "▸✗ raw.orders", "upstream: raw.orders (pipeline ingest)")
	r.keys("shift+tab")
	r.waitText(t, "[reports]")
	r.keys("tab")
	r.waitText(t, "[ingest]")
}

// TestPipelinesShowLastAppliedAt80Columns: at 80 columns the count
// columns every model has at zero (no unit of the world is pending or
// running) give their room to LAST APPLIED.
func TestPipelinesShowLastAppliedAt80Columns(t *testing.T) {
	_, f := startSettled(t, Options{}, viewPipelines)
	head := strings.Split(f, "\n")[1]
	for _, want := range []string{"✓ appl", "⊘ blkd", "✗ fail", "LAST APPLIED"} {
		if !strings.Contains(head, want) {
			t.Errorf("the heading %q lacks %q", head, want)
		}
	}
	for _, gone := range []string{"pend", "↻ run"} {
		if strings.Contains(head, gone) {
			t.Errorf("the heading %q keeps the all-zero column %q", head, gone)
		}
	}
	if !strings.Contains(f, "1d ago") {
		t.Errorf("raw.orders' last applied (a day before the UI's clock) is not shown:\n%s", f)
	}
}
