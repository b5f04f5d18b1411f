package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestUpgradeBackfillsAppliedCounts: a schema written by the release before
// the kept counts (version 5), holding applied units under two
// fingerprints, unknown ones, units in other statuses and another
// environment's, opens in this release with migration 0006's counts equal
// to its applied units, and the transitions keep them from then on.
func TestUpgradeBackfillsAppliedCounts(t *testing.T) {
	ctx := t.Context()
	s, _, _ := upgradeFrom(t, 5, func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		oldHourlyModel(exec, "", "b", 2)
		// a: hours 0–2 under f1, 3 under f2, 4 unknown, 5 pending; b: 0 under
		// f1; dev's a: 0 under f9.
		oldUnits(exec, []oldUnit{{"", "a", 0, "applied", "f1"}, {"", "a", 1, "applied", "f1"}, {"", "a", 2, "applied", "f1"}, {"", "a", 3, "applied", "f2"},
			{"", "a", 4, "applied", nil}, {"", "a", 5, "pending", nil}, {"", "b", 0, "applied", "f1"}, {"dev", "a", 0, "applied", "f9"}},
			func(int) time.Time { return t0 })
	})
	if got, err := s.FingerprintCounts(ctx, "dev", ""); err != nil || fmt.Sprint(got) != "[{a f9 1}]" {
		t.Errorf("dev's counts after the upgrade = %v, %v; want a f9 1", got, err)
	}
	storetest.UpgradedAppliedCounts(t, s)
}

// TestUpgradeFromBeforeFingerprints: a schema written before units
// recorded their definition (version 4), with applied units, opens with
// those units of unknown definition — fingerprint "", counted as unknown —
// so nothing reads as outdated, and no definition history.
func TestUpgradeFromBeforeFingerprints(t *testing.T) {
	s, _, _ := upgradeFrom(t, 4, func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		for h := range 3 {
			exec(`INSERT INTO {schema}.units (env, model, flexible, since, until, status, applied_at, updated_at)
			VALUES ('', 'a', false, $1, $2, 'applied', $3, $3)`, at(h), at(h+1), t0)
		}
	})
	storetest.UpgradedUnknownDefinitions(t, s)
}

// TestUpgradeBackfillsSummary: a schema written by the release before the
// kept summary (version 9), holding units of two models in every status
// with a hole in the applied ones, and another environment's, opens in this
// release with migration 0010's counts by status and coverage islands equal
// to its units, and the transitions keep them from then on.
func TestUpgradeBackfillsSummary(t *testing.T) {
	ctx := t.Context()
	s, _, _ := upgradeFrom(t, 9, func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		oldHourlyModel(exec, "", "b", 2)
		oldHourlyModel(exec, "dev", "a", 1)
		// a: hours 0–1 and 3 applied (a hole at 2, failed), 4 blocked, 5
		// running, 6 pending; b: nothing; dev's a: hour 0 applied.
		oldUnits(exec, []oldUnit{{"", "a", 0, "applied", nil}, {"", "a", 1, "applied", nil}, {"", "a", 2, "failed", nil}, {"", "a", 3, "applied", nil},
			{"", "a", 4, "blocked", nil}, {"", "a", 5, "running", nil}, {"", "a", 6, "pending", nil}, {"dev", "a", 0, "applied", nil}},
			func(h int) time.Time { return at(h + 10) })
	})
	summaries := func(env string) string {
		t.Helper()
		sums, err := s.Summaries(ctx, env, "")
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, sum := range sums {
			last := "none"
			if sum.LastAppliedAt != nil {
				last = sum.LastAppliedAt.Sub(t0).String()
			}
			out += fmt.Sprintf("%s %v %s %v; ", sum.Model, sum.Counts, last, sum.Coverage.Windows())
		}
		return out
	}
	h := func(a, b int) state.Window { return state.MustWindow(at(a), at(b)) }
	want := fmt.Sprintf("a map[applied:3 blocked:1 failed:1 pending:1 running:1] %s %v; b map[applied:0 blocked:0 failed:0 pending:0 running:0] none []; ",
		13*time.Hour, []state.Window{h(0, 2), h(3, 4)})
	if got := summaries(""); got != want {
		t.Fatalf("summaries after the upgrade:\n got  %s\n want %s", got, want)
	}
	if got, want := summaries("dev"), fmt.Sprintf("a map[applied:1 blocked:0 failed:0 pending:0 running:0] %s %v; ", 10*time.Hour, []state.Window{h(0, 1)}); got != want {
		t.Errorf("dev's summaries after the upgrade:\n got  %s\n want %s", got, want)
	}
	// Marking the failed hour applied closes the hole; the islands merge.
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: h(2, 3), From: []state.UnitStatus{state.Failed},
		To: state.Applied, AppliedAt: at(20), Now: at(20)}); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("a map[applied:4 blocked:1 failed:0 pending:1 running:1] %s %v; b map[applied:0 blocked:0 failed:0 pending:0 running:0] none []; ",
		20*time.Hour, []state.Window{h(0, 4)})
	if got := summaries(""); got != want {
		t.Errorf("summaries after marking hour 2 applied:\n got  %s\n want %s", got, want)
	}
}
