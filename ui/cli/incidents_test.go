package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// TestDemoIncidentsPutThePaymentsOutageFirst: on the demo, `incidents`
// names raw.payments' failed hour as the first root cause, with its error,
// the four units it blocks and the why command for the most impactful of
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
		lines[2] != "   the payment provider is down; retry later" ||
		lines[3] != "   holds 4 units of core.daily_revenue, mart.monthly_revenue · impact 4" ||
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
