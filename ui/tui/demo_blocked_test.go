package tui_test

import (
	"github.com/bollhav/bollhav/engine/gate"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/tui"
)

// hourText is a window the way the UI prints an hour: "2026-11-30 16:00–17:00".
func hourText(w state.Window) string {
	return w.Since.UTC().Format("2006-01-02 15:04") + "–" + w.Until.UTC().Format("15:04")
}

// TestDemoBlockedListsTheFailedRootFirst: at 80×24, Blocked (2) opens on
// the failed payments hour, first, under its own heading with the four
// units it holds — the two revenue days that wait for exactly that hour and
// the two months behind them — and the demo's nine blocked units read as
// the two roots the Incidents screen names (the failed hour, holding 4;
// raw.clickstream stale, holding the five KPI days), and the failed hour's
// whole error is under the list.
func TestDemoBlockedListsTheFailedRootFirst(t *testing.T) {
	d := seedDemo(t)
	r, _ := d.startOnIncidents(t)
	r.Keys("2")
	f := r.WaitView(t, "blocked")
	tui.CheckFrame(t, f, 80, 24)
	lines := strings.Split(f, "\n")
	// lines[0] is the header, lines[1] the column names.
	if want := " ✗ raw.payments " + hourText(d.outage) + " failed"; !strings.HasPrefix(lines[2], want) {
		t.Errorf("the first heading is not the failed hour %q:\n%s", want, f)
	}
	// Holds 4 by hand: the two revenue days (THROUGH, ending after the
	// hour) and, behind them, the two months (WHOLE).
	if !strings.HasPrefix(lines[3], "›✗      4 raw.payments ") {
		t.Errorf("the failed hour is not the first row, selected, holding 4:\n%s", f)
	}
	for i, want := range []string{" ⊘      2 core.daily_revenue", " ⊘      2 core.daily_revenue",
		" ⊘      0 mart.monthly_revenue", " ⊘      0 mart.monthly_revenue", " ~ raw.clickstream stale"} {
		if !strings.HasPrefix(lines[4+i], want) {
			t.Errorf("line %d is not %q:\n%s", 4+i, want, f)
		}
	}
	// The demo runs on the wall clock: its days are the outage's day and
	// those around it.
	day := d.outage.Since.Truncate(24 * time.Hour)
	dayText := func(t time.Time) string { return t.Format("2006-01-02") }
	enginetest.ContainsAll(t, "Blocked", f, "1 failed · 9 blocked · 2 causes",
		"error: exit status 1: GET https://payments.example.com", "the payment provider is down until scripts/outage is removed; retry then")
	if strings.Count(f, "mart.kpi_daily") != 5 || strings.Count(f, "mart.monthly_revenue") != 2 {
		t.Errorf("want the five KPI days and the two months listed:\n%s", f)
	}
	// n goes from root to root, round the end.
	r.Keys("n")
	r.WaitFor(t, "the stale cause's first unit", func(f string) bool {
		return strings.Contains(tui.SelectedLine(f), "mart.kpi_daily") && strings.Contains(tui.SelectedLine(f), dayText(day.AddDate(0, 0, -4)))
	})
	r.Keys("n")
	r.WaitFor(t, "round to the failed hour", func(f string) bool { return strings.Contains(tui.SelectedLine(f), "raw.payments") })
}

// TestDemoFixedHourReleasesReadyUnitsThatRRuns: the provider is back. From
// Blocked, r and y rerun the failed hour alone; the rerun releases the two
// revenue days that waited for it (their stored reason says so) and the
// recheck marks them ready, and R (its plan first)
// and y run exactly them — the store has them applied — after which the
// two months that waited on the days are ready in turn, and R, y applies
// them too.
func TestDemoFixedHourReleasesReadyUnitsThatRRuns(t *testing.T) {
	d, r, days := rerunTheFixedHourFromBlocked(t)
	// The revenue days and the months behind them are one cause, as they
	// are one released incident (holds 4), beside the stale clicks.
	f := r.WaitFor(t, "the released revenue days, 4 units with the months, and 2 causes", func(f string) bool {
		lines := strings.Split(f, "\n")
		return len(lines) > 2 && strings.Contains(lines[2], "core.daily_revenue") && strings.Contains(lines[2], " ready") &&
			strings.Contains(lines[2], "· 4 units") && strings.Contains(f, "0 failed · 9 blocked (2 ready: R runs them) · 2 causes")
	})
	tui.CheckFrame(t, f, 80, 24)
	if sel := tui.SelectedLine(f); !strings.Contains(sel, "core.daily_revenue") || !strings.Contains(sel, "ready") {
		t.Errorf("the first ready revenue day is not selected: %q\n%s", sel, f)
	}
	for _, u := range d.units(t, "core.daily_revenue") {
		for _, day := range days {
			if u.Window.Equal(day) && u.Status != state.Blocked {
				t.Fatalf("a revenue day that waited ran before R: %+v", u)
			}
		}
	}
	// The rerun re-judges them when it ends (the frame above may come
	// first, from the live gate): their stored reason no longer names the
	// failed hour (issue 32 §5).
	releasedBy := time.Now().Add(30 * time.Second)
	for released := 0; released < len(days); {
		released = 0
		for _, u := range d.units(t, "core.daily_revenue") {
			for _, day := range days {
				if u.Window.Equal(day) && u.Status == state.Blocked && gate.IsReleased(u.BlockedReason) {
					released++
				}
			}
		}
		if released < len(days) && time.Now().After(releasedBy) {
			t.Fatalf("the revenue days keep the reason they had after the hour they waited for was applied: %+v", d.units(t, "core.daily_revenue"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.Keys("R")
	f = r.WaitText(t, "Run the ready units in prod", "Run 2 units of core.daily_revenue in prod?")
	tui.CheckFrame(t, f, 80, 24)
	r.Keys("y")
	for _, day := range days {
		waitStatus(t, d, "core.daily_revenue", state.Applied, day)
	}
	// Wait for the months themselves to be ready, not for "2 ready" alone:
	// a frame from before the days' run ended says that of the days.
	r.WaitFor(t, "the months ready", func(f string) bool {
		if !strings.Contains(f, "(2 ready: R runs them)") {
			return false
		}
		for _, l := range strings.Split(f, "\n") {
			if strings.Contains(l, "mart.monthly_revenue") && strings.Contains(l, "ready (") {
				return true
			}
		}
		return false
	})
	r.Keys("R")
	r.WaitText(t, "Run 2 units of mart.monthly_revenue in prod?")
	r.Keys("y")
	waitApplied(t, d, "mart.monthly_revenue", 2)
	r.WaitText(t, "0 failed · 5 blocked · 1 cause")
}

// TestDemoPipelinesOpenOnTheFailedModel: esc from the incidents shows the
// pipelines with the cursor on raw.payments, the first model with a
// failed unit (not on the first model, ops.payment_alerts); n and N walk
// the failed and blocked models, round the end.
func TestDemoPipelinesOpenOnTheFailedModel(t *testing.T) {
	r, _ := seedDemo(t).startOnIncidents(t)
	r.Keys("esc")
	f := r.WaitView(t, "pipelines")
	if sel := tui.SelectedLine(f); !strings.Contains(sel, "raw.payments") {
		t.Fatalf("the cursor is not on raw.payments: %q\n%s", sel, f)
	}
	for _, want := range []string{"core.daily_revenue", "mart.kpi_daily", "mart.monthly_revenue", "raw.payments"} {
		r.Keys("n")
		r.WaitFor(t, "n to "+want, func(f string) bool { return strings.Contains(tui.SelectedLine(f), want) })
	}
	r.Keys("N")
	r.WaitFor(t, "N back to mart.monthly_revenue", func(f string) bool { return strings.Contains(tui.SelectedLine(f), "mart.monthly_revenue") })
	// The graph form selects along edges, not rows: n says where it works
	// instead of claiming nothing is wrong.
	r.Keys("v", "n")
	r.WaitText(t, "n and N jump between rows of the list")
}

// waitStatus waits until model's unit of window w has status in the store.
func waitStatus(t *testing.T, d *demo, model string, status state.UnitStatus, w state.Window) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, u := range d.units(t, model) {
			if u.Window.Equal(w) && u.Status == status {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s never became %s: %+v", model, w, status, d.units(t, model))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitApplied waits until n units of model are applied.
func waitApplied(t *testing.T, d *demo, model string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		applied := 0
		for _, u := range d.units(t, model) {
			if u.Status == state.Applied {
				applied++
			}
		}
		if applied == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d units of %s applied, want %d: %+v", applied, model, n, d.units(t, model))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rerunTheFixedHourFromBlocked seeds the demo with the provider back,
// opens Blocked and reruns the failed payments hour with r, y; it returns
// the demo, the program and the revenue days the hour held.
func rerunTheFixedHourFromBlocked(t *testing.T) (*demo, *tui.DemoUI, []state.Window) {
	t.Helper()
	d := seedDemo(t)
	days := d.revenueDaysFixed(t)
	r, _ := d.startOnIncidents(t)
	r.Keys("2")
	r.WaitView(t, "blocked")
	r.Keys("r")
	r.WaitText(t, "Run 1 unit of raw.payments in prod?")
	r.Keys("y")
	waitStatus(t, d, "raw.payments", state.Applied, d.outage)
	return d, r, days
}

// TestDemoReadyUnitsAndDownstreamRunInOneGo: once the fixed hour has
// released the revenue days, R then d ("and downstream") and y run the
// ready days and, in the same go, the months they release — no second R —
// after the plan, and the Blocked view is left with the stale cause alone.
func TestDemoReadyUnitsAndDownstreamRunInOneGo(t *testing.T) {
	d, r, days := rerunTheFixedHourFromBlocked(t)
	r.WaitText(t, "(2 ready: R runs them)")
	r.Keys("R")
	f := r.WaitText(t, "Run 2 units of core.daily_revenue in prod?", "[d] and downstream: off")
	tui.CheckFrame(t, f, 80, 24)
	r.Keys("d")
	f = r.WaitText(t, "[d] and downstream: on", "Run 2 units of core.daily_revenue and downstream in prod?")
	tui.CheckFrame(t, f, 80, 24)
	r.Keys("y")
	for _, day := range days {
		waitStatus(t, d, "core.daily_revenue", state.Applied, day)
	}
	waitApplied(t, d, "mart.monthly_revenue", 2)
	r.WaitText(t, "0 failed · 5 blocked · 1 cause")
}
