package engine

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/state/sqlite/sqlitetest"
	"github.com/bollhav/bollhav/state/stores"
)

// whSpec puts every model's data in a warehouse database of its own (ENV
// is the variable that names it): a recreate_partition query, an append-only
// sql model that doubles its rows whenever a window runs twice, an upsert
// rollup gated on the first and a timeless view.
const whSpec = `defaults:
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
  - name: wh.daily
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: wh.orders, contract: encapsulate}]
    run:
      query: SELECT :since::date AS day, sum(amount) AS total FROM {{ ref "wh.orders" }} WHERE ts >= :since AND ts < :until
      write: {mode: upsert, keys: [day]}
  - name: wh.summary
    temporality: timeless
    upstream: [{name: wh.daily, contract: exists}]
    run:
      query: SELECT day, total FROM {{ ref "wh.daily" }}
`

// newWarehouseDB creates a database of its own on the test server, with
// src.orders holding two rows an hour for the first `hours` hours (amount
// 10*hour + 0 or 1) and an empty wh.log, and drops it when the test ends.
// It returns the database's DSN and a fresh variable name set to it.
func newWarehouseDB(t *testing.T, hours int) (dsn, env string) {
	t.Helper()
	base := pgtest.DSN(t)
	name := relName("bollhav_wh_")
	must(t, pgtest.Exec(base, "CREATE DATABASE "+name))
	t.Cleanup(func() { _ = pgtest.Exec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(base)
	must(t, err)
	u.Path = "/" + name
	dsn = u.String()
	must(t, pgtest.Exec(dsn, fmt.Sprintf(`CREATE SCHEMA src; CREATE SCHEMA wh;
		CREATE TABLE src.orders (ts timestamp, amount integer);
		INSERT INTO src.orders SELECT timestamp '2026-01-01' + h * interval '1 hour' + m * interval '30 minutes', 10 * h + m
		  FROM generate_series(0, %d) h, generate_series(0, 1) m;
		CREATE TABLE wh.log (ts timestamp, amount integer)`, hours-1)))
	env = strings.ToUpper(relName("BOLLHAV_TEST_WH_"))
	t.Setenv(env, dsn)
	return dsn, env
}

// whEngine is an engine on s with whSpec, written to a spec file (worker
// processes load it), and a warehouse pool registry of its own.
func whEngine(t *testing.T, s state.Store, env string) (*Engine, string) {
	t.Helper()
	dir := t.TempDir()
	path := writeSpec(t, dir, map[string]string{"bollhav.yaml": strings.ReplaceAll(whSpec, "ENV", env)})
	sp, err := spec.Load(path)
	must(t, err)
	wh := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	t.Cleanup(func() { _ = wh.Close() })
	return New(s, sp, Options{SpecDir: dir, Actor: "test", Warehouses: wh, Now: func() time.Time { return t0.Add(48 * time.Hour) }}), path
}

// whQuery returns a query's rows in the warehouse as "a|b" strings.
func whQuery(t *testing.T, dsn, query string) []string {
	t.Helper()
	w, err := (&executor.Warehouses{Getenv: func(string) string { return dsn }, Open: stores.OpenWarehouse}).Get(t.Context(), &spec.Connection{DSNEnvVar: "X"})
	must(t, err)
	defer w.Close()
	var out []string
	must(t, w.ReadData(t.Context(), query, state.Window{}, func(r []any) error {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
		return nil
	}))
	return out
}

// perHour counts wh.log's rows in each hour that has any: "h0=2 h1=2 …".
func perHour(t *testing.T, dsn string) string {
	return strings.Join(whQuery(t, dsn, `SELECT 'h' || h || '=' || count(*) FROM
		(SELECT extract(epoch FROM ts - timestamp '2026-01-01')::int / 3600 AS h FROM wh.log) AS l GROUP BY h ORDER BY h`), " ")
}

// twoEach is perHour's answer when each of the first n hours landed once.
func twoEach(n int) string {
	parts := make([]string, n)
	for h := range n {
		parts[h] = fmt.Sprintf("h%d=2", h)
	}
	return strings.Join(parts, " ")
}

// checkLedger checks that every applied unit of model has a ledger row
// written by the claim that applied it, with the rows it recorded.
func checkLedger(t *testing.T, e *Engine, dsn, model string) {
	t.Helper()
	w, err := (&executor.Warehouses{Getenv: func(string) string { return dsn }, Open: stores.OpenWarehouse}).Get(t.Context(), &spec.Connection{DSNEnvVar: "X"})
	must(t, err)
	defer w.Close()
	n := 0
	must(t, e.store.ScanUnits(t.Context(), state.UnitQuery{Model: model, Statuses: []state.UnitStatus{state.Applied}}, func(u state.Unit) error {
		n++
		l, ok, err := w.Ledger(t.Context(), state.LedgerKey("", model, u.Window, u.ID))
		if err != nil {
			return err
		}
		if !ok || l.DoneFence != u.Fence || u.RowsWritten == nil || l.Rows != *u.RowsWritten {
			t.Errorf("%s %s: ledger %+v, unit fence %d rows %v", model, u.Window, l, u.Fence, u.RowsWritten)
		}
		return nil
	}))
	if n == 0 {
		t.Errorf("%s has no applied unit", model)
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
		dsn, env := newWarehouseDB(t, 6)
		e, _ := whEngine(t, s, env)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Workers: 4}, e.Executor(), nil)
		must(t, err)
		for _, tr := range res.Tasks {
			if tr.Failed > 0 {
				t.Fatalf("%s failed: %v", tr.Model, tr.Errors)
			}
		}
		// Hours 0-5 hold two rows each, amounts 10h and 10h+1: 306 in all.
		if got := whQuery(t, dsn, `SELECT count(*), sum(amount) FROM wh.orders`); got[0] != "12|306" {
			t.Errorf("wh.orders = %v", got)
		}
		if got := perHour(t, dsn); got != twoEach(6) {
			t.Errorf("wh.log per hour = %s", got)
		}
		if got := whQuery(t, dsn, `SELECT day::text, total FROM wh.summary`); len(got) != 1 || got[0] != "2026-01-01|306" {
			t.Errorf("wh.summary (a view over wh.daily) = %v", got)
		}
		for _, m := range []string{"wh.orders", "wh.log"} {
			if st := statuses(t, s, m); st[state.Applied] != 24 {
				t.Errorf("%s statuses = %v, want 24 applied", m, st)
			}
			checkLedger(t, e, dsn, m)
		}
		if st := statuses(t, s, "wh.summary"); st[state.Applied] != 1 {
			t.Errorf("wh.summary statuses = %v", st)
		}
		storeHasNoModelTables(t, s)

		_, err = e.Run(t.Context(), RunRequest{Window: firstDay(), Mode: spec.Bulldozer, Workers: 4}, e.Executor(), nil)
		must(t, err)
		if got := whQuery(t, dsn, `SELECT count(*), sum(amount) FROM wh.orders`); got[0] != "12|306" {
			t.Errorf("after a bulldozer rerun wh.orders = %v", got)
		}
		if got := whQuery(t, dsn, `SELECT count(*), sum(total)::bigint FROM wh.daily`); got[0] != "1|306" {
			t.Errorf("after a bulldozer rerun wh.daily = %v", got)
		}
		if got := perHour(t, dsn); got != strings.ReplaceAll(twoEach(6), "=2", "=4") {
			t.Errorf("after a bulldozer rerun wh.log per hour = %s, want each hour run once more", got)
		}
		checkLedger(t, e, dsn, "wh.log")
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
	must(t, ds.ReadData(t.Context(), q, state.Window{}, func(r []any) error {
		if fmt.Sprint(r[0]) != "0" {
			t.Errorf("the state store's database holds %v of the models' tables", r[0])
		}
		return nil
	}))
}

// whWorker starts a worker process on rs with the warehouse spec, a lease
// of one second, and extra environment.
func whWorker(t *testing.T, rs *relStore, app, specPath, env, dsn string, extra ...string) *relWorker {
	t.Helper()
	vars := append(rs.workerEnv(app), relEnvSpec+"="+specPath, relEnvLease+"=1s", relEnvWorkers+"=1", env+"="+dsn)
	return startRelWorker(t, app, append(vars, extra...)...)
}

func prefillHours(t *testing.T, e *Engine, model string, n int) {
	t.Helper()
	var ws []state.Window
	for h := range n {
		ws = append(ws, hours(h, h+1))
	}
	_, err := e.store.Prefill(t.Context(), state.PrefillRequest{Model: model, Windows: ws, Now: e.now()})
	must(t, err)
}

// TestWarehouseCrashBetweenCommitsIsRepairedFromTheLedger: a worker is
// SIGKILLed right after its first unit's data committed in the warehouse,
// before the state store recorded it. The unit is left running with its
// data and its ledger row in the warehouse. Once the lease expires, a run
// records that unit applied from the ledger without running it again, and
// runs the rest: each hour's two rows land exactly once.
func TestWarehouseCrashBetweenCommitsIsRepairedFromTheLedger(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			app := relName("bollhav_whcrash_")
			rs := openRelStore(t, backend, app)
			dsn, env := newWarehouseDB(t, 6)
			e, path := whEngine(t, rs.Store, env)
			_, err := e.Apply(t.Context())
			must(t, err)
			prefillHours(t, e, "wh.log", 6)

			w := whWorker(t, rs, app, path, env, dsn, relEnvCrash+"=1")
			select {
			case <-w.done:
			case <-time.After(30 * time.Second):
				t.Fatal("the worker did not crash")
			}
			if ws := w.cmd.ProcessState.String(); !strings.Contains(ws, "killed") {
				t.Fatalf("worker ended %s, not by SIGKILL: %s", ws, w.stderr.String())
			}
			// Exactly one window's data committed; the store does not know.
			done := whQuery(t, dsn, `SELECT unit_key, rows FROM bollhav_warehouse.ledger WHERE done_fence > 0`)
			if len(done) != 1 || !strings.HasSuffix(done[0], "|2") {
				t.Fatalf("ledger rows with data = %v, want one of 2 rows", done)
			}
			if st := statuses(t, rs.Store, "wh.log"); st[state.Running] < 1 || st[state.Applied] != 0 {
				t.Fatalf("statuses after the crash = %v, want the crashed unit running and none applied", st)
			}
			if got := perHour(t, dsn); strings.Count(got, "=2") != 1 {
				t.Fatalf("wh.log after the crash = %q, want one hour", got)
			}

			time.Sleep(1500 * time.Millisecond) // the worker's lease of 1s expires
			six := hours(0, 6)
			_, err = e.Run(t.Context(), RunRequest{Models: []string{"wh.log"}, Window: &six, Mode: spec.Discover}, e.Executor(), nil)
			must(t, err)
			if got := perHour(t, dsn); got != twoEach(6) {
				t.Errorf("wh.log per hour = %s, want %s", got, twoEach(6))
			}
			if st := statuses(t, rs.Store, "wh.log"); st[state.Applied] != 6 {
				t.Errorf("statuses = %v, want 6 applied", st)
			}
			checkLedger(t, e, dsn, "wh.log")
			// The repaired unit counts the dead worker's attempt, and keeps
			// the rows that attempt wrote.
			var expired int
			must(t, rs.Store.ScanUnits(t.Context(), state.UnitQuery{Model: "wh.log"}, func(u state.Unit) error {
				if u.Attempts == 2 {
					expired++
					if u.RowsWritten == nil || *u.RowsWritten != 2 {
						t.Errorf("repaired unit %s rows_written = %v, want 2", u.Window, u.RowsWritten)
					}
				}
				return nil
			}))
			if expired != 1 {
				t.Errorf("%d units show the dead worker's attempt, want 1", expired)
			}
		})
	}
}

// TestWarehouseZombieWritesNothing: a worker claims a unit and is paused
// (SIGSTOP) just before its warehouse transaction. Its lease expires, a run
// takes the unit over and applies it. Resumed, the zombie opens its
// transaction with the older fence (or its heartbeat finds the lease lost
// first): it writes nothing, and each hour holds its two rows once.
func TestWarehouseZombieWritesNothing(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			app := relName("bollhav_whzombie_")
			rs := openRelStore(t, backend, app)
			dsn, env := newWarehouseDB(t, 6)
			e, path := whEngine(t, rs.Store, env)
			_, err := e.Apply(t.Context())
			must(t, err)
			prefillHours(t, e, "wh.log", 6)

			w := whWorker(t, rs, app, path, env, dsn, relEnvPause+"=1")
			eventually(t, 30*time.Second, "the worker stops itself", func() bool { return stopped(w.cmd.Process.Pid) })
			if got := whQuery(t, dsn, `SELECT count(*) FROM wh.log`); got[0] != "0" {
				t.Fatalf("the paused worker wrote %s rows", got[0])
			}
			time.Sleep(1500 * time.Millisecond) // its lease of 1s expires
			six := hours(0, 6)
			_, err = e.Run(t.Context(), RunRequest{Models: []string{"wh.log"}, Window: &six, Mode: spec.Discover}, e.Executor(), nil)
			must(t, err)
			if st := statuses(t, rs.Store, "wh.log"); st[state.Applied] != 6 {
				t.Fatalf("statuses = %v, want 6 applied", st)
			}

			must(t, w.cmd.Process.Signal(syscall.SIGCONT))
			eventually(t, 30*time.Second, "the zombie reports its lost lease", func() bool {
				return strings.Contains(w.stderr.String(), "lost the lease")
			})
			w.stop(t, 30*time.Second)
			if got := perHour(t, dsn); got != twoEach(6) {
				t.Errorf("wh.log per hour = %s, want %s", got, twoEach(6))
			}
			// Which of its fences stopped it — the store's heartbeat or the
			// ledger — is a race; TestWarehouseLedgerFencesAnOldClaim pins
			// the ledger's down.
			checkLedger(t, e, dsn, "wh.log")
		})
	}
}

// stopped reports whether process pid is stopped (state T in /proc).
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i > 0 && len(s) > i+2 && s[i+2] == 'T'
}

// TestWarehouseLedgerFencesAnOldClaim: a claim whose unit was taken over
// (its lease expired, a newer claim applied it) runs its unit's job in the
// warehouse anyway — a zombie whose heartbeat has not noticed yet. The
// ledger holds the newer fence, so the transaction rolls back: ErrLeaseLost,
// the hour keeps its two rows once, and the store's unit stays the newer
// claim's.
func TestWarehouseLedgerFencesAnOldClaim(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		dsn, env := newWarehouseDB(t, 1)
		e, _ := whEngine(t, s, env)
		_, err := e.Apply(t.Context())
		must(t, err)
		prefillHours(t, e, "wh.log", 1)
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
		u := executor.UnitRun{Model: e.spec.Model("wh.log"), Window: &w}
		r, err := x.ExecuteAndApply(t.Context(), u, newer, e.now())
		if err != nil {
			t.Fatal(err)
		}
		if !r.Unrecorded || r.RowsWritten == nil {
			t.Fatalf("a warehouse unit's result = %+v, want its rows, left for the caller to record", r)
		}
		// What the run loop does with it.
		must(t, s.Complete(t.Context(), newer, state.Outcome{Status: state.Applied, At: e.now(), RowsWritten: r.RowsWritten}))
		_, err = x.ExecuteAndApply(t.Context(), u, old, e.now())
		if !errors.Is(err, state.ErrLeaseLost) || !strings.Contains(err.Error(), "the warehouse's ledger holds a newer claim") {
			t.Fatalf("the old claim's run = %v, want the ledger's ErrLeaseLost", err)
		}
		if got := perHour(t, dsn); got != "h0=2" {
			t.Errorf("wh.log per hour = %s, want h0=2", got)
		}
		checkLedger(t, e, dsn, "wh.log")
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
		dsn, env := newWarehouseDB(t, 48)
		app := pgtest.ApplicationName("bollhav_whterm_")
		t.Setenv(env, pgtest.WithApplicationName(dsn, app))
		e, _ := whEngine(t, s, env)
		two := days(0, 2)
		k := pgtest.StartTerminating(t, dsn, app, 40*time.Millisecond)
		res, runErr := e.Run(t.Context(), RunRequest{Models: []string{"wh.log"}, Window: &two, Workers: 4}, e.Executor(), nil)
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
		for _, h := range strings.Fields(perHour(t, dsn)) {
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
		st := statuses(t, s, "wh.log")
		t.Logf("after the outage: %v", st)

		// The warehouse is back: the units that failed run again.
		_, err := s.SetStatus(t.Context(), state.StatusChange{Model: "wh.log", From: []state.UnitStatus{state.Failed}, To: state.Pending, Now: e.now()})
		must(t, err)
		res, err = e.Run(t.Context(), RunRequest{Models: []string{"wh.log"}, Window: &two, Mode: spec.Discover, Workers: 4}, e.Executor(), nil)
		must(t, err)
		for _, tr := range res.Tasks {
			t.Logf("recovery: %s: %d applied, %d failed: %q", tr.Model, tr.Applied, tr.Failed, tr.Errors)
		}
		if got := perHour(t, dsn); got != twoEach(48) {
			t.Errorf("wh.log per hour after recovery = %s", got)
		}
		if st := statuses(t, s, "wh.log"); st[state.Applied] != 48 {
			t.Errorf("statuses after recovery = %v, want 48 applied", st)
		}
		checkLedger(t, e, dsn, "wh.log")
	})
}

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
