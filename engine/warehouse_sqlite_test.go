package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite/sqlitetest"
	"github.com/bollhav/bollhav/state/stores"
)

// whSQLiteSpec is whSpec's first two models on a warehouse that is a SQLite
// file: a recreate_partition query and an append-only sql model that
// doubles its rows whenever a window runs twice.
const whSQLiteSpec = `defaults:
  connection: {dsn_env_var: ENV}
models:
  - name: wh.orders
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: src.orders}]
    run:
      query: SELECT ts, amount FROM {{ ref "src.orders" }} WHERE ts >= :since AND ts < :until
      write: {mode: recreate_partition, column: ts}
  - name: wh.log
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: src.orders}]
    run:
      sql:
        - INSERT INTO {{ this }} SELECT ts, amount FROM {{ ref "src.orders" }} WHERE ts >= :since AND ts < :until
`

// TestWarehouseOnASQLiteFile: a model's connection may name a SQLite file.
// Its rows land there, once per window, each applied unit with the ledger
// row of the claim that applied it, with the state store on either
// backend; a bulldozer rerun runs every window again and the idempotent
// write holds its rows once.
func TestWarehouseOnASQLiteFile(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		path := filepath.Join(t.TempDir(), "warehouse.db")
		// src.orders: two rows an hour for the first six hours, amounts
		// 10h and 10h+1 (306 in all), as SQLite datetime text.
		sqlitetest.Exec(t, path, `CREATE TABLE "src.orders" (ts TEXT, amount INTEGER);
			WITH RECURSIVE h(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM h WHERE n < 5)
			INSERT INTO "src.orders" SELECT datetime('2026-01-01', '+' || n || ' hours', '+' || (m * 30) || ' minutes'), 10 * n + m
			FROM h, (SELECT 0 AS m UNION ALL SELECT 1);
			CREATE TABLE "wh.log" (ts TEXT, amount INTEGER);`)
		env := strings.ToUpper(relName("BOLLHAV_TEST_WH_"))
		t.Setenv(env, path)
		dir := t.TempDir()
		sp, err := spec.Load(writeSpec(t, dir, map[string]string{"bollhav.yaml": strings.ReplaceAll(whSQLiteSpec, "ENV", env)}))
		must(t, err)
		wh := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
		t.Cleanup(func() { _ = wh.Close() })
		e := New(s, sp, Options{SpecDir: dir, Actor: "test", Warehouses: wh, Now: func() time.Time { return t0.Add(48 * time.Hour) }})
		run := func(mode spec.StateMode) {
			t.Helper()
			res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Mode: mode, Workers: 4}, e.Executor(), nil)
			must(t, err)
			for _, tr := range res.Tasks {
				if tr.Failed > 0 {
					t.Fatalf("%s failed: %v", tr.Model, tr.Errors)
				}
			}
		}
		perHour := func() string {
			return strings.Join(whQuery(t, path, `SELECT 'h' || CAST(strftime('%H', ts) AS INTEGER) || '=' || count(*) FROM "wh.log" GROUP BY strftime('%H', ts) ORDER BY min(ts)`), " ")
		}
		run("")
		if got := whQuery(t, path, `SELECT count(*), sum(amount) FROM "wh.orders"`); got[0] != "12|306" {
			t.Errorf("wh.orders = %v", got)
		}
		if got := perHour(); got != twoEach(6) {
			t.Errorf("wh.log per hour = %s", got)
		}
		for _, m := range []string{"wh.orders", "wh.log"} {
			if st := statuses(t, s, m); st[state.Applied] != 24 {
				t.Errorf("%s statuses = %v, want 24 applied", m, st)
			}
			checkLedger(t, e, path, m)
		}
		storeHasNoModelTables(t, s)

		run(spec.Bulldozer)
		if got := whQuery(t, path, `SELECT count(*), sum(amount) FROM "wh.orders"`); got[0] != "12|306" {
			t.Errorf("after a bulldozer rerun wh.orders = %v", got)
		}
		if got := perHour(); got != strings.ReplaceAll(twoEach(6), "=2", "=4") {
			t.Errorf("after a bulldozer rerun wh.log per hour = %s, want each hour run once more", got)
		}
		checkLedger(t, e, path, "wh.log")
	})
}
