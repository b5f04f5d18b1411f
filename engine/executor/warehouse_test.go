package executor_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/state/sqlite/sqlitetest"
	"github.com/bollhav/bollhav/state/stores"
)

// The warehouse executor's tests: units whose data lives in a warehouse
// database apart from the state store (enginetest.WarehouseSpec), run by
// an engine. The engine's crash tests of warehouse units (a worker killed
// between the two commits, a zombie) stay with its reliability suite.

// whEngine is an engine on s with yaml (ENV the variable env), written to
// a spec file, and a warehouse pool registry of its own; and the spec.
func whEngine(t *testing.T, s state.Store, yaml, env string) (*engine.Engine, *spec.Spec) {
	t.Helper()
	sp, dir, _ := enginetest.WarehouseSpecFile(t, yaml, env)
	wh := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	t.Cleanup(func() { _ = wh.Close() })
	return engine.New(s, sp, engine.Options{SpecDir: dir, Actor: "test", Warehouses: wh, Now: clock}), sp
}

// whRun runs req with e's executor and fails t when a task failed a unit.
func whRun(t *testing.T, e *engine.Engine, req engine.RunRequest) {
	t.Helper()
	res, err := e.Run(t.Context(), req, e.Executor(), nil)
	must(t, err)
	for _, tr := range res.Tasks {
		if tr.Failed > 0 {
			t.Fatalf("%s failed: %v", tr.Model, tr.Errors)
		}
	}
}

// TestWarehouseRowsLandOncePerWindow: a run writes every model's rows into
// the warehouse — none into the state store's database — once per window,
// each applied unit with the ledger row of the claim that applied it; a
// bulldozer rerun runs every window again (the append-only model holds each
// hour twice, so nothing was skipped as "already in the ledger") and the
// idempotent writes hold their rows once.
func TestWarehouseRowsLandOncePerWindow(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		dsn, env := enginetest.NewWarehouseDB(t, 6)
		e, _ := whEngine(t, s, enginetest.WarehouseSpec, env)
		whRun(t, e, engine.RunRequest{Window: firstDay(), Workers: 4})
		// Hours 0-5 hold two rows each, amounts 10h and 10h+1: 306 in all.
		if got := enginetest.WarehouseQuery(t, dsn, `SELECT count(*), sum(amount) FROM wh.orders`); got[0] != "12|306" {
			t.Errorf("wh.orders = %v", got)
		}
		if got := enginetest.PerHour(t, dsn); got != enginetest.TwoEach(6) {
			t.Errorf("wh.log per hour = %s", got)
		}
		if got := enginetest.WarehouseQuery(t, dsn, `SELECT day::text, total FROM wh.summary`); len(got) != 1 || got[0] != "2026-01-01|306" {
			t.Errorf("wh.summary (a view over wh.daily) = %v", got)
		}
		for _, m := range []string{"wh.orders", "wh.log"} {
			if st := enginetest.Statuses(t, s, m); st[state.Applied] != 24 {
				t.Errorf("%s statuses = %v, want 24 applied", m, st)
			}
			enginetest.CheckLedger(t, s, dsn, m)
		}
		if st := enginetest.Statuses(t, s, "wh.summary"); st[state.Applied] != 1 {
			t.Errorf("wh.summary statuses = %v", st)
		}
		storeHasNoModelTables(t, s)

		_, err := e.Run(t.Context(), engine.RunRequest{Window: firstDay(), Mode: spec.Bulldozer, Workers: 4}, e.Executor(), nil)
		must(t, err)
		if got := enginetest.WarehouseQuery(t, dsn, `SELECT count(*), sum(amount) FROM wh.orders`); got[0] != "12|306" {
			t.Errorf("after a bulldozer rerun wh.orders = %v", got)
		}
		if got := enginetest.WarehouseQuery(t, dsn, `SELECT count(*), sum(total)::bigint FROM wh.daily`); got[0] != "1|306" {
			t.Errorf("after a bulldozer rerun wh.daily = %v", got)
		}
		if got := enginetest.PerHour(t, dsn); got != strings.ReplaceAll(enginetest.TwoEach(6), "=2", "=4") {
			t.Errorf("after a bulldozer rerun wh.log per hour = %s, want each hour run once more", got)
		}
		enginetest.CheckLedger(t, s, dsn, "wh.log")
	})
}

// storeHasNoModelTables fails t when the state store's own database holds a
// table of the warehouse's models.
func storeHasNoModelTables(t *testing.T, s state.Store) {
	t.Helper()
	ds := s.(state.DataStore)
	q := `SELECT count(*) FROM pg_tables WHERE schemaname = 'wh' AND tablename IN ('orders', 'daily')`
	if _, ok := s.(*sqlite.Store); ok {
		q = `SELECT count(*) FROM sqlite_master WHERE name LIKE 'wh.%'`
	}
	if n := enginetest.Rows(t, ds, q); len(n) != 1 || n[0] != "0" {
		t.Errorf("the state store's database holds %v of the models' tables", n)
	}
}

// prefillHours prefills model's first n hours.
func prefillHours(t *testing.T, s state.Store, model string, n int) {
	t.Helper()
	var ws []state.Window
	for h := range n {
		ws = append(ws, hours(h, h+1))
	}
	_, err := s.Prefill(t.Context(), state.PrefillRequest{Model: model, Windows: ws, Now: clock()})
	must(t, err)
}

// TestWarehouseLedgerFencesAnOldClaim: a claim whose unit was taken over
// (its lease expired, a newer claim applied it) runs its unit's job in the
// warehouse anyway — a zombie whose heartbeat has not noticed yet. The
// ledger holds the newer fence, so the transaction rolls back: ErrLeaseLost,
// the hour keeps its two rows once, and the store's unit stays the newer
// claim's.
func TestWarehouseLedgerFencesAnOldClaim(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		dsn, env := enginetest.NewWarehouseDB(t, 1)
		e, sp := whEngine(t, s, enginetest.WarehouseSpec, env)
		_, err := e.Apply(t.Context())
		must(t, err)
		prefillHours(t, s, "wh.log", 1)
		claim := func(now time.Time) state.Claim {
			cs, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{"wh.log"}, Worker: "w", Lease: time.Second, Limit: 1, Now: now})
			must(t, err)
			if len(cs) != 1 {
				t.Fatalf("claimed %d units", len(cs))
			}
			return cs[0]
		}
		now := time.Now()
		old := claim(now)
		_, err = s.ReleaseExpired(t.Context(), now.Add(2*time.Second))
		must(t, err)
		newer := claim(now.Add(2 * time.Second))
		x := e.Executor().(executor.Applier)
		w := hours(0, 1)
		u := executor.UnitRun{Model: sp.Model("wh.log"), Window: &w}
		r, err := x.ExecuteAndApply(t.Context(), u, newer, clock())
		if err != nil {
			t.Fatal(err)
		}
		if !r.Unrecorded || r.RowsWritten == nil {
			t.Fatalf("a warehouse unit's result = %+v, want its rows, left for the caller to record", r)
		}
		// What the run loop does with it.
		must(t, s.Complete(t.Context(), newer, state.Outcome{Status: state.Applied, At: clock(), RowsWritten: r.RowsWritten}))
		_, err = x.ExecuteAndApply(t.Context(), u, old, clock())
		if !errors.Is(err, state.ErrLeaseLost) || !strings.Contains(err.Error(), "the warehouse's ledger holds a newer claim") {
			t.Fatalf("the old claim's run = %v, want the ledger's ErrLeaseLost", err)
		}
		if got := enginetest.PerHour(t, dsn); got != "h0=2" {
			t.Errorf("wh.log per hour = %s, want h0=2", got)
		}
		enginetest.CheckLedger(t, s, dsn, "wh.log")
	})
}

// TestWarehouseConnectionsTerminatedMidRun: while a run of 48 hours of the
// append-only model works with 4 workers, every warehouse connection is
// terminated every 40 ms. Whatever the run comes to, no unit is recorded
// applied without its data, and no hour holds its rows twice. Once the
// warehouse is left alone, the failed units run again and every hour holds
// its two rows exactly once.
func TestWarehouseConnectionsTerminatedMidRun(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		dsn, env := enginetest.NewWarehouseDB(t, 48)
		app := pgtest.ApplicationName("bollhav_whterm_")
		t.Setenv(env, pgtest.WithApplicationName(dsn, app))
		e, _ := whEngine(t, s, enginetest.WarehouseSpec, env)
		two := days(0, 2)
		k := pgtest.StartTerminating(t, dsn, app, 40*time.Millisecond)
		res, runErr := e.Run(t.Context(), engine.RunRequest{Models: []string{"wh.log"}, Window: &two, Workers: 4}, e.Executor(), nil)
		ended := k.Stop()
		t.Logf("terminated %d warehouse connections; run: %v", ended, runErr)
		if res != nil {
			for _, tr := range res.Tasks {
				t.Logf("%s: %d applied, %d failed: %q", tr.Model, tr.Applied, tr.Failed, tr.Errors)
			}
		}
		if ended == 0 {
			t.Fatal("no warehouse connection was terminated: the test tested nothing")
		}
		if res != nil {
			for _, tr := range res.Tasks {
				for _, msg := range tr.Errors {
					if strings.Contains(msg, "password") || strings.Contains(msg, "postgres://") {
						t.Errorf("a unit error shows the DSN: %s", msg)
					}
				}
			}
		}
		rows := map[string]string{}
		for _, h := range strings.Fields(enginetest.PerHour(t, dsn)) {
			k, v, _ := strings.Cut(h, "=")
			rows[k] = v
			if v != "2" {
				t.Errorf("hour %s holds %s rows mid-outage, want 2 (or none)", k, v)
			}
		}
		must(t, s.ScanUnits(t.Context(), state.UnitQuery{Model: "wh.log", Statuses: []state.UnitStatus{state.Applied}}, func(u state.Unit) error {
			h := fmt.Sprintf("h%d", int(u.Window.Since.Sub(t0).Hours()))
			if rows[h] != "2" {
				t.Errorf("%s is applied without its data", u.Window)
			}
			return nil
		}))
		st := enginetest.Statuses(t, s, "wh.log")
		t.Logf("after the outage: %v", st)

		// The warehouse is back: the units that failed run again.
		_, err := s.SetStatus(t.Context(), state.StatusChange{Model: "wh.log", From: []state.UnitStatus{state.Failed}, To: state.Pending, Now: clock()})
		must(t, err)
		res, err = e.Run(t.Context(), engine.RunRequest{Models: []string{"wh.log"}, Window: &two, Mode: spec.Discover, Workers: 4}, e.Executor(), nil)
		must(t, err)
		for _, tr := range res.Tasks {
			t.Logf("recovery: %s: %d applied, %d failed: %q", tr.Model, tr.Applied, tr.Failed, tr.Errors)
		}
		if got := enginetest.PerHour(t, dsn); got != enginetest.TwoEach(48) {
			t.Errorf("wh.log per hour after recovery = %s", got)
		}
		if st := enginetest.Statuses(t, s, "wh.log"); st[state.Applied] != 48 {
			t.Errorf("statuses after recovery = %v, want 48 applied", st)
		}
		enginetest.CheckLedger(t, s, dsn, "wh.log")
	})
}

// whSQLiteSpec is enginetest.WarehouseSpec's first two models on a
// warehouse that is a SQLite file: a recreate_partition query and an
// append-only sql model that doubles its rows whenever a window runs
// twice.
var whSQLiteSpec = enginetest.WarehouseSpec[:strings.Index(enginetest.WarehouseSpec, "  - name: wh.daily\n")]

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
		env := strings.ToUpper(enginetest.UniqueName("BOLLHAV_TEST_WH_"))
		t.Setenv(env, path)
		e, _ := whEngine(t, s, whSQLiteSpec, env)
		perHour := func() string {
			return strings.Join(enginetest.WarehouseQuery(t, path, `SELECT 'h' || CAST(strftime('%H', ts) AS INTEGER) || '=' || count(*) FROM "wh.log" GROUP BY strftime('%H', ts) ORDER BY min(ts)`), " ")
		}
		whRun(t, e, engine.RunRequest{Window: firstDay(), Workers: 4})
		if got := enginetest.WarehouseQuery(t, path, `SELECT count(*), sum(amount) FROM "wh.orders"`); got[0] != "12|306" {
			t.Errorf("wh.orders = %v", got)
		}
		if got := perHour(); got != enginetest.TwoEach(6) {
			t.Errorf("wh.log per hour = %s", got)
		}
		for _, m := range []string{"wh.orders", "wh.log"} {
			if st := enginetest.Statuses(t, s, m); st[state.Applied] != 24 {
				t.Errorf("%s statuses = %v, want 24 applied", m, st)
			}
			enginetest.CheckLedger(t, s, path, m)
		}
		storeHasNoModelTables(t, s)

		whRun(t, e, engine.RunRequest{Window: firstDay(), Mode: spec.Bulldozer, Workers: 4})
		if got := enginetest.WarehouseQuery(t, path, `SELECT count(*), sum(amount) FROM "wh.orders"`); got[0] != "12|306" {
			t.Errorf("after a bulldozer rerun wh.orders = %v", got)
		}
		if got := perHour(); got != strings.ReplaceAll(enginetest.TwoEach(6), "=2", "=4") {
			t.Errorf("after a bulldozer rerun wh.log per hour = %s, want each hour run once more", got)
		}
		enginetest.CheckLedger(t, s, path, "wh.log")
	})
}
