package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// cycleSpec is a spec lint refuses: a.x runs after b.y and b.y after a.x.
const cycleSpec = `models:
  - {name: a.x, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: b.y}], run: {command: ["true"]}}
  - {name: b.y, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: a.x}], run: {command: ["true"]}}
`

// TestStatusOnASpecThatDoesNotLint: status on a spec with a task cycle
// still lists its models, but first warns, in one line on stderr, that lint
// finds an error apply and run refuse, naming it; and it creates no store —
// the store that is not there reads as empty, and says so.
func TestStatusOnASpecThatDoesNotLint(t *testing.T) {
	sp := writeSpec(t, cycleSpec)
	code, out, errOut := run(t, "status", "--spec", sp)
	if code != ExitOK {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	containsAll(t, "status", out, "a.x", "b.y", "not registered")
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "bollhav status: warning: the spec has 1 lint error, which apply and run refuse (bollhav lint lists them): "+sp+":2:5: task-cycle:") ||
		!strings.HasSuffix(lines[0], "a.x → b.y → a.x") ||
		lines[1] != "bollhav status: no state store at sqlite:"+filepath.Join(filepath.Dir(sp), ".bollhav", "state.db")+
			" yet (nothing was applied or run with it): read as empty, and not created; apply or run creates it" {
		t.Errorf("stderr:\n%s", errOut)
	}
	noStoreBeside(t, sp)
	// A spec lint passes gets no warning.
	clean := writeSpec(t, smallSpec)
	if _, _, errOut := run(t, "status", "--spec", clean); strings.Contains(errOut, "warning") {
		t.Errorf("a clean spec is warned about:\n%s", errOut)
	}
}

// TestReadOnlyCommandsCreateNoStore: status, units, incidents, blocked,
// why and plan on a project nothing was run in answer as for an empty store
// and leave no store behind (before, each created .bollhav/state.db); watch,
// which would wait on a store nothing writes to, is refused in one line.
// Apply creates the store, after which status reads it without a note.
func TestReadOnlyCommandsCreateNoStore(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	for _, args := range [][]string{
		{"status"},
		{"status", "-o", "json"},
		{"units", "raw.a"},
		{"incidents"},
		{"blocked"},
		{"blocked", "--recheck"},
		{"why", "raw.a", "--at", "2026-01-01"},
		{"plan", "--since", "2026-01-01", "--until", "2026-01-02"},
	} {
		code, out, errOut := run(t, append(args, "--spec", sp)...)
		if code != ExitOK || out == "" || !strings.Contains(errOut, "no state store at sqlite:") {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", args, code, out, errOut)
		}
		noStoreBeside(t, sp)
	}
	code, out, errOut := run(t, "watch", "--spec", sp)
	if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "bollhav watch: no state store at sqlite:") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("watch: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	noStoreBeside(t, sp)
	if code, _, errOut := run(t, "apply", "--spec", sp); code != ExitOK {
		t.Fatalf("apply: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run(t, "status", "--spec", sp); code != ExitOK || errOut != "" {
		t.Errorf("status after apply: exit %d, stderr %q", code, errOut)
	}
}

// TestReadOnlyCommandsCreateNoPostgresSchema: on PostgreSQL, status in a
// schema that holds no store creates none (before, it made the schema and
// every table) and says so, naming the schema (*PG*).
func TestReadOnlyCommandsCreateNoPostgresSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	t.Setenv("BOLLHAV_PG_SCHEMA", schema)
	sp := writeSpec(t, smallSpec)
	code, out, errOut := run(t, "status", "--spec", sp, "--dsn", dsn)
	if code != ExitOK || !strings.Contains(out, "raw.a") || !strings.Contains(errOut, "(schema "+schema+") yet") {
		t.Errorf("status: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	var n int
	if err := pgtest.QueryRow(dsn, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, []any{schema}, &n); err != nil || n != 0 {
		t.Errorf("status created schema %s (%d, %v)", schema, n, err)
	}
}

// noStoreBeside fails the test when .bollhav exists beside the spec sp.
func noStoreBeside(t *testing.T, sp string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(filepath.Dir(sp), ".bollhav")); !os.IsNotExist(err) {
		t.Fatalf("a command that only reads created .bollhav beside the spec (stat: %v)", err)
	}
}

// createEmptyStore creates the SQLite store at path, holding nothing (a
// command that only reads no longer does).
func createEmptyStore(t *testing.T, path string) {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
