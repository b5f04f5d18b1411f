package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// sqlSpec is a pipeline of data models over the store's own database: a
// sql model copying hourly orders, a daily query write gated on it that
// multiplies by a hardcoded rate, a timeless view over the daily totals and
// a timeless load of a CSV file source. SCHEMA is replaced per test.
const sqlSpec = `models:
  - name: SCHEMA.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: SCHEMA.src
    run:
      sql:
        - CREATE TABLE IF NOT EXISTS {{ this }} (ts TIMESTAMP, amount INTEGER)
        - DELETE FROM {{ this }} WHERE ts >= :since AND ts < :until
        - INSERT INTO {{ this }} SELECT ts, amount FROM {{ ref "SCHEMA.src" }} WHERE ts >= :since AND ts < :until
  - name: SCHEMA.daily
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: SCHEMA.orders
        contract: encapsulate
      - name: SCHEMA.settings
        hardcoded:
          rows: [{rate: 2}]
    run:
      query: SELECT :since AS day, sum(amount) * (SELECT rate FROM {{ ref "SCHEMA.settings" }}) AS total FROM {{ ref "SCHEMA.orders" }} WHERE ts >= :since AND ts < :until
      write: {mode: recreate_partition, column: day}
  - name: SCHEMA.big_days
    pipeline: shop
    temporality: timeless
    upstream:
      - name: SCHEMA.daily
        contract: exists
    run:
      query: SELECT day, total FROM {{ ref "SCHEMA.daily" }} WHERE total > 10
  - name: SCHEMA.event_counts
    pipeline: shop
    temporality: timeless
    upstream:
      - name: SCHEMA.events
        file: {path: drop/events.csv, separator: ";", archive_folder: drop/done}
    run:
      query: SELECT kind, count(*) AS n FROM {{ ref "SCHEMA.events" }} GROUP BY kind
      write: {mode: recreate_partition, column: kind}
`

// sqlFixture builds the spec in a schema of its own, the source table with
// one order per hour for the first six hours (amount = hour + 1), and the
// dropped CSV file.
func sqlFixture(t *testing.T, s state.Store) (*Engine, state.DataStore, string) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	ds := s.(state.DataStore)
	e := runEngine(t, s, strings.ReplaceAll(sqlSpec, "SCHEMA", schema))
	src, _ := ds.QuoteTable(schema, "src")
	stmts := []string{"CREATE TABLE " + src + " (ts TIMESTAMP, amount INTEGER)"}
	if s.Backend() == "postgres" {
		stmts = append([]string{`CREATE SCHEMA "` + schema + `"`}, stmts...)
		t.Cleanup(func() {
			_, _ = ds.RunData(t.Context(), state.DataJob{Kind: state.DataStatements, Statements: []string{`DROP SCHEMA "` + schema + `" CASCADE`}}, nil, t0)
		})
	}
	for h := range 6 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES ('2026-01-01 %02d:00:00', %d)", src, h, h+1))
	}
	if _, err := ds.RunData(t.Context(), state.DataJob{Kind: state.DataStatements, Statements: stmts}, nil, t0); err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(e.opts.SpecDir, "drop"), 0o755))
	must(t, os.WriteFile(filepath.Join(e.opts.SpecDir, "drop", "events.csv"), []byte("kind;at\nclick;2026-01-01\nview;2026-01-01\nclick;2026-01-02\n"), 0o644))
	return e, ds, schema
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// read returns a query's rows as "a|b" strings, with {t:name} quoted.
func read(t *testing.T, ds state.DataStore, schema, query string) []string {
	t.Helper()
	for strings.Contains(query, "{t:") {
		a := strings.Index(query, "{t:")
		b := a + strings.Index(query[a:], "}")
		q, _ := ds.QuoteTable(schema, query[a+3:b])
		query = query[:a] + q + query[b+1:]
	}
	var out []string
	err := ds.ReadData(t.Context(), query, state.Window{}, func(r []any) error {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
		return nil
	})
	must(t, err)
	return out
}

// TestSQLModelsRunEndToEnd: sql statements, a recreate_partition query
// write, a view and a file load run through a real run; each writes what
// its SQL says, rows_written is recorded, and a hardcoded constant and a
// file source are materialised for the SQL that refs them.
func TestSQLModelsRunEndToEnd(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, ds, schema := sqlFixture(t, s)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, e.Executor(), nil)
		must(t, err)
		for _, tr := range res.Tasks {
			if tr.Status != graph.StatusSuccess {
				t.Fatalf("task %s = %s %v, want SUCCESS", tr.Model, tr.Outcome(), tr.Errors)
			}
		}
		// Orders: 24 hourly units, six of them with one row each.
		eqRows(t, "orders", read(t, ds, schema, `SELECT count(*), sum(amount) FROM {t:orders}`), "6|21")
		byModel := map[string]TaskResult{}
		for _, tr := range res.Tasks {
			byModel[strings.TrimPrefix(tr.Model, schema+".")] = tr
		}
		eq(t, "orders applied", byModel["orders"].Applied, 24)
		eq(t, "orders rows_written", *byModel["orders"].RowsWritten, int64(6))
		// Daily: (1+…+6) × the hardcoded rate 2.
		eqRows(t, "daily", read(t, ds, schema, `SELECT total FROM {t:daily}`), "42")
		eqRows(t, "big_days view", read(t, ds, schema, `SELECT total FROM {t:big_days}`), "42")
		eqRows(t, "settings", read(t, ds, schema, `SELECT rate FROM {t:settings}`), "2")
		// The file was loaded, then archived.
		eqRows(t, "event_counts", read(t, ds, schema, `SELECT kind, n FROM {t:event_counts} ORDER BY kind`), "click|2", "view|1")
		if _, err := os.Stat(filepath.Join(e.opts.SpecDir, "drop", "events.csv")); !os.IsNotExist(err) {
			t.Errorf("events.csv still in the drop folder after a successful load (stat: %v)", err)
		}
		if _, err := os.Stat(filepath.Join(e.opts.SpecDir, "drop", "done", "events.csv")); err != nil {
			t.Errorf("events.csv not in the archive folder: %v", err)
		}
	})
}

// TestSQLModelRerunDoesNotDuplicate: bulldozing a window re-runs its units,
// and recreate_partition and the sql model's DELETE keep one copy.
func TestSQLModelRerunDoesNotDuplicate(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, ds, schema := sqlFixture(t, s)
		for range 2 {
			_, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Mode: spec.Bulldozer}, e.Executor(), nil)
			must(t, err)
		}
		eqRows(t, "orders", read(t, ds, schema, `SELECT count(*) FROM {t:orders}`), "6")
		eqRows(t, "daily", read(t, ds, schema, `SELECT count(*), CAST(sum(total) AS INTEGER) FROM {t:daily}`), "1|42")
	})
}

// TestSQLModelFailureWritesNothing: a statement that fails fails its unit
// with the database's message, and the statements before it roll back.
func TestSQLModelFailureWritesNothing(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, ds, schema := sqlFixture(t, s)
		m := e.spec.Model(schema + ".orders")
		m.Run.SQL = append(m.Run.SQL, `INSERT INTO {{ this }} SELECT * FROM no_such_table`)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{m.Name}}, e.Executor(), nil)
		must(t, err)
		tr := res.Tasks[0]
		if tr.Status != graph.StatusFailed || tr.Failed != 24 {
			t.Fatalf("task = %s with %d failed, want FAILED with 24", tr.Outcome(), tr.Failed)
		}
		if len(tr.Errors) == 0 || !strings.Contains(tr.Errors[0], "statement 4") || !strings.Contains(tr.Errors[0], "no_such_table") {
			t.Errorf("errors = %q, want statement 4 and the missing table named", tr.Errors)
		}
		// CREATE TABLE rolled back with the rest.
		err = ds.ReadData(t.Context(), "SELECT 1 FROM "+quoted(ds, schema, "orders"), state.Window{}, func([]any) error { return nil })
		if err == nil {
			t.Error("orders exists: the failed units' CREATE TABLE was not rolled back")
		}
	})
}

// TestSQLTemplateErrors: a ref to an undeclared name fails the unit with a
// message naming it, before anything runs.
func TestSQLTemplateErrors(t *testing.T) {
	m := &spec.Model{Name: "a.b", Schema: "a", Table: "b", Run: spec.Run{Kind: spec.RunSQL}}
	quote := func(p ...string) (string, error) { return strings.Join(p, "."), nil }
	if _, err := spec.RenderSQL(m, spec.Env{}, `SELECT * FROM {{ ref "x.y" }}`, quote); err == nil || !strings.Contains(err.Error(), `"x.y"`) {
		t.Errorf("undeclared ref: err = %v, want it named", err)
	}
	if _, err := spec.RenderSQL(m, spec.Env{}, `SELECT {{ this `, quote); err == nil || !strings.Contains(err.Error(), "a.b") {
		t.Errorf("bad template: err = %v, want the model named", err)
	}
	got, err := spec.RenderSQL(m, spec.Env{Suffix: "pr1"}, `SELECT * FROM {{ this }}`, quote)
	must(t, err)
	eq(t, "this in a suffixed env", got, "SELECT * FROM a_pr1.b")
}

func quoted(ds state.DataStore, parts ...string) string {
	q, _ := ds.QuoteTable(parts...)
	return q
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func eqRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// TestHardcodedReappliedWhenContentChanges: a changed constant (a new
// content_hash) is written again before the next unit reads it; an
// unchanged one is not rewritten.
func TestHardcodedReappliedWhenContentChanges(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, ds, schema := sqlFixture(t, s)
		req := RunRequest{Window: firstDay(), Mode: spec.Bulldozer}
		_, err := e.Run(t.Context(), req, e.Executor(), nil)
		must(t, err)
		eqRows(t, "daily at rate 2", read(t, ds, schema, `SELECT total FROM {t:daily}`), "42")
		daily := e.spec.Model(schema + ".daily")
		daily.Upstream[1].Hardcoded.Rows = []map[string]any{{"rate": 3}}
		_, err = e.Run(t.Context(), req, e.Executor(), nil)
		must(t, err)
		eqRows(t, "daily at rate 3", read(t, ds, schema, `SELECT total FROM {t:daily}`), "63")
		eqRows(t, "settings", read(t, ds, schema, `SELECT rate FROM {t:settings}`), "3")
	})
}

// TestSQLTemplateErrorIsASpecError: a bad template fails the spec load with
// the run block's line, before any store is touched.
func TestSQLTemplateErrorIsASpecError(t *testing.T) {
	_, err := spec.Parse("bollhav.yaml", []byte(`models:
  - name: a.b
    temporality: timeless
    run:
      query: SELECT * FROM {{ ref "x.y" }}
`))
	if err == nil || !strings.Contains(err.Error(), "bollhav.yaml:4:") || !strings.Contains(err.Error(), `"x.y"`) {
		t.Fatalf("ParseSpec = %v, want an error at line 4 naming x.y", err)
	}
}
