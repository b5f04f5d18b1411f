package sqlite

import (
	"testing"
	"time"

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
		units := []struct {
			model  int
			hour   int
			status string
			fp     any
		}{{1, 0, "applied", "f1"}, {1, 1, "applied", "f1"}, {1, 2, "applied", "f1"}, {1, 3, "applied", "f2"}, {1, 4, "applied", nil},
			{1, 5, "pending", nil}, {2, 0, "applied", "f1"}}
		for _, u := range units {
			var applied any
			if u.status == "applied" {
				applied = micros(t0)
			}
			exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "applied_at", "updated_at", "fingerprint")
			VALUES (?, ?, ?, ?, ?, ?, ?)`, u.model, micros(t0.Add(time.Duration(u.hour)*time.Hour)), micros(t0.Add(time.Duration(u.hour+1)*time.Hour)), u.status, applied, micros(t0), u.fp)
		}
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
