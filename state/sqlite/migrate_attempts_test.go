package sqlite

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestUpgradeToAttemptHistory: a file written by the release before the
// attempt history (schema version 3), holding a failed unit and a running
// one, opens in this release: migration 0004 adds the history, the units are
// kept as they were, the failed unit's history starts empty (its earlier
// errors were never kept one by one), the running unit's expired lease is
// logged in it, and marking the failed unit pending logs its error there
// before clearing it.
func TestUpgradeToAttemptHistory(t *testing.T) {
	ctx := t.Context()
	lease := t0.Add(48 * time.Hour)
	s := upgradeFrom(t, 3, func(exec func(string, ...any)) {
		oldHourlyModel(exec, 1, "a")
		exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "error", "attempts", "updated_at") VALUES
		(1, ?, ?, 'failed', 'exit status 1: boom', 2, ?)`, micros(t0), micros(t0.Add(time.Hour)), micros(t0))
		exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "attempts", "lease_owner", "lease_until", "fence", "updated_at") VALUES
		(1, ?, ?, 'running', 0, 'host:42', ?, 1, ?)`, micros(t0.Add(time.Hour)), micros(t0.Add(2*time.Hour)), micros(lease), micros(t0))
		exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "applied_at", "attempts", "updated_at") VALUES
		(1, ?, ?, 'applied', ?, 1, ?)`, micros(t0.Add(2*time.Hour)), micros(t0.Add(3*time.Hour)), micros(t0), micros(t0))
	})
	var units []state.Unit
	if err := s.ScanUnits(ctx, state.UnitQuery{Model: "a"}, func(u state.Unit) error { units = append(units, u); return nil }); err != nil {
		t.Fatal(err)
	}
	// Applied before definitions were recorded (migration 0005): unknown,
	// never outdated.
	if len(units) != 3 || units[2].Status != state.Applied || units[2].Fingerprint != "" {
		t.Fatalf("units after the upgrade: %+v; want the applied one with no fingerprint", units)
	}
	units = units[:2]
	if len(units) != 2 || units[0].Status != state.Failed || units[0].Error != "exit status 1: boom" || units[0].Attempts != 2 ||
		units[1].Status != state.Running || units[1].LeaseOwner != "host:42" {
		t.Fatalf("units after the upgrade: %+v", units)
	}
	storetest.UpgradedAttemptHistory(t, s, units[0].ID, units[1].ID, t0, lease, nil)
}
