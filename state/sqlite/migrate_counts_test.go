package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestUpgradeBackfillsAppliedCounts: a file written by the release before
// the kept counts (schema version 5), holding applied units under two
// fingerprints, unknown ones and units in other statuses, opens in this
// release with migration 0006's counts equal to its applied units, and the
// triggers keep them from then on.
func TestUpgradeBackfillsAppliedCounts(t *testing.T) {
	s := upgradeFrom(t, 5, func(exec func(string, ...any)) {
		oldHourlyModel(exec, 1, "a")
		oldHourlyModel(exec, 2, "b")
		// a: hours 0–2 under f1, 3 under f2, 4 unknown, 5 pending; b: 0 under f1.
		oldUnits(exec, []oldUnit{{1, 0, "applied", "f1"}, {1, 1, "applied", "f1"}, {1, 2, "applied", "f1"}, {1, 3, "applied", "f2"},
			{1, 4, "applied", nil}, {1, 5, "pending", nil}, {2, 0, "applied", "f1"}},
			func(int) time.Time { return t0 })
	})
	storetest.UpgradedAppliedCounts(t, s)
}

// TestUpgradeFromBeforeFingerprints: a file written before units recorded
// their definition (schema version 4), with applied units, opens with
// those units of unknown definition — fingerprint "", counted as unknown —
// so nothing reads as outdated, and no definition history.
func TestUpgradeFromBeforeFingerprints(t *testing.T) {
	s := upgradeFrom(t, 4, func(exec func(string, ...any)) {
		oldHourlyModel(exec, 1, "a")
		for h := range 3 {
			exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "applied_at", "updated_at") VALUES (1, ?, ?, 'applied', ?, ?)`,
				micros(t0.Add(time.Duration(h)*time.Hour)), micros(t0.Add(time.Duration(h+1)*time.Hour)), micros(t0), micros(t0))
		}
	})
	storetest.UpgradedUnknownDefinitions(t, s)
}

// TestUpgradeBackfillsStatusCounts: a file written by the release before
// the kept status counts (schema version 8), holding units of two models in
// every status, opens in this release with migration 0009's counts equal to
// its units, so Summaries is right from the first read, and the counts
// follow the next transition.
func TestUpgradeBackfillsStatusCounts(t *testing.T) {
	ctx := t.Context()
	s := upgradeFrom(t, 8, func(exec func(string, ...any)) {
		oldHourlyModel(exec, 1, "a")
		oldHourlyModel(exec, 2, "b")
		// a: hours 0–1 applied, 2 failed, 3 blocked, 4 running, 5–6 pending;
		// b: hour 0 applied. Coverage was kept already at version 7.
		oldUnits(exec, []oldUnit{{1, 0, "applied", nil}, {1, 1, "applied", nil}, {1, 2, "failed", nil}, {1, 3, "blocked", nil},
			{1, 4, "running", nil}, {1, 5, "pending", nil}, {1, 6, "pending", nil}, {2, 0, "applied", nil}},
			func(h int) time.Time { return t0.Add(time.Duration(h+10) * time.Hour) })
		for _, c := range [][3]int64{{1, 0, 2}, {2, 0, 1}} {
			exec(`INSERT INTO "coverage" VALUES (?, ?, ?)`, c[0], micros(t0.Add(time.Duration(c[1])*time.Hour)), micros(t0.Add(time.Duration(c[2])*time.Hour)))
		}
	})
	counts := func() string {
		t.Helper()
		sums, err := s.Summaries(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, sum := range sums {
			out += fmt.Sprintf("%s %v %s %v; ", sum.Model, sum.Counts, sum.LastAppliedAt.Format("15h"), sum.Coverage.Windows())
		}
		return out
	}
	h := func(a, b int) state.Window {
		return state.MustWindow(t0.Add(time.Duration(a)*time.Hour), t0.Add(time.Duration(b)*time.Hour))
	}
	want := fmt.Sprintf("a map[applied:2 blocked:1 failed:1 pending:2 running:1] 11h %v; b map[applied:1 blocked:0 failed:0 pending:0 running:0] 10h %v; ",
		[]state.Window{h(0, 2)}, []state.Window{h(0, 1)})
	if got := counts(); got != want {
		t.Fatalf("summaries after the upgrade:\n got  %s\n want %s", got, want)
	}
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: h(1, 4), From: []state.UnitStatus{state.Applied, state.Failed, state.Blocked},
		To: state.Pending, Now: t0}); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("a map[applied:1 blocked:0 failed:0 pending:5 running:1] 10h %v; b map[applied:1 blocked:0 failed:0 pending:0 running:0] 10h %v; ",
		[]state.Window{h(0, 1)}, []state.Window{h(0, 1)})
	if got := counts(); got != want {
		t.Errorf("summaries after re-pending hours 1–3 of a:\n got  %s\n want %s", got, want)
	}
}
