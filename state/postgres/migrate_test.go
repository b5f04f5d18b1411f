package postgres

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/storetest"
)

// destructive matches SQL that loses data. An upgrade must never run it: a
// customer's state store outlives every bollhav binary that touches it.
var destructive = regexp.MustCompile(`(?i)\b(DROP\s+(TABLE|COLUMN|SCHEMA)|ALTER\s+TABLE\s+\S+\s+DROP|TRUNCATE|DELETE\s+FROM|RENAME)\b`)

// dropIndex matches an index drop and names the index. An index holds no
// data of its own, so a migration may drop one that no longer pays for its
// writes, but only a plain one an earlier migration made: a unique index
// is a rule the store keeps, not a speed-up.
var dropIndex = regexp.MustCompile(`(?i)\bDROP\s+INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+EXISTS\s+)?(?:\{schema\}\.)?([a-z_][a-z0-9_]*)`)

// TestMigrationsNeverDropData reads every embedded migration (without its
// comments) for a statement that loses data, and for the drop of an index
// that is unique or that no earlier migration made as a plain index.
func TestMigrationsNeverDropData(t *testing.T) {
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	comment := regexp.MustCompile(`--[^\n]*`)
	var earlier strings.Builder
	for _, m := range ms {
		sql := comment.ReplaceAllString(m.sql, "")
		if bad := destructive.FindString(sql); bad != "" {
			t.Errorf("migration %s runs %q; migrations only add", m.name, bad)
		}
		for _, d := range dropIndex.FindAllStringSubmatch(sql, -1) {
			made := regexp.MustCompile(`(?i)\bCREATE\s+INDEX\s+(?:CONCURRENTLY\s+)?` + d[1] + `\s+ON\b`)
			if !made.MatchString(earlier.String()) {
				t.Errorf("migration %s drops index %s, which no earlier migration made as a plain (not unique) index", m.name, d[1])
			}
		}
		earlier.WriteString(sql)
	}
	if !dropIndex.MatchString("DROP INDEX IF EXISTS {schema}.units_status;") || destructive.MatchString("DROP INDEX x") {
		t.Error("the patterns no longer tell an index drop from a data loss")
	}
}

// TestLoadMigrationsRefusesGaps: a release whose migrations skip or repeat a
// version fails its tests, not a customer's upgrade.
func TestLoadMigrationsRefusesGaps(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("SELECT 1")}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":       {"m/0001_a.sql": sql, "m/0003_c.sql": sql},
		"duplicate": {"m/0001_a.sql": sql, "m/0001_b.sql": sql, "m/0002_c.sql": sql},
		"no number": {"m/init.sql": sql},
		"zero":      {"m/0000_a.sql": sql},
	} {
		if ms, err := loadMigrations(fsys, "m"); err == nil {
			t.Errorf("%s: loaded %d migrations, want an error", name, len(ms))
		}
	}
	ms, err := loadMigrations(fstest.MapFS{"m/0002_b.sql": sql, "m/0001_a.sql": sql, "m/README": sql}, "m")
	if err != nil || len(ms) != 2 || ms[0].name != "0001_a" || ms[1].version != 2 {
		t.Errorf("loadMigrations = %+v, %v; want 0001_a then 0002_b", ms, err)
	}
}

// testPool is a pool on the test server, closed when t ends.
func testPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// oldHourlyModel registers name in env, a fixed hourly model from t0 with
// task id task, in a schema of an earlier version through fill's exec, as
// the releases these tests upgrade from (versions 4 to 9) wrote a
// registration.
func oldHourlyModel(exec func(string, ...any), env, name string, task int) {
	exec(`INSERT INTO {schema}.models (env, name, task_id, pipeline, temporality, flexibility, grain,
	timezone, start_at, definition, content_hash, registered_at, longest_unit) VALUES ($1, $2, $3, 'p', 'temporal', 'fix', '1h', 'UTC', $4, '{}', 'h', $4, 3600000000)`,
		env, name, task, t0)
}

// oldUnit is a unit of hour of model in env, in a schema of an earlier
// version, with its fingerprint (nil for none).
type oldUnit struct {
	env, model string
	hour       int
	status     string
	fp         any
}

// oldUnits writes units through fill's exec as an earlier release did: an
// applied unit was applied at appliedAt(its hour), and a running one holds
// a lease until hour 30.
func oldUnits(exec func(string, ...any), units []oldUnit, appliedAt func(hour int) time.Time) {
	for _, u := range units {
		var applied, lease any
		if u.status == "applied" {
			applied = appliedAt(u.hour)
		}
		if u.status == "running" {
			lease = at(30)
		}
		exec(`INSERT INTO {schema}.units (env, model, flexible, since, until, status, applied_at, updated_at, lease_until, fingerprint)
			VALUES ($1, $2, false, $3, $4, $5, $6, $7, $8, $9)`, u.env, u.model, at(u.hour), at(u.hour+1), u.status, applied, t0, lease, u.fp)
	}
}

// oldSchema is a fresh schema at version (this release's migrations up to
// it) holding the rows fill writes through exec (its {schema} named; a
// statement that fails fails t). It returns the DSN, a pool on it and the
// schema.
func oldSchema(t *testing.T, version int, fill func(exec func(query string, args ...any))) (string, *pgxpool.Pool, string) {
	t.Helper()
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	pool := testPool(t, dsn)
	if v, err := migrate(ctx, pool, schema, ms[:version]); err != nil || v != version {
		t.Fatalf("a version %d schema: %d, %v", version, v, err)
	}
	fill(func(query string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sqlFor(schema, query), args...); err != nil {
			t.Fatal(err)
		}
	})
	return dsn, pool, schema
}

// upgradeFrom is the set-up every upgrade test shares: oldSchema, then this
// release's Open of the schema, which upgrades it. It returns the store,
// closed when t ends, and the pool and schema, for reading rows as they are.
func upgradeFrom(t *testing.T, version int, fill func(exec func(query string, args ...any))) (*Store, *pgxpool.Pool, string) {
	t.Helper()
	dsn, pool, schema := oldSchema(t, version, fill)
	s, err := Open(t.Context(), dsn, Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open of a version %d schema: %v", version, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, pool, schema
}

// TestUpgradeKeepsData: a store written by this release, upgraded by a later
// one, keeps its units; and this release then refuses the upgraded store
// without touching it.
func TestUpgradeKeepsData(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	s, err := Open(t.Context(), dsn, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.Register(ctx, "", []state.ModelRecord{{Name: "a", Temporality: "timeless"}}, nil, at(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: []state.Window{{}}, Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	next := migration{version: len(ms) + 1, name: "next", sql: `ALTER TABLE {schema}.units ADD COLUMN note text NOT NULL DEFAULT ''`}
	pool := testPool(t, dsn)
	v, err := migrate(ctx, pool, schema, append(ms, next))
	if err != nil || v != next.version {
		t.Fatalf("upgrade = version %d, %v; want %d", v, err, next.version)
	}
	var units int
	if err := pool.QueryRow(ctx, sqlFor(schema, `SELECT count(*) FROM {schema}.units WHERE note = ''`)).Scan(&units); err != nil || units != 1 {
		t.Errorf("units after the upgrade = %d, %v; want the one unit", units, err)
	}

	before := catalog(t, pool, schema)
	_, err = Open(ctx, dsn, Options{Schema: schema})
	if !errors.Is(err, state.ErrNewerSchema) {
		t.Fatalf("Open of a newer store: err = %v, want ErrNewerSchema", err)
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("version %d", next.version)) || !strings.Contains(msg, "upgrade bollhav") {
		t.Errorf("error %q should name the store's version and say to upgrade bollhav", msg)
	}
	if after := catalog(t, pool, schema); after != before {
		t.Errorf("refusing the newer store changed it:\nbefore %s\nafter  %s", before, after)
	}
}

// catalog summarizes what a store holds: its versions, tables and columns,
// and how many units it has.
func catalog(t *testing.T, pool *pgxpool.Pool, schema string) string {
	t.Helper()
	var out string
	err := pool.QueryRow(t.Context(), sqlFor(schema, `
		SELECT (SELECT string_agg(version || ':' || name, ',' ORDER BY version) FROM {schema}.schema_version)
		    || ' | ' || (SELECT string_agg(table_name || '.' || column_name, ',' ORDER BY table_name, column_name)
		                 FROM information_schema.columns WHERE table_schema = $1)
		    || ' | units=' || (SELECT count(*) FROM {schema}.units)`), schema).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConcurrentOpen: processes starting at once on a fresh schema, and
// later ones upgrading it at once (one of its migrations a concurrent
// index build), take turns with the migration lock; every one opens the
// store, and each migration runs exactly once.
func TestConcurrentOpen(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	const processes = 8
	var wg sync.WaitGroup
	errs := make(chan error, processes)
	for range processes {
		wg.Go(func() {
			s, err := Open(t.Context(), dsn, Options{Schema: schema})
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Open: %v", err)
	}
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	var rows, newest int
	if err := pgtest.QueryRow(dsn, sqlFor(schema, `SELECT count(*), max(version) FROM {schema}.schema_version`), nil, &rows, &newest); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) || newest != len(ms) {
		t.Errorf("schema_version has %d rows up to version %d; want each of the %d migrations once", rows, newest, len(ms))
	}

	// The next release's binaries start at once on the existing store. A
	// statement that is not idempotent (ADD COLUMN without IF NOT EXISTS)
	// fails unless the migration runs once. The index is built
	// concurrently while the others wait for the lock.
	ms = append(ms, migration{version: len(ms) + 1, name: "next", sql: `ALTER TABLE {schema}.units ADD COLUMN note text`},
		migration{version: len(ms) + 2, name: "after_next", sql: `CREATE INDEX CONCURRENTLY units_note ON {schema}.units (note);`})
	pool := testPool(t, dsn)
	errs = make(chan error, processes)
	for range processes {
		wg.Go(func() {
			if _, err := migrate(t.Context(), pool, schema, ms); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent upgrade: %v", err)
	}
	if err := pgtest.QueryRow(dsn, sqlFor(schema, `SELECT count(*), max(version) FROM {schema}.schema_version`), nil, &rows, &newest); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) || newest != len(ms) {
		t.Errorf("after the upgrade schema_version has %d rows up to version %d; want %d", rows, newest, len(ms))
	}
}

// TestUpgradeGivesTheStoreAnIdentity: a schema from before store
// identities (version 10), holding a model, gets an identity when this
// release opens it, and keeps that one on every later open.
func TestUpgradeGivesTheStoreAnIdentity(t *testing.T) {
	s, _, schema := upgradeFrom(t, 10, func(exec func(string, ...any)) { oldHourlyModel(exec, "", "a", 1) })
	storetest.UpgradedIdentity(t, s, func() state.Store {
		r, err := Open(t.Context(), pgtest.DSN(t), Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	})
}
