package tui

import (
	"fmt"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// TestBlockedCausesAreTheIncidents: the Blocked view's groups are the roots
// `incidents` names (engine.Incidents over the same store), each listing
// the blocked units the incident says it holds — a unit held by two roots
// under both — and the failed units of a failed root; none is the view's
// own grouping (issue 32 §4: the demo showed 3 causes beside 2 incidents).
func TestBlockedCausesAreTheIncidents(t *testing.T) {
	a, d := blockedQueue(t)
	checkCausesAreTheIncidents(t, a, d)
}

// The same on generated projects (gen.Populate: every contract level, fixed
// and flexible grains, failed, retrying, blocked, stale and missing units
// drawn at random), on both stores: for any state a run can leave, the
// Blocked screen's groups are the incidents, with their counts.
func TestBlockedCausesAreTheIncidentsOnGeneratedProjects(t *testing.T) {
	seeds := []int64{1, 2, 3}
	if testing.Short() || enginetest.UnderRace {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				e, _, err := gen.Populate(t.Context(), s, engine.Options{Actor: "test"}, gen.Config{Models: 30, Units: 1500, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				a, err := newApp(t.Context(), e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
				if err != nil {
					t.Fatal(err)
				}
				d, err := loadBlocked(a.common, "", blockedPage)(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if len(d.units) == 0 {
					t.Fatal("the generated project has nothing failed or blocked: the test compares nothing")
				}
				checkCausesAreTheIncidents(t, a, d)
			})
		})
	}
}

// checkCausesAreTheIncidents holds the Blocked screen's groups (d, loaded
// by a) to the incidents engine.Incidents reports on the same store.
func checkCausesAreTheIncidents(t *testing.T, a *App, d blockedData) {
	t.Helper()
	rep, err := a.common.eng.Incidents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Untraced > 0 {
		t.Fatalf("%d blocked units past the trace: grouped by reason, not by root; make the project smaller", rep.Untraced)
	}
	l := d.layout
	byKey := map[string]*cause{}
	for i := range l.groups {
		byKey[l.groups[i].key] = &l.groups[i]
	}
	listed := 0
	for _, inc := range rep.Incidents {
		key := "root:" + string(inc.Kind) + " " + inc.Model
		c := byKey[key]
		if inc.Blocked == 0 && inc.Kind != gate.IncidentFailed {
			// It holds nothing yet (a stale or missing root no run has
			// met): the queue has no unit of it to list.
			if c != nil {
				t.Errorf("the incident %s holds nothing, but the Blocked screen lists %d units under it", key, len(c.units))
			}
			continue
		}
		if c == nil {
			t.Errorf("no cause for the incident %s (holds %d)", key, inc.Blocked)
			continue
		}
		listed++
		blocked, failed := 0, 0
		for _, i := range c.units {
			switch u := d.units[i]; u.Status {
			case state.Blocked:
				blocked++
			case state.Failed:
				failed++
			}
		}
		if blocked != inc.Blocked {
			t.Errorf("the cause of %s lists %d blocked units; the incident holds %d", key, blocked, inc.Blocked)
		}
		if inc.Kind == gate.IncidentFailed && failed != inc.Units {
			t.Errorf("the cause of %s lists %d failed units; the incident has %d", key, failed, inc.Units)
		}
	}
	if listed != len(l.groups) {
		var keys []string
		for _, g := range l.groups {
			keys = append(keys, g.key)
		}
		t.Errorf("the Blocked screen has %d causes, %d of them incidents: %v", len(l.groups), listed, keys)
	}
}
