package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/stores"
)

// The warehouse world: a PostgreSQL database apart from the state store
// that a spec's models write into through their connection. The
// executor's tests of warehouse units and the engine's crash tests of them
// share it.

// WarehouseSpec puts every model's data in a warehouse database of its own
// (ENV is the variable that names it): a recreate_partition query, an
// append-only sql model that doubles its rows whenever a window runs twice,
// an upsert rollup gated on the first and a timeless view.
const WarehouseSpec = `defaults:
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

// UniqueName is prefix with random hex after it: a database, schema or
// variable name no other test uses.
func UniqueName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// NewWarehouseDB creates a database of its own on the test server, with
// src.orders holding two rows an hour for the first `hours` hours (amount
// 10*hour + 0 or 1) and an empty wh.log, and drops it when the test ends.
// It returns the database's DSN and a fresh variable name set to it.
func NewWarehouseDB(t *testing.T, hours int) (dsn, env string) {
	t.Helper()
	dsn = Database(t, "bollhav_wh_")
	must(t, pgtest.Exec(dsn, fmt.Sprintf(`CREATE SCHEMA src; CREATE SCHEMA wh;
		CREATE TABLE src.orders (ts timestamp, amount integer);
		INSERT INTO src.orders SELECT timestamp '2026-01-01' + h * interval '1 hour' + m * interval '30 minutes', 10 * h + m
		  FROM generate_series(0, %d) h, generate_series(0, 1) m;
		CREATE TABLE wh.log (ts timestamp, amount integer)`, hours-1)))
	env = strings.ToUpper(UniqueName("BOLLHAV_TEST_WH_"))
	t.Setenv(env, dsn)
	return dsn, env
}

// Database creates an empty database on the test server, named prefix and
// random hex, drops it when t ends and returns its DSN.
func Database(t testing.TB, prefix string) string {
	t.Helper()
	base := pgtest.DSN(t)
	name := UniqueName(prefix)
	must(t, pgtest.Exec(base, "CREATE DATABASE "+name))
	t.Cleanup(func() { _ = pgtest.Exec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(base)
	must(t, err)
	u.Path = "/" + name
	return u.String()
}

// SpecFile writes yaml as dir's bollhav.yaml and loads it.
func SpecFile(t testing.TB, dir, yaml string) (sp *spec.Spec, path string) {
	t.Helper()
	path = filepath.Join(dir, "bollhav.yaml")
	must(t, os.WriteFile(path, []byte(yaml), 0o644))
	sp, err := spec.Load(path)
	must(t, err)
	return sp, path
}

// WarehouseSpecFile writes yaml, with ENV replaced by env, as the
// bollhav.yaml of a fresh spec directory (worker processes load it from
// there) and loads it.
func WarehouseSpecFile(t *testing.T, yaml, env string) (sp *spec.Spec, dir, path string) {
	t.Helper()
	dir = t.TempDir()
	sp, path = SpecFile(t, dir, strings.ReplaceAll(yaml, "ENV", env))
	return sp, dir, path
}

// RowReader is what rows are read from: a state store's DataStore or a
// warehouse.
type RowReader interface {
	ReadData(ctx context.Context, query string, w state.Window, fn func(row []any) error) error
}

// Rows returns a query's rows as "a|b" strings.
func Rows(t testing.TB, r RowReader, query string) []string {
	t.Helper()
	var out []string
	must(t, r.ReadData(t.Context(), query, state.Window{}, func(row []any) error {
		parts := make([]string, len(row))
		for i, v := range row {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
		return nil
	}))
	return out
}

// warehouse opens the warehouse at dsn (a PostgreSQL DSN or a SQLite
// file's path); the caller closes it.
func warehouse(t testing.TB, dsn string) state.Warehouse {
	t.Helper()
	w, err := stores.OpenWarehouse(t.Context(), dsn)
	must(t, err)
	return w
}

// WarehouseQuery returns a query's rows in the warehouse at dsn as "a|b"
// strings.
func WarehouseQuery(t testing.TB, dsn, query string) []string {
	t.Helper()
	w := warehouse(t, dsn)
	defer w.Close()
	return Rows(t, w, query)
}

// PerHour counts wh.log's rows in each hour that has any: "h0=2 h1=2 …".
func PerHour(t testing.TB, dsn string) string {
	return strings.Join(WarehouseQuery(t, dsn, `SELECT 'h' || h || '=' || count(*) FROM
		(SELECT extract(epoch FROM ts - timestamp '2026-01-01')::int / 3600 AS h FROM wh.log) AS l GROUP BY h ORDER BY h`), " ")
}

// TwoEach is PerHour's answer when each of the first n hours landed once.
func TwoEach(n int) string {
	parts := make([]string, n)
	for h := range n {
		parts[h] = fmt.Sprintf("h%d=2", h)
	}
	return strings.Join(parts, " ")
}

// CheckLedger checks that every applied unit of model in s has a ledger
// row in the warehouse at dsn written by the claim that applied it — of
// s's identity, under the unit's definition — with the rows it recorded.
func CheckLedger(t testing.TB, s state.Store, dsn, model string) {
	t.Helper()
	w := warehouse(t, dsn)
	defer w.Close()
	id, err := s.Identity(t.Context())
	must(t, err)
	n := 0
	must(t, s.ScanUnits(t.Context(), state.UnitQuery{Model: model, Statuses: []state.UnitStatus{state.Applied}}, func(u state.Unit) error {
		n++
		l, ok, err := w.Ledger(t.Context(), state.LedgerKey("", model, u.Window, u.ID))
		if err != nil {
			return err
		}
		if !ok || l.DoneFence != u.Fence || u.RowsWritten == nil || l.Rows != *u.RowsWritten || l.Store != id || l.Fingerprint != u.Fingerprint {
			t.Errorf("%s %s: ledger %+v, unit fence %d rows %v fingerprint %q, store %s", model, u.Window, l, u.Fence, u.RowsWritten, u.Fingerprint, id)
		}
		return nil
	}))
	if n == 0 {
		t.Errorf("%s has no applied unit", model)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
