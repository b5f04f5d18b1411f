package storetest

import (
	"fmt"
	"strconv"
	"strings"
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

// UpgradedAttemptHistory checks a store just upgraded from before the attempt
// history (schema version 3) to version 4 or later, seeded with model a's unit failed (id failed,
// "exit status 1: boom" after 2 attempts, updated at seeded) and the next
// one running (id running) under host:42's lease to lease: the failed unit's
// history starts empty (its earlier errors were never kept one by one), the
// running unit's expired lease is logged in it, and marking the failed unit
// pending logs its error there before clearing it. register, when set, runs
// just before the mark, for a seed that left model a unregistered.
func UpgradedAttemptHistory(t *testing.T, s state.Store, failed, running int64, seeded, lease time.Time, register func()) {
	t.Helper()
	ctx := t.Context()
	if v, err := s.SchemaVersion(ctx); err != nil || v < 4 {
		t.Fatalf("SchemaVersion after the upgrade = %d, %v; want 4 or later", v, err)
	}
	if as, err := s.Attempts(ctx, failed); err != nil || len(as) != 0 {
		t.Errorf("the failed unit's history after the upgrade = %+v, %v; want empty", as, err)
	}
	if n, err := s.ReleaseExpired(ctx, lease.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("ReleaseExpired = %d, %v", n, err)
	}
	as, err := s.Attempts(ctx, running)
	if err != nil || len(as) != 1 || as[0].Number != 1 || as[0].Try != 0 || as[0].Error != state.LeaseExpiredError("host:42") {
		t.Errorf("the expired lease's history = %+v, %v; want attempt 1, try 0, naming host:42", as, err)
	}
	// Marked pending, the failure from before the history keeps its error
	// there: numbered by its attempts (2), its try unknown (0), at the
	// time it failed, no run.
	if register != nil {
		register()
	}
	if n, err := s.SetStatus(ctx, state.StatusChange{Model: "a", From: []state.UnitStatus{state.Failed}, To: state.Pending, Now: lease.Add(time.Hour)}); err != nil || n != 1 {
		t.Fatalf("SetStatus of the failed unit = %d, %v", n, err)
	}
	as, err = s.Attempts(ctx, failed)
	if err != nil || len(as) != 1 || as[0].Number != 2 || as[0].Try != 0 || as[0].Error != "exit status 1: boom" || !as[0].At.Equal(seeded) || as[0].RunID != 0 {
		t.Errorf("the re-pended failure's history = %+v, %v; want attempt 2, try 0, its error, at %s", as, err, seeded)
	}
}

// VersionList is how a store lists schema versions 1 to n as applied:
// "1,2,…,n".
func VersionList(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(parts, ",")
}

// UpgradedIdentity checks a store just upgraded from before store
// identities: it has one (a version 4 UUID), and reopen — another
// process's open of the same store — reads the same one, so the upgrade
// made it once.
func UpgradedIdentity(t *testing.T, s state.Store, reopen func() state.Store) {
	t.Helper()
	id, err := s.Identity(t.Context())
	if err != nil || !uuidV4.MatchString(id) {
		t.Fatalf("Identity after the upgrade = %q, %v; want a version 4 UUID", id, err)
	}
	again, err := reopen().Identity(t.Context())
	if err != nil || again != id {
		t.Errorf("Identity after a reopen = %q, %v; want %s", again, err, id)
	}
}
