package postgres_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// sentinel is a password that must never appear in an error, in any
// spelling.
const sentinel = "Sentinel-pw-7f3a"

// checkOpenError opens dsn and checks the error an operator would see: one
// line, prefixed, naming the problem, and free of every password spelling.
func checkOpenError(t *testing.T, dsn, wantPhrase string, secrets ...string) {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err == nil {
		s.Close()
		t.Fatalf("Open succeeded, want an error containing %q", wantPhrase)
	}
	msg := err.Error()
	t.Log(msg)
	for _, secret := range append(secrets, sentinel) {
		if strings.Contains(msg, secret) {
			t.Errorf("the error shows the password %q: %s", secret, msg)
		}
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("the error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, "postgres: ") || !strings.Contains(msg, wantPhrase) {
		t.Errorf("error = %q, want it to start with \"postgres: \" and say %q", msg, wantPhrase)
	}
}

// TestOpenErrorsHideThePassword: a wrong DSN or an unreachable server is one
// clear line without the password, whichever way the password was given.
// None of these cases needs a server.
func TestOpenErrorsHideThePassword(t *testing.T) {
	envSecret := "Env-" + sentinel
	t.Setenv("PGPASSWORD", envSecret)
	escaped := "p@ss/word:-" + sentinel
	cases := []struct {
		name, dsn, want string
	}{
		{"URL, nothing listening", "postgres://postgres:" + sentinel + "@127.0.0.1:1/test", "cannot reach the server at 127.0.0.1:1"},
		{"URL, escaped password", (&url.URL{Scheme: "postgres", User: url.UserPassword("postgres", escaped), Host: "127.0.0.1:1", Path: "/test"}).String(), "cannot reach"},
		{"URL, unescaped @ and / in the password", "postgres://postgres:" + escaped + "@127.0.0.1:1/test", "percent-encode"},
		{"URL, unescaped @ in the password, valid query", "postgres://postgres:a@" + sentinel + "@127.0.0.1:1/test?application_name=x@y", "percent-encode"},
		{"URL, bad port", "postgres://postgres:" + sentinel + "@127.0.0.1:notaport/test", "invalid DSN"},
		{"URL, malformed host", "postgres://postgres:" + sentinel + "@[::1/test", "invalid DSN"},
		{"URL, bad sslmode", "postgres://postgres:" + sentinel + "@127.0.0.1:1/test?sslmode=bogus", "invalid DSN"},
		{"keywords, nothing listening", "host=127.0.0.1 port=1 user=postgres password=" + sentinel + " dbname=test", "cannot reach"},
		{"keywords, quoted password", "host=127.0.0.1 port=1 user=postgres password='two words " + sentinel + "' dbname=test", "cannot reach"},
		{"keywords, bad port", "host=127.0.0.1 port=notaport user=postgres password=" + sentinel + " dbname=test", "invalid DSN"},
		{"keywords, unterminated quote", "host=127.0.0.1 user=postgres password='" + sentinel, "invalid DSN"},
		{"PGPASSWORD, nothing listening", "postgres://postgres@127.0.0.1:1/test", "cannot reach"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkOpenError(t, c.dsn, c.want, envSecret, escaped, url.UserPassword("", escaped).String(), "word:-"+sentinel, "ss/word")
		})
	}
}

// TestOpenRefusedLogin: the server answers but will not let us in — an
// unknown role, a database that does not exist.
func TestOpenRefusedLogin(t *testing.T) {
	cfg, err := pgconn.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSWORD", "Env-"+sentinel)
	server := fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	t.Run("unknown role", func(t *testing.T) {
		checkOpenError(t, fmt.Sprintf("postgres://bollhav_no_such_role:%s@%s/%s?sslmode=disable", sentinel, server, cfg.Database),
			`refused login as "bollhav_no_such_role"`, "Env-"+sentinel)
	})
	t.Run("unknown database", func(t *testing.T) {
		checkOpenError(t, fmt.Sprintf("user=%s password=%s host=%s port=%d dbname=bollhav_no_such_db sslmode=disable", cfg.User, sentinel, cfg.Host, cfg.Port),
			`database "bollhav_no_such_db" does not exist`, "Env-"+sentinel)
	})
}

// TestOpenRefusesBadSchemaNames: the schema name is checked before anything
// is sent to a server (the DSN here points nowhere).
func TestOpenRefusesBadSchemaNames(t *testing.T) {
	for _, name := range []string{"bad-name", "1abc", `x"y`, "a b", "pg_bollhav", strings.Repeat("s", 56)} {
		_, err := postgres.Open(t.Context(), "postgres://postgres@127.0.0.1:1/test", postgres.Options{Schema: name})
		if err == nil || !strings.Contains(err.Error(), "schema name") {
			t.Errorf("Open(schema %q) = %v, want a schema name error", name, err)
		}
	}
}

// TestOpenQuotesTheSchema: a schema whose name differs from its lower-cased
// form only works if every statement quotes it.
func TestOpenQuotesTheSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := "Mixed_" + pgtest.Schema(t, dsn)
	t.Cleanup(func() { _ = pgtest.Exec(dsn, `DROP SCHEMA IF EXISTS "`+name+`" CASCADE`) })
	s := openStore(t, dsn, name)
	var n int
	if err := pgtest.QueryRow(dsn, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, []any{name}, &n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("schema %q exists %d times, want once, spelled exactly so", name, n)
	}
	if v, err := s.SchemaVersion(t.Context()); err != nil || v < 1 {
		t.Errorf("SchemaVersion = %d, %v", v, err)
	}
	if got := s.Backend(); got != "postgres" {
		t.Errorf("Backend() = %q", got)
	}
}
