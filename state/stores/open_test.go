package stores

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

func TestOpenDefaultsToSQLiteBesideTheSpec(t *testing.T) {
	dir := t.TempDir()
	s, d, err := Open(context.Background(), "", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := filepath.Join(dir, ".bollhav", "state.db")
	if s.Backend() != "sqlite" || d.Path != want {
		t.Fatalf("backend %s at %q, want sqlite at %q", s.Backend(), d.Path, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("the store file was not created: %v", err)
	}
}

func TestOpenSQLitePathForms(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{"sqlite:" + filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")} {
		s, _, err := Open(context.Background(), dsn, dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if s.Backend() != "sqlite" {
			t.Errorf("%s opened %s", dsn, s.Backend())
		}
		s.Close()
	}
}

func TestOpenPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	s, _, err := Open(context.Background(), dsn, t.TempDir(), Options{PostgresSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Backend() != "postgres" {
		t.Fatalf("backend %s", s.Backend())
	}
	if _, err := s.Models(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrorsNeverShowThePassword(t *testing.T) {
	const secret = "S3ntinel-Pa55"
	for _, dsn := range []string{
		"postgres://bollhav:" + secret + "@127.0.0.1:1/nodb?connect_timeout=2",
		"host=127.0.0.1 port=1 user=bollhav password=" + secret + " dbname=nodb connect_timeout=2",
		"mysql://root:" + secret + "@localhost/db",
	} {
		_, _, err := Open(context.Background(), dsn, t.TempDir(), Options{})
		if err == nil {
			t.Fatalf("%s opened", strings.ReplaceAll(dsn, secret, "***"))
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", strings.ReplaceAll(err.Error(), secret, "***"))
		}
	}
}
