package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// TestUpgradeBackfillsAppliedCounts: a file written by the release before
// the kept counts (schema version 5), holding applied units under two
// fingerprints, unknown ones and units in other statuses, opens in this
// release with migration 0006's counts equal to its applied units, and the
// triggers keep them from then on.
func TestUpgradeBackfillsAppliedCounts(t *testing.T) {
	ctx := t.Context()
	s := upgradeFrom(t, 5, func(exec func(string, ...any)) {
		for id, name := range []string{"a", "b"} {
			exec(`INSERT INTO "models" ("id", "env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval",
			"timezone", "start", "definition", "content_hash", "registered_at", "max_unit") VALUES (?, '', ?, ?, 'p', 'temporal', 'fix', '1h', 'UTC', ?, '{}', 'h', ?, ?)`,
				id+1, name, id+1, micros(t0), micros(t0), time.Hour.Microseconds())
		}
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
	got, err := s.FingerprintCounts(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []state.FingerprintCount{{Model: "a", Fingerprint: "", Count: 1}, {Model: "a", Fingerprint: "f1", Count: 3},
		{Model: "a", Fingerprint: "f2", Count: 1}, {Model: "b", Fingerprint: "f1", Count: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts after the upgrade = %v, want %v", got, want)
	}
	// The kept counts follow the next change.
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: state.MustWindow(t0, t0.Add(2*time.Hour)), From: []state.UnitStatus{state.Applied},
		To: state.Pending, Now: t0}); err != nil {
		t.Fatal(err)
	}
	got, err = s.FingerprintCounts(ctx, "", "a")
	if err != nil {
		t.Fatal(err)
	}
	want = []state.FingerprintCount{{Model: "a", Fingerprint: "", Count: 1}, {Model: "a", Fingerprint: "f1", Count: 1}, {Model: "a", Fingerprint: "f2", Count: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts after re-pending two f1 hours = %v, want %v", got, want)
	}
}

// TestUpgradeFromBeforeFingerprints: a file written before units recorded
// their definition (schema version 4), with applied units, opens with
// those units of unknown definition — fingerprint "", counted as unknown —
// so nothing reads as outdated, and no definition history.
func TestUpgradeFromBeforeFingerprints(t *testing.T) {
	ctx := t.Context()
	s := upgradeFrom(t, 4, func(exec func(string, ...any)) {
		exec(`INSERT INTO "models" ("id", "env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval",
		"timezone", "start", "definition", "content_hash", "registered_at", "max_unit") VALUES (1, '', 'a', 1, 'p', 'temporal', 'fix', '1h', 'UTC', ?, '{}', 'h', ?, ?)`,
			micros(t0), micros(t0), time.Hour.Microseconds())
		for h := range 3 {
			exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "applied_at", "updated_at") VALUES (1, ?, ?, 'applied', ?, ?)`,
				micros(t0.Add(time.Duration(h)*time.Hour)), micros(t0.Add(time.Duration(h+1)*time.Hour)), micros(t0), micros(t0))
		}
	})
	got, err := s.FingerprintCounts(ctx, "", "")
	if err != nil || fmt.Sprint(got) != "[{a  3}]" {
		t.Errorf("counts after the upgrade = %v, %v; want the three units unknown", got, err)
	}
	err = s.ScanUnits(ctx, state.UnitQuery{Model: "a"}, func(u state.Unit) error {
		if u.Status != state.Applied || u.Fingerprint != "" {
			t.Errorf("unit %s after the upgrade: %s, fingerprint %q; want applied, unknown", u.Window, u.Status, u.Fingerprint)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Definitions(ctx, "", "a"); err != nil || len(ds) != 0 {
		t.Errorf("definitions after the upgrade: %v, %v; want none", ds, err)
	}
}
