package tui

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// r on a stale incident opens the run that fixes it: a bulldozer of the
// stale hours, which loads them again (a discover keeps applied units and
// would run nothing). Tabbed to discover, the plan of 0 units says why
// and offers no Run: y changes nothing.
func TestStaleIncidentRunsABulldozerAndAnEmptyPlanOffersNothing(t *testing.T) {
	w := newWorld(t)
	r := startLanding(t, w.e, 80, 24, Options{})
	r.waitSettled(t, viewIncidents)
	r.keys("j")
	r.waitFor(t, "the stale card selected", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "raw.orders stale")
	})
	r.keys("r")
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
