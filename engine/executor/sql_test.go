package executor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// The data executor's tests run its units the way they run for a user:
// through an engine's run (engine.New, Run, the engine's Executor), so a
// unit's data and its recorded state are checked together.

var t0 = enginetest.T0

func hours(a, b int) state.Window { return enginetest.Hours(a, b) }
func days(a, b int) state.Window  { return enginetest.Days(a, b) }

func firstDay() *state.Window { w := days(0, 1); return &w }

// clock is the engines' clock: two days after 2026-01-01, so the hourly
// models' contract range is 48 windows.
func clock() time.Time { return t0.Add(48 * time.Hour) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// eq and eqRows are enginetest's Eq and EqRows, by the names these tests use.
func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	enginetest.Eq(t, what, got, want)
}

var eqRows = enginetest.EqRows

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

// sqlWorld is sqlSpec in a schema of its own: the engine, its spec (a
// test changes a model in place, as the engine's own spec), the store's
// database, the schema and the spec directory.
type sqlWorld struct {
	e      *engine.Engine
	sp     *spec.Spec
	ds     state.DataStore
	schema string
	dir    string
}

// sqlFixture builds the spec in a schema of its own, the source table with
// one order per hour for the first six hours (amount = hour + 1), and the
// dropped CSV file.
func sqlFixture(t *testing.T, s state.Store) *sqlWorld {
	t.Helper()
	w := &sqlWorld{schema: enginetest.UniqueName("t_"), ds: s.(state.DataStore), dir: t.TempDir()}
	w.sp = enginetest.Parse(t, strings.ReplaceAll(sqlSpec, "SCHEMA", w.schema))
	w.e = engine.New(s, w.sp, engine.Options{SpecDir: w.dir, Actor: "test", Now: clock})
	src, _ := w.ds.QuoteTable(w.schema, "src")
	stmts := []string{"CREATE TABLE " + src + " (ts TIMESTAMP, amount INTEGER)"}
	if s.Backend() == "postgres" {
		stmts = append([]string{`CREATE SCHEMA "` + w.schema + `"`}, stmts...)
		t.Cleanup(func() {
			_, _ = w.ds.RunData(t.Context(), state.DataJob{Kind: state.DataStatements, Statements: []string{`DROP SCHEMA "` + w.schema + `" CASCADE`}}, nil, t0)
		})
	}
	for h := range 6 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES ('2026-01-01 %02d:00:00', %d)", src, h, h+1))
	}
	if _, err := w.ds.RunData(t.Context(), state.DataJob{Kind: state.DataStatements, Statements: stmts}, nil, t0); err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(w.dir, "drop"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.dir, "drop", "events.csv"), []byte("kind;at\nclick;2026-01-01\nview;2026-01-01\nclick;2026-01-02\n"), 0o644))
	return w
}

// read returns a query's rows as "a|b" strings, with {t:name} quoted.
func (w *sqlWorld) read(t *testing.T, query string) []string {
	t.Helper()
	for strings.Contains(query, "{t:") {
		a := strings.Index(query, "{t:")
		b := a + strings.Index(query[a:], "}")
		query = query[:a] + w.quoted(query[a+3:b]) + query[b+1:]
	}
	return enginetest.Rows(t, w.ds, query)
}

func (w *sqlWorld) quoted(table string) string {
	q, _ := w.ds.QuoteTable(w.schema, table)
	return q
}

// run runs req with the engine's own executor.
func (w *sqlWorld) run(t *testing.T, req engine.RunRequest) *engine.RunResult {
	t.Helper()
	res, err := w.e.Run(t.Context(), req, w.e.Executor(), nil)
	must(t, err)
	return res
}

// TestSQLModelsRunEndToEnd: sql statements, a recreate_partition query
// write, a view and a file load run through a real run; each writes what
// its SQL says, rows_written is recorded, and a hardcoded constant and a
// file source are materialised for the SQL that refs them.
func TestSQLModelsRunEndToEnd(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		w := sqlFixture(t, s)
		res := w.run(t, engine.RunRequest{Window: firstDay()})
		for _, tr := range res.Tasks {
			if tr.Status != graph.StatusSuccess {
				t.Fatalf("task %s = %s %v, want SUCCESS", tr.Model, tr.Outcome(), tr.Errors)
			}
		}
		// Orders: 24 hourly units, six of them with one row each.
		eqRows(t, "orders", w.read(t, `SELECT count(*), sum(amount) FROM {t:orders}`), "6|21")
		byModel := map[string]engine.TaskResult{}
		for _, tr := range res.Tasks {
			byModel[strings.TrimPrefix(tr.Model, w.schema+".")] = tr
		}
		eq(t, "orders applied", byModel["orders"].Applied, 24)
		eq(t, "orders rows_written", *byModel["orders"].RowsWritten, int64(6))
		// Daily: (1+…+6) × the hardcoded rate 2.
		eqRows(t, "daily", w.read(t, `SELECT total FROM {t:daily}`), "42")
		eqRows(t, "big_days view", w.read(t, `SELECT total FROM {t:big_days}`), "42")
		eqRows(t, "settings", w.read(t, `SELECT rate FROM {t:settings}`), "2")
		// The file was loaded, then archived.
		eqRows(t, "event_counts", w.read(t, `SELECT kind, n FROM {t:event_counts} ORDER BY kind`), "click|2", "view|1")
		if _, err := os.Stat(filepath.Join(w.dir, "drop", "events.csv")); !os.IsNotExist(err) {
			t.Errorf("events.csv still in the drop folder after a successful load (stat: %v)", err)
		}
		if _, err := os.Stat(filepath.Join(w.dir, "drop", "done", "events.csv")); err != nil {
			t.Errorf("events.csv not in the archive folder: %v", err)
		}
	})
}

// TestSQLModelRerunDoesNotDuplicate: bulldozing a window re-runs its units,
// and recreate_partition and the sql model's DELETE keep one copy.
func TestSQLModelRerunDoesNotDuplicate(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		w := sqlFixture(t, s)
		for range 2 {
			w.run(t, engine.RunRequest{Window: firstDay(), Mode: spec.Bulldozer})
		}
		eqRows(t, "orders", w.read(t, `SELECT count(*) FROM {t:orders}`), "6")
		eqRows(t, "daily", w.read(t, `SELECT count(*), CAST(sum(total) AS INTEGER) FROM {t:daily}`), "1|42")
	})
}

// TestSQLModelFailureWritesNothing: a statement that fails fails its unit
// with the database's message, and the statements before it roll back.
func TestSQLModelFailureWritesNothing(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		w := sqlFixture(t, s)
		m := w.sp.Model(w.schema + ".orders")
		m.Run.SQL = append(m.Run.SQL, `INSERT INTO {{ this }} SELECT * FROM no_such_table`)
		res := w.run(t, engine.RunRequest{Window: firstDay(), Models: []string{m.Name}})
		tr := res.Tasks[0]
		if tr.Status != graph.StatusFailed || tr.Failed != 24 {
			t.Fatalf("task = %s with %d failed, want FAILED with 24", tr.Outcome(), tr.Failed)
		}
		if len(tr.Errors) == 0 || !strings.Contains(tr.Errors[0], "statement 4") || !strings.Contains(tr.Errors[0], "no_such_table") {
			t.Errorf("errors = %q, want statement 4 and the missing table named", tr.Errors)
		}
		// CREATE TABLE rolled back with the rest.
		err := w.ds.ReadData(t.Context(), "SELECT 1 FROM "+w.quoted("orders"), state.Window{}, func([]any) error { return nil })
		if err == nil {
			t.Error("orders exists: the failed units' CREATE TABLE was not rolled back")
		}
	})
}

// TestHardcodedReappliedWhenContentChanges: a changed constant (a new
// content_hash) is written again before the next unit reads it; an
// unchanged one is not rewritten.
func TestHardcodedReappliedWhenContentChanges(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		w := sqlFixture(t, s)
		req := engine.RunRequest{Window: firstDay(), Mode: spec.Bulldozer}
		w.run(t, req)
		eqRows(t, "daily at rate 2", w.read(t, `SELECT total FROM {t:daily}`), "42")
		daily := w.sp.Model(w.schema + ".daily")
		daily.Upstream[1].Hardcoded.Rows = []map[string]any{{"rate": 3}}
		w.run(t, req)
		eqRows(t, "daily at rate 3", w.read(t, `SELECT total FROM {t:daily}`), "63")
		eqRows(t, "settings", w.read(t, `SELECT rate FROM {t:settings}`), "3")
	})
}
