package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// ui/cli's bad-input table needs a store whose schema version is newer than
// the binary's. Moving the version takes SQL, and SQL lives only in the
// backends, so the table builds this package's test binary and runs
// TestBadInputSchemaVersion in it with these variables set. Without them the
// test checks the tool itself on a store of its own.
const (
	// badInputStoreEnv is the SQLite file to change.
	badInputStoreEnv = "BOLLHAV_BADINPUT_STORE"
	// badInputOpEnv is what to do: newer (record a version this binary does
	// not know), current (forget the versions this binary does not know) or
	// show (change nothing).
	badInputOpEnv = "BOLLHAV_BADINPUT_OP"
)

// TestBadInputSchemaVersion makes a store newer than this binary and back,
// and prints the versions the store records afterwards ("versions: 1,2,…"),
// for the caller to compare before and after the refused commands.
func TestBadInputSchemaVersion(t *testing.T) {
	if path := os.Getenv(badInputStoreEnv); path != "" {
		versions, err := badInputSchemaVersion(t.Context(), path, os.Getenv(badInputOpEnv))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("versions:", versions)
		return
	}

	// The tool itself: newer is refused by Open, current opens again with
	// the data intact, and show changes nothing.
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, "", []state.ModelRecord{{Name: "raw.a", Temporality: "timeless"}}, nil, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ op, want string }{
		{"show", storetest.VersionList(latestVersion())},
		{"newer", storetest.VersionList(latestVersion() + 1)},
		{"show", storetest.VersionList(latestVersion() + 1)},
	} {
		if got, err := badInputSchemaVersion(ctx, path, step.op); err != nil || got != step.want {
			t.Fatalf("%s: versions %q, %v; want %q", step.op, got, err, step.want)
		}
	}
	if _, err := Open(ctx, path); !errors.Is(err, state.ErrNewerSchema) {
		t.Fatalf("Open after newer: %v, want ErrNewerSchema", err)
	}
	if got, err := badInputSchemaVersion(ctx, path, "current"); err != nil || got != storetest.VersionList(latestVersion()) {
		t.Fatalf("current: versions %q, %v", got, err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after current: %v", err)
	}
	defer s.Close()
	if ms, err := s.Models(ctx, ""); err != nil || len(ms) != 1 || ms[0].Name != "raw.a" {
		t.Errorf("models after the round trip: %v, %v", ms, err)
	}
}

// badInputSchemaVersion applies op to the store at path without opening it
// as a Store (Open refuses a newer file) and returns its recorded versions.
func badInputSchemaVersion(ctx context.Context, path, op string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", err // never create a store by accident
	}
	db, err := sql.Open("sqlite", dsn(path, "immediate", false))
	if err != nil {
		return "", err
	}
	defer db.Close()
	switch op {
	case "newer":
		_, err = db.ExecContext(ctx, `INSERT INTO "schema_version" ("version", "name", "applied_at") VALUES (?, 'from_a_newer_bollhav.sql', 0)`, latestVersion()+1)
	case "current":
		_, err = db.ExecContext(ctx, `DELETE FROM "schema_version" WHERE "version" > ?`, latestVersion())
	case "show":
	default:
		err = fmt.Errorf("unknown %s %q: want newer, current or show", badInputOpEnv, op)
	}
	if err != nil {
		return "", err
	}
	var versions sql.NullString
	err = db.QueryRowContext(ctx, `SELECT group_concat("version", ',') FROM (SELECT "version" FROM "schema_version" ORDER BY "version")`).Scan(&versions)
	return versions.String, err
}
