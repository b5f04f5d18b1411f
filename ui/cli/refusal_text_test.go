package cli

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// The lines below are what an operator reads when bollhav refuses to change
// anything (--read-only) or cannot reach its store. Scripts match them and
// runbooks quote them, so they are pinned word for word: a change to one
// must be a decision, made here, not the side effect of a refactor. The
// bad-input table checks that such lines name their problem; these tests
// check that the words stay the same.

// refusalSpec has a temporal and a timeless model, so that mark is refused
// with and without a window.
const refusalSpec = `models:
  - {name: raw.a, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: meta.t, pipeline: core, temporality: timeless, run: {command: ["true"]}}
`

// TestReadOnlyRefusalsKeepTheirWords: every command that would change state
// refuses under --read-only with exactly these words, exit 2, nothing on
// stdout.
func TestReadOnlyRefusalsKeepTheirWords(t *testing.T) {
	sp := writeSpec(t, refusalSpec)
	db := filepath.Join(filepath.Dir(sp), "state.db")
	win := []string{"--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T02:00:00Z"}
	for _, args := range [][]string{{"apply"}, append([]string{"run", "raw.a"}, win...)} {
		if code, _, errOut := run(t, append(args, "--spec", sp, "--dsn", db)...); code != ExitOK {
			t.Fatalf("seeding with %v: exit %d: %s", args, code, errOut)
		}
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"apply"}, "bollhav apply: apply refused: bollhav is read-only (--read-only)\n"},
		{append([]string{"run", "raw.a"}, win...), "bollhav run: bulldozer refused: bollhav is read-only (--read-only); nothing was changed\n"},
		{append([]string{"run", "raw.a", "--mode", "discover"}, win...), "bollhav run: discover refused: bollhav is read-only (--read-only); nothing was changed\n"},
		{append([]string{"run", "raw.a", "--mode", "torch", "--yes"}, win...), "bollhav run: torch refused: bollhav is read-only (--read-only); nothing was changed\n"},
		{[]string{"run", "--retry", "1"}, "bollhav run: retry refused: bollhav is read-only (--read-only); nothing was changed\n"},
		{append([]string{"mark", "raw.a", "--status", "applied"}, win...), "bollhav mark: mark refused: bollhav is read-only (--read-only); nothing was changed\n"},
		{[]string{"mark", "meta.t", "--status", "applied"}, "bollhav mark: mark refused: bollhav is read-only (--read-only); nothing was changed\n"},
		// A worker registers the spec before it claims anything: that is
		// what is refused.
		{[]string{"worker"}, "bollhav worker: apply refused: bollhav is read-only (--read-only)\n"},
		// The demo has a spec and a store of its own.
		{[]string{"demo", "--dir", t.TempDir()}, "bollhav demo: the demo writes its project and runs it; drop --read-only\nRun 'bollhav help demo' for usage.\n"},
	}
	for _, c := range cases {
		args := append(c.args, "--read-only")
		if c.args[0] != "demo" {
			args = append(args, "--spec", sp, "--dsn", db)
		}
		code, out, errOut := run(t, args...)
		if code != ExitUsage || out != "" || errOut != c.want {
			t.Errorf("bollhav %s:\nexit %d, stdout %q\nstderr %q\nwant exit 2, no stdout and\nstderr %q", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}

// TestStoreConnectionErrorsKeepTheirWords: a DSN bollhav cannot use, or a
// server it cannot reach or that will not have it, is one line in exactly
// these words. {addr} stands for the address of a server that accepts
// connections and never answers, {server} for the test PostgreSQL server,
// {dir} for the spec's folder.
func TestStoreConnectionErrorsKeepTheirWords(t *testing.T) {
	sp := writeSpec(t, refusalSpec)
	silent := silentServer(t)
	cases := []struct {
		name, dsn, want string
		server          bool // needs the test PostgreSQL server
	}{
		{"nothing listening", "postgres://u@127.0.0.1:1/db?connect_timeout=2",
			"opening state store postgres://u@127.0.0.1:1/db?connect_timeout=2: postgres: cannot reach the server at 127.0.0.1:1: connect: connection refused", false},
		{"nothing listening, keywords", "host=127.0.0.1 port=1 user=u connect_timeout=2",
			"opening state store host=127.0.0.1 port=1 user=u connect_timeout=2: postgres: cannot reach the server at 127.0.0.1:1: connect: connection refused", false},
		{"a server that never answers", "postgres://u@{addr}/db?connect_timeout=1",
			"opening state store postgres://u@{addr}/db?connect_timeout=1: postgres: cannot reach the server at {addr}: timed out", false},
		{"unknown host", "postgres://u@no-such-host.invalid/db?connect_timeout=2",
			`opening state store postgres://u@no-such-host.invalid/db?connect_timeout=2: postgres: cannot reach the server at no-such-host.invalid:5432: unknown host "no-such-host.invalid"`, false},
		{"password with a reserved character", "postgres://u:p@ss@127.0.0.1:1/db",
			"opening state store postgres://u:xxxxx@127.0.0.1:1/db: postgres: invalid DSN: the password holds a character a URL reserves; percent-encode @ / : ? # in it (%40 %2F %3A %3F %23)", false},
		{"URL that does not parse", "postgres://u@[::1/db",
			"invalid PostgreSQL URL postgres://u@[::1/db: it does not parse as a URL (percent-encode special characters in the user name and password)", false},
		{"unknown scheme", "mysql://root@localhost/db",
			`unsupported DSN scheme "mysql": use postgres://…, postgresql://…, host=… dbname=…, sqlite:PATH or a file path`, false},
		{"keyword without a value", "host=127.0.0.1 port",
			`invalid PostgreSQL DSN: keyword "port" has no '='`, false},
		{"unknown keyword", "host=127.0.0.1 port=1 connect_timeout=2 hots=db.example",
			`invalid PostgreSQL DSN: unknown keyword "hots" (did you mean "host"?); a server setting goes in options='-c name=value'`, false},
		{"sqlite: without a file", "sqlite:",
			"invalid DSN sqlite: it names no file; write sqlite:PATH", false},
		{"SQLite path that is a directory", "{dir}",
			"opening state store sqlite:{dir}: sqlite: {dir} is a directory; name the store's file in it, such as {dir}/state.db", false},
		{"SQLite path that is not a database", "{dir}/bollhav.yaml",
			"opening state store sqlite:{dir}/bollhav.yaml: sqlite: {dir}/bollhav.yaml: read schema version: file is not a database (26)", false},
		{"SQLite path with a query", "{dir}/s.db?mode=ro",
			`opening state store sqlite:{dir}/s.db?mode=ro: sqlite: path "{dir}/s.db?mode=ro" contains '?' or '#', which the driver would read as options`, false},
		{"refused login", "postgres://bollhav_no_such_role@{server}/test?sslmode=disable",
			`opening state store postgres://bollhav_no_such_role@{server}/test?sslmode=disable: postgres: the server at {server} refused login as "bollhav_no_such_role": role "bollhav_no_such_role" does not exist`, true},
		{"database the server does not have", "postgres://postgres@{server}/bollhav_no_such_db?sslmode=disable",
			`opening state store postgres://postgres@{server}/bollhav_no_such_db?sslmode=disable: postgres: database "bollhav_no_such_db" does not exist on the server at {server}`, true},
		{"setting the server does not know", "postgres://postgres@{server}/test?sslmode=disable&bollhav_no_such_setting=1",
			`opening state store postgres://postgres@{server}/test?sslmode=disable&bollhav_no_such_setting=1: postgres: the server at {server} refused the connection: unrecognized configuration parameter "bollhav_no_such_setting"`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server := ""
			if c.server {
				server = pgServer(t)
			}
			fill := strings.NewReplacer("{addr}", silent, "{server}", server, "{dir}", filepath.Dir(sp)).Replace
			dsn, want := fill(c.dsn), "bollhav status: "+fill(c.want)+"\n"
			code, out, errOut := run(t, "status", "--spec", sp, "--dsn", dsn)
			if code != ExitUsage || out != "" || errOut != want {
				t.Errorf("bollhav status --dsn %s:\nexit %d, stdout %q\nstderr %q\nwant exit 2, no stdout and\nstderr %q", dsn, code, out, errOut, want)
			}
		})
	}
}

// silentServer listens on a free local port, accepts connections and never
// answers them, until the test ends; it returns the address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// pgServer is the test PostgreSQL server's host:port, with the user postgres
// and the database test that the cases name; the test is skipped without
// one (failed under BOLLHAV_REQUIRE_PG=1).
func pgServer(t *testing.T) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "postgres" || cfg.Database != "test" {
		t.Skipf("the cases log in as postgres to the database test; BOLLHAV_TEST_DSN names %s@%s", cfg.User, cfg.Database)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}
