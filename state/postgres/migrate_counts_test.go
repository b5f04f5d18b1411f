package postgres

import (
	"fmt"
	"testing"

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
		units := []struct {
			env, model string
			hour       int
			status     string
			fp         any
		}{{"", "a", 0, "applied", "f1"}, {"", "a", 1, "applied", "f1"}, {"", "a", 2, "applied", "f1"}, {"", "a", 3, "applied", "f2"},
			{"", "a", 4, "applied", nil}, {"", "a", 5, "pending", nil}, {"", "b", 0, "applied", "f1"}, {"dev", "a", 0, "applied", "f9"}}
		for _, u := range units {
			var applied any
			if u.status == "applied" {
				applied = t0
			}
			exec(`INSERT INTO {schema}.units (env, model, flexible, since, until, status, applied_at, updated_at, fingerprint)
			VALUES ($1, $2, false, $3, $4, $5, $6, $7, $8)`, u.env, u.model, at(u.hour), at(u.hour+1), u.status, applied, t0, u.fp)
		}
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
