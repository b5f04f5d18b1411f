package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// The upgrade checks: each backend's test writes a store of an earlier
// schema version with its own SQL (the backends' tables differ), opens it
// in this release, and calls one of these for what the upgrade must leave,
// which does not differ.

// UpgradedAppliedCounts checks a store just upgraded from before the kept
// applied counts (schema version 5), seeded with model a's hours 0–2 of
// 2026-01-01 applied under fingerprint f1, hour 3 under f2, hour 4 with
// none and hour 5 pending, and model b's hour 0 under f1: its counts equal
// those units, and the next change keeps them.
func UpgradedAppliedCounts(t *testing.T, s state.Store) {
	t.Helper()
	ctx := t.Context()
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

// UpgradedUnknownDefinitions checks a store just upgraded from before
// units recorded their definition (schema version 4), seeded with three
// applied units of model a: they stay applied with fingerprint "", counted
// as unknown, so nothing reads as outdated, and a has no definition
// history.
func UpgradedUnknownDefinitions(t *testing.T, s state.Store) {
	t.Helper()
	ctx := t.Context()
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
