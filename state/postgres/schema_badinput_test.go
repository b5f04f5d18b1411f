package postgres

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/storetest"
)

// ui/cli's bad-input table needs a store whose schema version is newer than
// the binary's. Moving the version takes SQL, and SQL lives only in the
// backends, so the table builds this package's test binary and runs
// TestBadInputSchemaVersion in it with these variables set. Without them the
// test checks the tool itself in a schema of its own.
const (
	// badInputDSNEnv and badInputSchemaEnv name the store to change.
	badInputDSNEnv    = "BOLLHAV_BADINPUT_DSN"
	badInputSchemaEnv = "BOLLHAV_BADINPUT_SCHEMA"
	// badInputOpEnv is what to do: newer (record a version this binary does
	// not know), current (forget the versions this binary does not know) or
	// show (change nothing).
	badInputOpEnv = "BOLLHAV_BADINPUT_OP"
)

// TestBadInputSchemaVersion makes a store newer than this binary and back,
// and prints the versions the store records afterwards ("versions: 1,2,…"),
// for the caller to compare before and after the refused commands.
func TestBadInputSchemaVersion(t *testing.T) {
	if dsn := os.Getenv(badInputDSNEnv); dsn != "" {
		versions, err := badInputSchemaVersion(dsn, os.Getenv(badInputSchemaEnv), os.Getenv(badInputOpEnv))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("versions:", versions)
		return
	}

	// The tool itself: newer is refused by Open, current opens again with
	// the data intact, and show changes nothing.
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	ctx := t.Context()
	s, err := Open(ctx, dsn, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, "", []state.ModelRecord{{Name: "raw.a", Temporality: "timeless"}}, nil, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ op, want string }{
		{"show", storetest.VersionList(len(ms))},
		{"newer", storetest.VersionList(len(ms) + 1)},
		{"show", storetest.VersionList(len(ms) + 1)},
	} {
		if got, err := badInputSchemaVersion(dsn, schema, step.op); err != nil || got != step.want {
			t.Fatalf("%s: versions %q, %v; want %q", step.op, got, err, step.want)
		}
	}
	if _, err := Open(ctx, dsn, Options{Schema: schema}); !errors.Is(err, state.ErrNewerSchema) {
		t.Fatalf("Open after newer: %v, want ErrNewerSchema", err)
	}
	if got, err := badInputSchemaVersion(dsn, schema, "current"); err != nil || got != storetest.VersionList(len(ms)) {
		t.Fatalf("current: versions %q, %v", got, err)
	}
	s, err = Open(ctx, dsn, Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open after current: %v", err)
	}
	defer s.Close()
	if recs, err := s.Models(ctx, ""); err != nil || len(recs) != 1 || recs[0].Name != "raw.a" {
		t.Errorf("models after the round trip: %v, %v", recs, err)
	}
}

// badInputSchemaVersion applies op to the store in schema without opening
// it as a Store (Open refuses a newer schema) and returns its recorded
// versions.
func badInputSchemaVersion(dsn, schema, op string) (string, error) {
	if err := checkSchema(schema); err != nil {
		return "", err
	}
	ms, err := embeddedMigrations()
	if err != nil {
		return "", err
	}
	switch op {
	case "newer":
		err = pgtest.Exec(dsn, sqlFor(schema, `INSERT INTO {schema}.schema_version (version, name) VALUES ($1, 'from_a_newer_bollhav')`), len(ms)+1)
	case "current":
		err = pgtest.Exec(dsn, sqlFor(schema, `DELETE FROM {schema}.schema_version WHERE version > $1`), len(ms))
	case "show":
	default:
		err = fmt.Errorf("unknown %s %q: want newer, current or show", badInputOpEnv, op)
	}
	if err != nil {
		return "", err
	}
	var versions string
	err = pgtest.QueryRow(dsn, sqlFor(schema, `SELECT coalesce(string_agg(version::text, ',' ORDER BY version), '') FROM {schema}.schema_version`), nil, &versions)
	return versions, err
}
