package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// graphSpec has a pipeline with edges inside it (core.a feeds core.b and
// core.c; core.c also runs when core.b fails) and one onto another
// pipeline (core.a gates on ingest's src.events).
const graphSpec = `models:
  - {name: src.events, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: core.a, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: src.events, contract: encapsulate}], run: {command: ["true"]}}
  - {name: core.b, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: core.a, contract: exact}], run: {command: ["true"]}}
  - {name: core.c, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: core.a, contract: exact}], after: [{task: core.b, on: failure}], run: {command: ["true"]}}
`

// TestGraphFormAdapter draws a pipeline through the graph hook: a box per
// task with its health glyph, label and applied/total; the edges between
// waves, the conditional one lettered; the cross-pipeline stub; the
// selected box heavy and marked; every line exactly the width.
func TestGraphFormAdapter(t *testing.T) {
	sp := enginetest.Parse(t, graphSpec)
	graphs, err := engine.PipelineGraphs(sp, engine.AssignTaskIDs(sp, nil))
	if err != nil {
		t.Fatal(err)
	}
	var core *engine.PipelineGraph
	for _, g := range graphs {
		if g.Name == "core" {
			core = g
		}
	}
	counts := func(ap, bl, fa int) map[state.UnitStatus]int {
		return map[state.UnitStatus]int{state.Applied: ap, state.Blocked: bl, state.Failed: fa}
	}
	st := map[string]engine.ModelStatus{
		"core.a": {Name: "core.a", Registered: true, Counts: counts(24, 0, 0)},
		"core.b": {Name: "core.b", Registered: true, Counts: counts(20, 3, 1)},
		"core.c": {Name: "core.c", Registered: true, Counts: counts(21, 3, 0)},
	}
	g := newGraphForm(graphInput{Pipeline: core, Status: st, Stale: map[string]bool{"core.a": true}, Theme: themes.None()})
	if g.First() != "core.a" {
		t.Fatalf("first %q, want core.a, the top of the first wave", g.First())
	}
	x, y := g.Scroll("core.a", 80, 20, 0, 0)
	lines := g.Render(80, 20, "core.a", x, y)
	frame := ansiStrip(strings.Join(lines, "\n"))
	t.Logf("\n%s", frame)
	for _, want := range []string{
		"▸~ core.a 24/24", // selected, and stale: applied but too old for a freshness limit
		"✗ core.b 20/24",  // failed wins over blocked
		"⊘ core.c 21/24",
		"┏", "┗", // the selected box is heavy
		"▼",             // an edge's arrow head
		"f",             // the FAILURE edge's letter
		"◄─ src.events", // the dependency on another pipeline
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("the graph lacks %q", want)
		}
	}
	if len(lines) != 20 {
		t.Errorf("%d lines, want 20", len(lines))
	}
	for i, l := range lines {
		if width(l) != 80 {
			t.Errorf("line %d is %d cells: %q", i, width(l), l)
		}
	}
	// core.a is in the first wave, core.b under it, core.c in the third
	// wave (after core.b).
	if got := g.Neighbour("core.a", 1); got != "core.b" {
		t.Errorf("down from core.a: %q, want core.b", got)
	}
	if got := g.Neighbour("core.b", 1); got != "core.c" {
		t.Errorf("down from core.b: %q, want core.c", got)
	}
	if got := g.Neighbour("core.a", 0); got != "core.a" {
		t.Errorf("up from the top: %q, want core.a itself", got)
	}
	if !strings.Contains(g.Legend(), "on failure") {
		t.Errorf("legend %q", g.Legend())
	}
	// A window too small for the picture scrolls to the selection.
	x, y = g.Scroll("core.c", 30, 4, 0, 0)
	if small := ansiStrip(strings.Join(g.Render(30, 4, "core.c", x, y), "\n")); !strings.Contains(small, "▸⊘ core.c") {
		t.Errorf("scrolled to core.c:\n%s", small)
	}
}

// TestGraphFormInTheUI: v shows the graph of the cursor's pipeline with its
// model selected, arrows move, tab changes pipeline, enter opens the
// selected model, and v goes back to the list with the cursor on it.
func TestGraphFormInTheUI(t *testing.T) {
	r, f := startSettled(t, Options{}, viewPipelines)
	if !strings.Contains(f, "v graph/list") {
		t.Errorf("the graph key is offered:\n%s", f)
	}
	r.keys("v")
	r.waitText(t, "[ingest]", "┃▸✗ raw.orders 22/24 ┃", "◄─ other pipeline")
	r.keys("tab")
	r.waitText(t, "[core]", "▸⊘ mart.daily 0/1", "◄─ raw.orders", "more ▸")
	r.keys("right")
	r.waitText(t, "▸⊘ mart.hourly 22/24", " ⊘ mart.daily 0/1")
	r.keys("v")
	f = r.waitText(t, "MODEL", "SHAPE")
	if !strings.Contains(f, "›⊘   mart.hourly") {
		t.Errorf("back in the list, the cursor is on the graph's selection:\n%s", f)
	}
	r.keys("v", "enter")
	r.waitView(t, viewModel, "mart.hourly")
}

// TestTimelineInTheUI: the model view of a daily model over an hourly
// upstream shows the zoom levels, the ruler, the model's strip (fitted: its
// two days, 38 columns each at 80) with the cursor's window, status and
// reason, and the upstream's strip with what ENCAPSULATE needs of it and
// the gate's verdict; - and + zoom.
func TestTimelineInTheUI(t *testing.T) {
	r, f := startSettled(t, Options{View: "model", Model: "mart.daily"}, viewModel)
	lines := strings.Split(f, "\n")
	var at int
	for i, l := range lines {
		if strings.Contains(l, "Timeline") {
			at = i
		}
	}
	tl := lines[at : at+7]
	want := []string{
		"Timeline zoom [1d] week month",
		"  Jan 1" + strings.Repeat(" ", 33) + "Jan 2",            // the ruler, a label per day cell
		"  " + strings.Repeat("⊘", 38) + strings.Repeat("·", 38), // day 0 blocked, day 1 has no unit yet (missing)
		"  " + strings.Repeat("▲", 38) + " 2026-01-01 ⊘ blocked · raw.orders (ENC…",
		"raw.orders (ENCAPSULATE)", // the lane's title
		// The upstream's hours, a column each 24h/38 (about 38 minutes):
		// each column the worst of its own part of the day, so the failed
		// hours 05 (columns 7–9) and 07 (11–12) and the applied 06 between
		// them (10) read as they are, not as a failed day.
		"  " + strings.Repeat("█", 7) + "✗✗✗█✗✗" + strings.Repeat("█", 25) + strings.Repeat("·", 38),
		"  " + strings.Repeat("▔", 7) + "╳╳╳▔╳╳" + strings.Repeat("▔", 25) + " ENCAPSULATE unmet",
	}
	for i, s := range want {
		if !strings.Contains(tl[i], s) {
			t.Errorf("timeline line %d %q lacks %q:\n%s", i, tl[i], s, f)
		}
	}
	r.keys("_")
	r.waitText(t, "zoom 1d [week] month")
	r.keys("_", "_") // the last level stops the zoom
	r.waitText(t, "zoom 1d week [month]")
	r.keys("+")
	r.waitText(t, "zoom 1d [week] month")
	r.keys("?")
	r.waitText(t, "zoom in", "zoom out")
}

// TestTimelineFollowsTheCursor: moving the cursor moves the timeline's
// pointer and label, and the gate's verdict for the new window arrives.
func TestTimelineFollowsTheCursor(t *testing.T) {
	r, _ := startSettled(t, Options{View: "model", Model: "mart.hourly"}, viewModel)
	r.waitText(t, "▲ 2026-01-01 05:00–06:00 ⊘ blocked", "╳ ENCAPSULATE unmet · 0s/1h covered (0%)")
	r.keys("down")
	r.waitText(t, "▲ 2026-01-01 06:00–07:00 ✓ applied 0s ago", "▔ ENCAPSULATE ok · 1h/1h covered (100%)")
}

// TestTimelineLoadsTheVisibleTimeOnly: the timeline reads units and
// coverage for the time it shows (and a screen either side), not a model's
// whole history, and reads what a zoom out shows: the two days fitted in
// one week cell, a week and margins either side.
func TestTimelineLoadsTheVisibleTimeOnly(t *testing.T) {
	w := newWorld(t)
	rec := &recordingStore{Store: w.s}
	e := engine.New(rec, w.e.Spec(), w.opts)
	r := startUI(t, e, 80, 24, Options{View: "model", Model: "mart.hourly"})
	r.waitSettled(t, viewModel)
	r.waitText(t, "ENCAPSULATE unmet")
	if len(rec.reads()) < 4 {
		t.Fatalf("the timeline read %+v, want the units and coverage of the model and its upstream", rec.reads())
	}
	for _, q := range rec.reads() {
		if q.Window.Empty() || q.Window.Duration() > 20*24*time.Hour {
			t.Errorf("%s read over %v: want the few screens of hours around the cursor", q.Model, q.Window)
		}
	}
	r.keys("_", "_") // weeks: the range fits one, drawn 77 columns wide
	r.waitText(t, "[week]")
	week := state.Window{Since: time.Date(2025, 12, 29, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}
	for _, q := range rec.reads() {
		if !q.Window.Contains(week.Since) || q.Window.Until.Before(week.Until) {
			t.Errorf("%s read over %v: want at least the week on screen, %v", q.Model, q.Window, week)
		}
		if q.Window.Duration() > 10*7*24*time.Hour {
			t.Errorf("%s read over %v: want a few weeks around the one on screen", q.Model, q.Window)
		}
	}
}

// recordingStore records the timeline's windowed reads: scans for units
// that are not applied, and coverage over a window.
type recordingStore struct {
	state.Store
	mu sync.Mutex
	qs []state.UnitQuery
}

func (s *recordingStore) ScanUnits(ctx context.Context, q state.UnitQuery, fn func(state.Unit) error) error {
	if len(q.Statuses) > 0 {
		s.mu.Lock()
		s.qs = append(s.qs, q)
		s.mu.Unlock()
	}
	return s.Store.ScanUnits(ctx, q, fn)
}

func (s *recordingStore) Coverage(ctx context.Context, env, model string, w state.Window) (state.IntervalSet, error) {
	if !w.Empty() { // a model's status reads its whole coverage: islands, not units
		s.mu.Lock()
		s.qs = append(s.qs, state.UnitQuery{Env: env, Model: model, Window: w})
		s.mu.Unlock()
	}
	return s.Store.Coverage(ctx, env, model, w)
}

func (s *recordingStore) reads() []state.UnitQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]state.UnitQuery(nil), s.qs...)
}
