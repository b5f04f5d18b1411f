package tui

import (
	"testing"

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
	rep, err := a.common.eng.Incidents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	l := d.layout
	if len(l.groups) != len(rep.Incidents) {
		t.Fatalf("%d causes beside %d incidents: %+v", len(l.groups), len(rep.Incidents), l.groups)
	}
	for _, inc := range rep.Incidents {
		var c *cause
		for i := range l.groups {
			if g := &l.groups[i]; g.key == "root:"+string(inc.Kind)+" "+inc.Model {
				c = g
			}
		}
		if c == nil {
			t.Errorf("no cause for the incident %s %s", inc.Kind, inc.Model)
			continue
		}
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
			t.Errorf("the cause of %s %s lists %d blocked units; the incident holds %d", inc.Kind, inc.Model, blocked, inc.Blocked)
		}
		if inc.Kind == gate.IncidentFailed && failed != inc.Units {
			t.Errorf("the cause of %s failed lists %d failed units; the incident has %d", inc.Model, failed, inc.Units)
		}
	}
}
