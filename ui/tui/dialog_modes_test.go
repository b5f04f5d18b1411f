package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// r on a stale incident opens the run that fixes it: a bulldozer of the
// stale hours, which loads them again (a discover keeps applied units and
// would run nothing). Tabbed to discover, the plan of 0 units says why
// and offers no Run: y changes nothing.
func TestStaleIncidentRunsABulldozerAndAnEmptyPlanOffersNothing(t *testing.T) {
	w, r := runOnTheStaleCard(t)
	f := r.waitText(t, "STATE_MODE  discover  [bulldozer]", "Run 5 units of raw.orders in prod?")
	if !strings.Contains(f, "reset     5 units  2026-01-01 00:00–05:00") {
		t.Errorf("the bulldozer does not reset the five stale hours:\n%s", f)
	}
	r.keys("tab", "tab")
	f = r.waitText(t, "STATE_MODE [discover]", "nothing to run: every unit in the window is applied")
	for _, l := range strings.Split(f, "\n") {
		if strings.Contains(l, "Run 0 units") || strings.Contains(l, "Cancel") && strings.Contains(l, "Run") {
			t.Errorf("a plan of 0 units still offers Run:\n%s", f)
		}
	}
	r.keys("y")
	r.waitText(t, "nothing to run: tab for another mode, esc to cancel")
	if c := w.counts(t, "raw.orders"); c[state.Applied] != 22 || c[state.Pending] != 0 {
		t.Fatalf("y on an empty plan changed units: %v", c)
	}
}

// The fix of each kind of incident: stale rows load again under a
// bulldozer, outdated ones are rebuilt, every other kind is a discover of
// its span.
func TestIncidentKindFix(t *testing.T) {
	for _, c := range []struct {
		kind     gate.IncidentKind
		mode     spec.StateMode
		outdated bool
	}{
		{gate.IncidentFailed, spec.Discover, false},
		{gate.IncidentGateError, spec.Discover, false},
		{gate.IncidentStale, spec.Bulldozer, false},
		{gate.IncidentOutdated, spec.Bulldozer, true},
		{gate.IncidentMissing, spec.Discover, false},
		{gate.IncidentBlocked, spec.Discover, false},
		{gate.IncidentReleased, spec.Discover, false},
	} {
		if mode, outdated := c.kind.Fix(); mode != c.mode || outdated != c.outdated {
			t.Errorf("%s: Fix %s %v, want %s %v", c.kind, mode, outdated, c.mode, c.outdated)
		}
	}
}

// The mode and "with downstream" are independent: d keeps the mode
// chosen, and tab goes through every mode, bulldozer included, keeping
// downstream as it is.
func TestDialogModeAndDownstreamAreIndependent(t *testing.T) {
	r := startLanding(t, newWorld(t).e, 80, 24, Options{})
	r.waitSettled(t, viewIncidents)
	r.keys("r")
	r.waitText(t, "STATE_MODE [discover]", "[d] with downstream: off", "Run 2 units of raw.orders in prod?")
	r.keys("tab")
	r.waitText(t, "STATE_MODE  discover  [bulldozer]", "[d] with downstream: off")
	r.keys("d")
	r.waitText(t, "STATE_MODE  discover  [bulldozer]", "[d] with downstream: on", "then what it releases downstream runs")
	for _, want := range []string{"[torch]", "[discover]", "[bulldozer]"} {
		r.keys("tab")
		f := r.waitText(t, want)
		if !strings.Contains(f, "with downstream: on") {
			t.Fatalf("tab to %s turned downstream off:\n%s", want, f)
		}
	}
	r.keys("d")
	r.waitText(t, "STATE_MODE  discover  [bulldozer]", "[d] with downstream: off")
}

// A bulldozer with downstream of a stale root loads its hours again and
// then runs what that releases: mart.fresh's five hours, held by the stale
// rows, are applied by the same y.
func TestStaleBulldozerWithDownstreamRunsWhatItReleases(t *testing.T) {
	w, r := runOnTheStaleCard(t)
	r.waitText(t, "[bulldozer]", "Run 5 units of raw.orders in prod?")
	r.keys("d")
	r.waitText(t, "[bulldozer]", "[d] with downstream: on", "Run 5 units of raw.orders and downstream in prod?")
	r.keys("y")
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed
	for w.counts(t, "mart.fresh")[state.Applied] != 5 {
		if time.Now().After(deadline) {
			t.Fatalf("mart.fresh's hours were not run after the bulldozer released them: %v", w.counts(t, "mart.fresh"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// At 80 columns the dialog takes the whole width — no column of the view
// behind shows at its edges — and the rows of a downstream plan are read
// whole, wrapped, never cut.
func TestDialogAt80ColumnsIsWholeAndUncut(t *testing.T) {
	r := startLanding(t, newWorld(t).e, 80, 24, Options{})
	r.waitSettled(t, viewIncidents)
	r.keys("r", "d")
	f := r.waitText(t, "[d] with downstream: on", "Run 103 units of 5 models in prod?")
	lines := strings.Split(f, "\n")
	inBox := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "╭"):
			inBox = true
		case !inBox:
			continue
		}
		if r := []rune(strings.TrimRight(l, " ")); len(r) != 80 || !strings.ContainsRune("╭│╰", r[0]) || !strings.ContainsRune("╮│╯", r[79]) {
			t.Errorf("line %d of the dialog is not the box from edge to edge: %q", i, l)
		}
		if strings.Contains(l, "…") {
			t.Errorf("line %d of the dialog is cut: %q", i, l)
		}
		if strings.HasPrefix(l, "╰") {
			break
		}
	}
	if !inBox {
		t.Fatalf("no dialog:\n%s", f)
	}
	for _, model := range []string{"raw.orders  run 26 units", "mart.daily  run 2 units", "mart.hourly  run 26 units", "mart.fresh  run 48 units", "report.snapshot  run 1 unit"} {
		if !strings.Contains(f, model) {
			t.Errorf("the plan has no row of %s:\n%s", model, f)
		}
	}
}

// The run dialog's plan warns, before y, that a bulldozer of a model whose
// query appends its rows adds the rows of the applied window once more,
// naming the model and the count (engine.ModelPlan.RerunApplied) — whole,
// at 80 columns.
func TestDialogWarnsOfAppendRowsAddedAgain(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, `models:
  - {name: core.visits, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     run: {query: "SELECT :since AS day, 1 AS n", write: {mode: append}}}
`)
	e := engine.New(s, sp, engine.Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return uiClock }})
	days := state.Window{Since: t0, Until: t0.Add(48 * time.Hour)}
	if res, err := e.Run(t.Context(), engine.RunRequest{Window: &days}, e.Executor(), nil); err != nil || res.Failed() {
		t.Fatalf("seeding run: %+v, %v", res, err)
	}
	r := startUI(t, e, 80, 24, Options{View: "model", Model: "core.visits"})
	r.waitSettled(t, viewModel)
	r.keys("r")
	f := r.waitText(t, "[bulldozer]", "Run 1 unit of core.visits in prod?")
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╰", " ").Replace(f)), " ")
	if !strings.Contains(flat, "warning: core.visits: writes with append: the 1 applied window it runs again get their rows added once more") {
		t.Errorf("the plan does not warn of the append rows added again:\n%s", f)
	}
	r.keys("tab", "tab")
	f = r.waitText(t, "STATE_MODE [discover]")
	if strings.Contains(f, "append") {
		t.Errorf("a discover, which runs no applied window, warns of append:\n%s", f)
	}
}

// runOnTheStaleCard opens the world's Incidents at 80×24, selects the
// stale raw.orders card and presses r.
func runOnTheStaleCard(t *testing.T) (*world, *uiRun) {
	t.Helper()
	w := newWorld(t)
	r := startLanding(t, w.e, 80, 24, Options{})
	r.waitSettled(t, viewIncidents)
	r.keys("j")
	r.waitFor(t, "the stale card selected", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "raw.orders stale")
	})
	r.keys("r")
	return w, r
}
