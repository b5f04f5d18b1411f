package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// oldHourlyModel registers name, a fixed hourly model from t0 with row id
// and task id id, in a file of an earlier schema version through fill's
// exec, as the releases these tests upgrade from (versions 3 to 8) wrote
// a registration.
func oldHourlyModel(exec func(string, ...any), id int, name string) {
	exec(`INSERT INTO "models" ("id", "env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval",
	"timezone", "start", "definition", "content_hash", "registered_at", "max_unit") VALUES (?, '', ?, ?, 'p', 'temporal', 'fix', '1h', 'UTC', ?, '{}', 'h', ?, ?)`,
		id, name, id, micros(t0), micros(t0), time.Hour.Microseconds())
}

// oldUnit is a unit of hour of the model with row id model, in a file of
// an earlier schema version, with its fingerprint (nil for none).
type oldUnit struct {
	model, hour int
	status      string
	fp          any
}

// oldUnits writes units through fill's exec as an earlier release did; an
// applied unit was applied at appliedAt(its hour).
func oldUnits(exec func(string, ...any), units []oldUnit, appliedAt func(hour int) time.Time) {
	for _, u := range units {
		var applied any
		if u.status == "applied" {
			applied = micros(appliedAt(u.hour))
		}
		exec(`INSERT INTO "units" ("model_id", "since", "until", "status", "applied_at", "updated_at", "fingerprint")
			VALUES (?, ?, ?, ?, ?, ?, ?)`, u.model, micros(t0.Add(time.Duration(u.hour)*time.Hour)), micros(t0.Add(time.Duration(u.hour+1)*time.Hour)), u.status, applied, micros(t0), u.fp)
	}
}

// upgradeFrom is the set-up every upgrade test shares: a state file at
// schema version (this release's migrations up to it, each recorded in
// schema_version as that release would have), the rows fill writes through
// exec (a statement that fails fails t), then this release's Open of the
// file, which upgrades it. The store closes when t ends.
func upgradeFrom(t *testing.T, version int, fill func(exec func(query string, args ...any))) *Store {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", dsn(path, "immediate", false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, query, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE "schema_version" ("version" INTEGER PRIMARY KEY, "name" TEXT NOT NULL, "applied_at" INTEGER NOT NULL)`)
	for v, m := range migrations()[:version] {
		exec(m.sql)
		exec(`INSERT INTO "schema_version" VALUES (?, ?, 0)`, v+1, m.name)
	}
	fill(exec)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a version %d file: %v", version, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestUpgradeGivesTheStoreAnIdentity: a file from before store identities
// (schema version 9), holding a model, gets an identity when this release
// opens it, and keeps that one on every later open.
func TestUpgradeGivesTheStoreAnIdentity(t *testing.T) {
	s := upgradeFrom(t, 9, func(exec func(string, ...any)) { oldHourlyModel(exec, 1, "a") })
	storetest.UpgradedIdentity(t, s, func() state.Store {
		r, err := Open(t.Context(), s.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	})
}
