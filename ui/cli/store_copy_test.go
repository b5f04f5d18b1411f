package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite/sqlitetest"
)

// copyTarget is an empty store of the other backend than w's: its DSN, and
// the schema a PostgreSQL one lives in ("" for SQLite).
func copyTarget(t *testing.T, w odWorld) (dsn, schema string) {
	t.Helper()
	if strings.HasPrefix(w.dsn, "postgres") {
		return filepath.Join(t.TempDir(), "copy.db"), ""
	}
	dsn = pgtest.DSN(t)
	return dsn, pgtest.Schema(t, dsn)
}

// on runs the CLI against the store dsn (a PostgreSQL one in schema).
func (w odWorld) on(t *testing.T, dsn, schema string, args ...string) (int, string, string) {
	t.Helper()
	if schema != "" {
		t.Setenv("BOLLHAV_PG_SCHEMA", schema)
	}
	return run(t, append([]string{args[0], "--spec", w.spec, "--dsn", dsn}, args[1:]...)...)
}

// TestStoreCopyMovesTheState: after a run, store copy moves the state into
// an empty store of the other backend. The new store answers status,
// units, incidents and why exactly as the old one did; the old one still
// answers reads (status says where it went) and refuses run, apply, mark
// and worker, naming the new store. A snapshot of the new store, back in
// the first backend, answers the same, keeps an identity of its own and
// refuses writes, while the new store goes on running. On both backends
// as the source.
func TestStoreCopyMovesTheState(t *testing.T) {
	odEach(t, func(t *testing.T, w odWorld) {
		srcSchema := ""
		if strings.HasPrefix(w.dsn, "postgres") {
			srcSchema = os.Getenv("BOLLHAV_PG_SCHEMA")
		}
		w.write(t, odSpec+`  - {name: core.broken, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["false"]}}
`)
		if code, _, errOut := run(t, w.args("run", "--since", "2026-01-01", "--until", "2026-01-03")...); code != ExitFailure {
			t.Fatalf("the run: exit %d, want 1 (core.broken fails): %s", code, errOut)
		}
		const asOf = "2026-01-03T00:00:00Z" // ages and gates read alike on both
		reads := [][]string{
			{"status", "-o", "json", "--as-of", asOf},
			{"units", "raw.orders", "-o", "json", "--as-of", asOf},
			{"units", "core.broken", "-o", "json", "--as-of", asOf},
			{"incidents", "-o", "json", "--as-of", asOf},
			{"why", "core.daily", "--at", "2026-01-01T00:00:00Z", "-o", "json", "--as-of", asOf},
		}
		read := func(dsn, schema string) []string {
			var out []string
			for _, r := range reads {
				code, o, e := w.on(t, dsn, schema, r...)
				if code != 0 {
					t.Fatalf("%v on %s: exit %d: %s", r, dsn, code, e)
				}
				out = append(out, o)
			}
			return out
		}
		before := read(w.dsn, srcSchema)

		to, toSchema := copyTarget(t, w)
		args := []string{"store", "copy", "--to", to, "--yes", "-o", "json"}
		if toSchema != "" {
			args = append(args, "--to-schema", toSchema)
		}
		code, out, errOut := w.on(t, w.dsn, srcSchema, args...)
		if code != 0 {
			t.Fatalf("store copy: exit %d: %s", code, errOut)
		}
		var res storeCopyJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("store copy -o json: %v\n%s", err, out)
		}
		// By hand: 48 hours of raw.orders, 2 days each of core.daily and
		// core.broken; core.broken's two failed days, one attempt each.
		if res.Mode != "move" || res.Rows["models"] != 3 || res.Rows["units"] != 52 || res.Rows["runs"] != 1 || res.Rows["attempts"] != 2 {
			t.Errorf("store copy's result %+v, want a move of 3 models, 52 units, 1 run and 2 attempts", res)
		}
		after := read(to, toSchema)
		for i := range reads {
			if after[i] != before[i] {
				t.Errorf("%v on the new store differs from the old one's:\n got  %s\n want %s", reads[i], after[i], before[i])
			}
		}

		code, out, _ = w.on(t, w.dsn, srcSchema, "status")
		if code != 0 || !strings.Contains(out, "retired: this store was moved to ") {
			t.Errorf("status on the old store: exit %d, want it to say where the store moved:\n%s", code, out)
		}
		for _, write := range [][]string{
			{"run", "--since", "2026-01-01", "--until", "2026-01-02"},
			{"apply"},
			{"mark", "raw.orders", "--since", "2026-01-01", "--until", "2026-01-02", "--status", "pending"},
			{"worker"},
		} {
			code, _, errOut := w.on(t, w.dsn, srcSchema, write...)
			if code != ExitUsage || !strings.Contains(errOut, "refused: this store was moved to") {
				t.Errorf("%v on the old store: exit %d, stderr %q; want exit 2 naming the new store", write, code, errOut)
			}
		}

		snapDSN, snapSchema := w.dsn, srcSchema
		if srcSchema != "" {
			snapSchema = pgtest.Schema(t, w.dsn)
		} else {
			snapDSN = filepath.Join(t.TempDir(), "snapshot.db")
		}
		args = []string{"store", "copy", "--to", snapDSN, "--snapshot"}
		if snapSchema != "" {
			args = append(args, "--to-schema", snapSchema)
		}
		code, out, errOut = w.on(t, to, toSchema, args...)
		if code != 0 || !strings.Contains(out, "is a read-only snapshot with an identity of its own") {
			t.Fatalf("store copy --snapshot: exit %d: %s%s", code, out, errOut)
		}
		for i, got := range read(snapDSN, snapSchema) {
			want := before[i]
			if i == 0 {
				// The snapshot's status says it is one; the rest is the same.
				got, want = withoutRetired(t, got), withoutRetired(t, want)
			}
			if got != want {
				t.Errorf("%v on the snapshot differs:\n got  %s\n want %s", reads[i], got, want)
			}
		}
		code, _, errOut = w.on(t, snapDSN, snapSchema, "apply")
		if code != ExitUsage || !strings.Contains(errOut, "read-only snapshot of") {
			t.Errorf("apply on the snapshot: exit %d, stderr %q; want it refused", code, errOut)
		}
		if code, _, errOut := w.on(t, to, toSchema, "run", "--since", "2026-01-03", "--until", "2026-01-04"); code != ExitOK && code != ExitFailure {
			t.Errorf("a run on the new store after its snapshot: exit %d: %s", code, errOut)
		}
	})
}

// TestStoreCopyBadInput: what store copy refuses, each with exit 2, one
// line that names the problem, and the source left live.
func TestStoreCopyBadInput(t *testing.T) {
	dir := t.TempDir()
	w := odWorld{spec: filepath.Join(dir, "bollhav.yaml"), dsn: filepath.Join(dir, "state.db")}
	w.write(t, odSpec)
	w.ok(t, w.args("run", "--since", "2026-01-01", "--until", "2026-01-02")...)
	full := filepath.Join(dir, "full.db")
	w.ok(t, "apply", "--spec", w.spec, "--dsn", full)
	newer := filepath.Join(dir, "newer.db")
	createEmptyStore(t, newer)
	sqlitetest.Exec(t, newer, `INSERT INTO "schema_version" ("version", "name", "applied_at") VALUES (999, '0999_future.sql', 0)`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"store"}, "bollhav store copy --to DSN"},
		{"an unknown subcommand", []string{"store", "move", "--to", "x.db"}, "bollhav store copy --to DSN"},
		{"no --to", []string{"store", "copy"}, "--to is required"},
		{"the source itself", []string{"store", "copy", "--to", w.dsn, "--yes"}, "--to names the store being copied"},
		{"a target holding state", []string{"store", "copy", "--to", full, "--yes"}, "already holds state (2 models, 0 units, 0 runs"},
		{"a target of a newer bollhav", []string{"store", "copy", "--to", newer, "--yes"}, "newer"},
		{"an unreachable target", []string{"store", "copy", "--to", "postgres://u:S3cret-pw@127.0.0.1:1/db?connect_timeout=2", "--yes"}, "the target"},
		{"a move without a terminal or --yes", []string{"store", "copy", "--to", filepath.Join(dir, "new.db")}, "pass --yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := w.on(t, w.dsn, "", tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut+out, "S3cret-pw") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 saying %q, and no password", code, out, errOut, tc.want)
			}
			if code, out, _ := w.on(t, w.dsn, "", "status"); code != 0 || strings.Contains(out, "retired") {
				t.Errorf("the source after a refused copy: exit %d\n%s", code, out)
			}
		})
	}
}

// withoutRetired is status -o json's document without its "retired" field.
func withoutRetired(t *testing.T, doc string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("status -o json: %v", err)
	}
	delete(m, "retired")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCopyBarRedrawsOneLine: on a terminal the copy's progress is one line
// redrawn in place (each drawing starts with a carriage return), its bar
// filled as far as the units copied, ended by a newline; off a terminal
// (no writer) nothing is drawn.
func TestCopyBarRedrawsOneLine(t *testing.T) {
	var buf strings.Builder
	b := newCopyBar(&buf)
	b.show(0, 20_000)
	b.last = b.last.Add(-time.Second) // the next drawing is due
	b.show(10_000, 20_000)
	b.show(20_000, 20_000)
	b.done()
	out := ansi.Strip(buf.String())
	draws := strings.Split(strings.TrimSuffix(out, "\n"), "\r")[1:]
	if len(draws) != 3 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("%q: want three drawings on one line, then a newline", out)
	}
	for i, want := range []struct {
		full  int
		count string
	}{{0, "0/20,000 units"}, {20, "10,000/20,000 units"}, {40, "20,000/20,000 units"}} {
		if got := strings.Count(draws[i], "█"); got != want.full || !strings.HasSuffix(draws[i], " "+want.count) {
			t.Errorf("drawing %d %q: %d of 40 filled, want %d, ending %q", i, draws[i], got, want.full, want.count)
		}
	}
	silent := newCopyBar(nil)
	silent.show(1, 2)
	silent.done()
}
