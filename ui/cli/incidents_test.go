package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// TestDemoIncidentsPutThePaymentsOutageFirst: on the demo, `incidents`
// names raw.payments' failed hour as the first root cause, with its error,
// the four units it blocks and the why command for the holding the most of
// them; the stale clicks are the second, blocking five KPI days. The JSON
// says the same.
func TestDemoIncidentsPutThePaymentsOutageFirst(t *testing.T) {
	dir, sp := demoCopy(t)
	outage := demoOutage(t, dir)
	var rep struct {
		Incidents []struct {
			Kind, Model, Detail string
			Since, Until        *string
			Units               int
			BlockedUnits        int      `json:"blocked_units"`
			BlockedModels       []string `json:"blocked_models"`
			Focus               struct {
				Model string
				At    *string
			}
		}
	}
	jsonOf(t, &rep, "incidents", "-o", "json", "--spec", sp)
	if len(rep.Incidents) != 2 {
		t.Fatalf("incidents %+v, want the outage and the stale clicks", rep.Incidents)
	}
	first, second := rep.Incidents[0], rep.Incidents[1]
	if first.Kind != "failed" || first.Model != "raw.payments" || first.Units != 1 || first.Since == nil ||
		*first.Since != outage.Format(time.RFC3339) || *first.Until != outage.Add(time.Hour).Format(time.RFC3339) {
		t.Errorf("first %+v, want raw.payments' failed hour at %s", first, outage)
	}
	if !strings.Contains(first.Detail, "503 Service Unavailable\nthe payment provider is down") {
		t.Errorf("first detail %q, want the provider's error with its second line", first.Detail)
	}
	// The outage's day and the next of core.daily_revenue (THROUGH), and
	// both months of mart.monthly_revenue (WHOLE over daily_revenue).
	if first.BlockedUnits != 4 || strings.Join(first.BlockedModels, ",") != "core.daily_revenue,mart.monthly_revenue" {
		t.Errorf("first blocks %d of %v, want 4 of core.daily_revenue and mart.monthly_revenue", first.BlockedUnits, first.BlockedModels)
	}
	day := outage.Truncate(24 * time.Hour).Format(time.RFC3339)
	if first.Focus.Model != "core.daily_revenue" || first.Focus.At == nil || *first.Focus.At != day {
		t.Errorf("focus %+v, want core.daily_revenue at %s", first.Focus, day)
	}
	if second.Kind != "stale" || second.Model != "raw.clickstream" || second.BlockedUnits != 5 ||
		strings.Join(second.BlockedModels, ",") != "mart.kpi_daily" {
		t.Errorf("second %+v, want the stale clicks blocking five KPI days", second)
	}

	code, out, errOut := run(t, "incidents", "--spec", sp)
	if code != ExitOK {
		t.Fatalf("incidents: exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "1. raw.payments failed · 1 unit "+outage.Format(time.RFC3339)) ||
		!strings.Contains(lines[1], "503 Service Unavailable") ||
		lines[2] != "   the payment provider is down until scripts/outage is removed; retry then" ||
		lines[3] != "   holds 4 units of core.daily_revenue, mart.monthly_revenue" ||
		lines[4] != "   explain: bollhav why core.daily_revenue --at "+day {
		t.Errorf("text:\n%s", out)
	}
	if !strings.Contains(out, "2. raw.clickstream stale · 5 units") {
		t.Errorf("no second card for the stale clicks:\n%s", out)
	}

	if code, _, errOut := run(t, "incidents", "raw.payments", "--spec", sp); code != ExitUsage || !strings.Contains(errOut, `unexpected argument "raw.payments"`) {
		t.Errorf("an argument: exit %d, %q", code, errOut)
	}
}

// The explain line is a command to paste: it names the unit's time, and
// the environment when it is not prod, or it would explain another unit.
func TestIncidentWhyCommandKeepsTheEnvironment(t *testing.T) {
	day := state.Window{Since: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	for _, c := range []struct {
		u      gate.UnitRef
		suffix string
		want   string
	}{
		{gate.UnitRef{Model: "core.daily_revenue", Window: day}, "", "bollhav why core.daily_revenue --at 2026-11-30T00:00:00Z"},
		{gate.UnitRef{Model: "core.daily_revenue", Window: day}, "dev", "bollhav why core.daily_revenue --at 2026-11-30T00:00:00Z --env dev"},
		{gate.UnitRef{Model: "core.customers"}, "dev", "bollhav why core.customers --env dev"},
	} {
		if got := whyCommand(c.u, c.suffix); got != c.want {
			t.Errorf("whyCommand(%v, %q) = %q, want %q", c.u, c.suffix, got, c.want)
		}
	}
}

// heldSpec: p.b reads p.a's days; p.alert runs only when p.a fails.
const heldSpec = `models:
  - {name: p.a, pipeline: p, chunking: {interval: 1d, start: "2026-11-01"}, run: {command: ["true"]}}
  - {name: p.b, pipeline: p, chunking: {interval: 1d, start: "2026-11-01"},
     upstream: [{name: p.a, contract: encapsulate}], run: {command: ["true"]}}
  - {name: p.alert, pipeline: p, chunking: {interval: 1d, start: "2026-11-01"},
     after: [{task: p.a, on: failure}], run: {command: ["true"]}}
`

// TestIncidentsIsNotAllClearWhileUnitsAreHeld: `incidents` says "all clear"
// only when `blocked --recheck` finds no unit held (not applied, and not
// run if asked now), and otherwise names what waits, with the count
// --recheck gives. Two holds no incident names: a FAILURE alert that did
// not fire (p.alert, held by its after: edge), and units an operator
// re-queued (mark --status pending) while their upstream is not loaded
// (p.b). On both stores.
func TestIncidentsIsNotAllClearWhileUnitsAreHeld(t *testing.T) {
	odEach(t, func(t *testing.T, w odWorld) {
		w.write(t, heldSpec)
		// recheckHeld is --recheck's held units by model: every count but
		// ready.
		recheckHeld := func() map[string]int {
			var got struct {
				Models []enginetest.RecheckRow `json:"models"`
			}
			wbDecode(t, w.ok(t, w.args("blocked", "--recheck", "-o", "json")...), &got)
			out := map[string]int{}
			for _, m := range got.Models {
				if n := m.Waiting + m.Outdated + m.Stale + m.Errors; n > 0 {
					out[m.Model] = n
				}
			}
			return out
		}
		type incidentsHeld struct {
			Incidents []struct{ Kind, Model string }
			Recheck   struct {
				Held   int                     `json:"held"`
				Models []enginetest.RecheckRow `json:"models"`
			} `json:"recheck"`
		}
		check := func(when string, want map[string]int, lines ...string) {
			t.Helper()
			if got := recheckHeld(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: blocked --recheck holds %v, want %v", when, got, want)
			}
			var inc incidentsHeld
			wbDecode(t, w.ok(t, w.args("incidents", "-o", "json")...), &inc)
			total := 0
			for _, n := range want {
				total += n
			}
			if len(inc.Incidents) != 0 || inc.Recheck.Held != total {
				t.Errorf("%s: incidents -o json %+v, want no incident and %d held", when, inc, total)
			}
			text := w.ok(t, w.args("incidents")...)
			if total > 0 && strings.Contains(text, "all clear") {
				t.Errorf("%s: incidents says all clear while %d units are held:\n%s", when, total, text)
			}
			for _, l := range lines {
				if !strings.Contains(text, l) {
					t.Errorf("%s: incidents lacks %q:\n%s", when, l, text)
				}
			}
		}

		w.ok(t, w.args("run", "p.a", "--since", "2026-11-01", "--until", "2026-11-03")...)
		check("p.a's two days loaded", map[string]int{}, "all clear: nothing failed, blocked or stale in prod as of ")

		// The whole pipeline over the same days: p.a succeeds, so the
		// alert's two days are held by its edge; nothing is broken.
		w.ok(t, w.args("run", "--since", "2026-11-01", "--until", "2026-11-03")...)
		check("the alert did not fire", map[string]int{"p.alert": 2},
			"no incident in prod as of ",
			"but 2 units are held (not applied, and would not run if asked now):",
			"  p.alert  2 waiting on an upstream")

		// p.b's next two days wait on p.a's, which are not loaded: an
		// incident while they are stored blocked; re-queued by hand they
		// are pending, and still held.
		w.ok(t, w.args("run", "p.b", "--since", "2026-11-03", "--until", "2026-11-05")...)
		var inc incidentsHeld
		wbDecode(t, w.ok(t, w.args("incidents", "-o", "json")...), &inc)
		if len(inc.Incidents) != 1 || inc.Incidents[0].Kind != "missing" || inc.Incidents[0].Model != "p.a" {
			t.Errorf("with p.b blocked: incidents %+v, want p.a not loaded", inc.Incidents)
		}
		w.ok(t, w.args("mark", "p.b", "--since", "2026-11-03", "--until", "2026-11-05", "--status", "pending")...)
		check("p.b re-queued behind p.a", map[string]int{"p.alert": 2, "p.b": 2},
			"but 4 units are held (not applied, and would not run if asked now):",
			"  p.alert  2 waiting on an upstream",
			"  p.b      2 waiting on an upstream")
	})
}
