package postgres

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// TestIndexesOnUnitsAreBuiltConcurrently reads every embedded migration
// after the one that makes the units table: each index it adds to units is
// a concurrent build the runner recognises, and no CONCURRENTLY is left
// for the migration's transaction, where PostgreSQL refuses it.
func TestIndexesOnUnitsAreBuiltConcurrently(t *testing.T) {
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	comment := regexp.MustCompile(`--[^\n]*`)
	plainOnUnits := regexp.MustCompile(`(?i)\bCREATE\s+(UNIQUE\s+)?INDEX\s+[a-z_]+\s+ON\s+\{schema\}\.units\b`)
	var concurrent []string
	for _, m := range ms[1:] {
		builds, rest := m.builds()
		for _, b := range builds {
			concurrent = append(concurrent, b.name)
		}
		rest = comment.ReplaceAllString(rest, "")
		if strings.Contains(strings.ToUpper(rest), "CONCURRENTLY") {
			t.Errorf("migration %s: a CONCURRENTLY the runner does not take out of the transaction:\n%s", m.name, rest)
		}
		// 0005 builds its index on the column it adds, which a build
		// ahead of its transaction could not see; its CHECK constraint
		// scans units under an ACCESS EXCLUSIVE lock anyway. Only stores
		// from before version 5 run it.
		if bad := plainOnUnits.FindString(rest); bad != "" && m.name != "0005_unit_fingerprint" {
			t.Errorf("migration %s: %q holds back every write to units for the whole build; build it CONCURRENTLY", m.name, bad)
		}
		if plain := m.plain(); strings.Contains(strings.ToUpper(comment.ReplaceAllString(plain, "")), "CONCURRENTLY") {
			t.Errorf("migration %s: a new store's SQL still builds concurrently:\n%s", m.name, plain)
		}
	}
	want := []string{"units_pending_claim_order", "units_sweep_outstanding", "units_sweep_applied", "runs_running", "units_running_run", "units_stuck", "units_failing", "units_stuck_groups", "units_stuck_long"}
	if !slices.Equal(concurrent, want) {
		t.Errorf("concurrent builds = %v, want %v", concurrent, want)
	}
}

// indexes describes the indexes in schema, name to definition (the schema
// written {schema}), an INVALID one marked so.
func indexes(t *testing.T, pool *pgxpool.Pool, schema string) map[string]string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisvalid
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		var valid bool
		if err := rows.Scan(&name, &def, &valid); err != nil {
			t.Fatal(err)
		}
		def = strings.ReplaceAll(def, quoteIdent(schema)+".", "{schema}.")
		def = strings.ReplaceAll(def, schema+".", "{schema}.")
		if !valid {
			def += " INVALID"
		}
		out[name] = def
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// newStoreIndexes are the indexes of a store this release makes.
func newStoreIndexes(t *testing.T) map[string]string {
	t.Helper()
	s, _ := openTest(t, Options{})
	return indexes(t, s.pool, s.schema)
}

// checkIndexesAsNew fails t unless schema holds exactly the indexes a new
// store has, each valid.
func checkIndexesAsNew(t *testing.T, pool *pgxpool.Pool, schema string) {
	t.Helper()
	got, want := indexes(t, pool, schema), newStoreIndexes(t)
	for name, def := range want {
		if got[name] != def {
			t.Errorf("index %s after the upgrade:\n got  %q\n want %q", name, got[name], def)
		}
	}
	for name, def := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("index %s after the upgrade, which a new store has not: %s", name, def)
		}
	}
}

// checkVersions fails t unless schema recorded versions 1 to n, each once.
func checkVersions(t *testing.T, pool *pgxpool.Pool, schema string, n int) {
	t.Helper()
	var rows, newest int
	if err := pool.QueryRow(t.Context(), sqlFor(schema, `SELECT count(*), max(version) FROM {schema}.schema_version`)).Scan(&rows, &newest); err != nil {
		t.Fatal(err)
	}
	if rows != n || newest != n {
		t.Errorf("schema_version has %d rows up to version %d; want versions 1 to %d, each once", rows, newest, n)
	}
}

// lockWaiters counts the backends named app that wait on a lock.
func lockWaiters(t *testing.T, pool *pgxpool.Pool, app string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUpgradeDoesNotBlockWriters: an upgrade from version 7 starts while a
// worker's transaction is open on units, so its first index build (0008's)
// waits for that transaction. Meanwhile another worker's claim and insert
// on units commit. A plain CREATE INDEX would queue its SHARE lock behind
// the open transaction, and that write behind the CREATE INDEX: the write
// would wait on a lock, which fails the test. Once the first transaction
// ends the upgrade finishes with a new store's indexes, all valid, and the
// write kept.
func TestUpgradeDoesNotBlockWriters(t *testing.T) {
	ctx := t.Context()
	dsn, pool, schema := oldSchema(t, 7, func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		oldUnits(exec, []oldUnit{{"", "a", 0, "applied", nil}, {"", "a", 1, "pending", nil}, {"", "a", 2, "pending", nil}},
			func(int) time.Time { return t0 })
	})

	// The first worker's transaction, holding the lock every write to
	// units takes (as its claim's UPDATE would) until it ends.
	first, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback(ctx) }()
	if _, err := first.Exec(ctx, sqlFor(schema, `LOCK TABLE {schema}.units IN ROW EXCLUSIVE MODE`)); err != nil {
		t.Fatal(err)
	}

	upgrader := pgtest.ApplicationName("bollhav_upgrade_")
	upgraded := make(chan error, 1)
	go func() {
		s, err := Open(ctx, pgtest.WithApplicationName(dsn, upgrader), Options{Schema: schema})
		if err == nil {
			_ = s.Close()
		}
		upgraded <- err
	}()
	for lockWaiters(t, pool, upgrader) == 0 {
		select {
		case err := <-upgraded:
			t.Fatalf("the upgrade finished (%v) while a transaction on units was open: it built no index concurrently", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	var building string
	if err := pool.QueryRow(ctx, `SELECT query FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, upgrader).Scan(&building); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(building, "units_pending_claim_order") {
		t.Fatalf("the upgrade waits in %q; want 0008's index build", building)
	}

	// The second worker claims the oldest pending unit and adds one.
	writer := pgtest.ApplicationName("bollhav_writer_")
	wpool := testPool(t, pgtest.WithApplicationName(dsn, writer))
	wrote := make(chan error, 1)
	go func() {
		wrote <- pgx.BeginFunc(ctx, wpool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, sqlFor(schema, `UPDATE {schema}.units SET status = 'running', lease_owner = 'w2', lease_until = $1,
				fence = nextval('{schema}.fences'), updated_at = $2
				WHERE id = (SELECT id FROM {schema}.units WHERE status = 'pending' ORDER BY since LIMIT 1)`), at(30), at(3)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, sqlFor(schema, `INSERT INTO {schema}.units (env, model, flexible, since, until, status, updated_at)
				VALUES ('', 'a', false, $1, $2, 'pending', $3)`), at(3), at(4), at(3))
			return err
		})
	}()
	for done := false; !done; {
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatalf("the worker's write during the upgrade: %v", err)
			}
			done = true
		case <-time.After(10 * time.Millisecond):
			if lockWaiters(t, pool, writer) > 0 {
				t.Fatalf("a worker's write waits on a lock while the upgrade builds an index")
			}
		}
	}
	select {
	case err := <-upgraded:
		t.Fatalf("the upgrade finished (%v) before the transaction it waits for ended", err)
	default:
	}

	if err := first.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-upgraded; err != nil {
		t.Fatalf("the upgrade: %v", err)
	}
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	checkVersions(t, pool, schema, len(ms))
	checkIndexesAsNew(t, pool, schema)
	var units string
	if err := pool.QueryRow(ctx, sqlFor(schema, `SELECT string_agg(status || coalesce(':' || nullif(lease_owner, ''), ''), ',' ORDER BY since)
		FROM {schema}.units`)).Scan(&units); err != nil || units != "applied,running:w2,pending,pending" {
		t.Errorf("units after the upgrade = %q, %v; want applied, running (w2's claim), pending, pending (w2's)", units, err)
	}
}

// TestUpgradeRebuildsAnInvalidIndex: an upgrade from version 7 that
// stopped half way — its build of 0008's index failed and left the index
// INVALID, and 0009's first index was built but 0009 never recorded —
// finishes on the next Open: the INVALID index is dropped and built again
// as 0008 says, the valid one is kept as it is, and every migration is
// recorded once.
func TestUpgradeRebuildsAnInvalidIndex(t *testing.T) {
	ctx := t.Context()
	dsn, pool, schema := oldSchema(t, 7, func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		oldUnits(exec, []oldUnit{{"", "a", 0, "pending", nil}, {"", "a", 1, "pending", nil}}, func(int) time.Time { return t0 })
	})
	// A concurrent build that fails leaves its index behind, INVALID: here
	// a unique one, under 0008's name, over two units of one environment.
	_, err := pool.Exec(ctx, sqlFor(schema, `CREATE UNIQUE INDEX CONCURRENTLY units_pending_claim_order ON {schema}.units (env)`))
	if pgCode(err) != codeUniqueViolation {
		t.Fatalf("the failing build: %v, want a unique violation", err)
	}
	if _, err := pool.Exec(ctx, sqlFor(schema, `CREATE INDEX units_sweep_outstanding ON {schema}.units (env, model, since, until) INCLUDE (status) WHERE status <> 'applied'`)); err != nil {
		t.Fatal(err)
	}
	before := indexes(t, pool, schema)
	if !strings.HasSuffix(before["units_pending_claim_order"], " INVALID") {
		t.Fatalf("the failed build left %q, want an INVALID index", before["units_pending_claim_order"])
	}
	oid := func(name string) uint32 {
		t.Helper()
		var o uint32
		if err := pool.QueryRow(ctx, `SELECT to_regclass($1)::oid`, quoteIdent(schema)+"."+quoteIdent(name)).Scan(&o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	kept := oid("units_sweep_outstanding")

	s, err := Open(ctx, dsn, Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open after a half-done upgrade: %v", err)
	}
	defer s.Close()
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	checkVersions(t, pool, schema, len(ms))
	checkIndexesAsNew(t, pool, schema)
	if oid("units_sweep_outstanding") != kept {
		t.Error("the valid index an earlier attempt built was built again")
	}
}

// TestFailedIndexBuildIsNotRecorded: a migration whose concurrent build
// fails (a unique index over duplicates) is not recorded and runs none of
// the rest of its SQL; the store stays at the version before it, with the
// index INVALID. Once the duplicates are gone the next migrate drops that
// index, builds it, runs the rest and records the migration.
func TestFailedIndexBuildIsNotRecorded(t *testing.T) {
	ctx := t.Context()
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	_, pool, schema := oldSchema(t, len(ms), func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		oldUnits(exec, []oldUnit{{"", "a", 0, "pending", nil}, {"", "a", 1, "pending", nil}}, func(int) time.Time { return t0 })
	})
	next := migration{version: len(ms) + 1, name: "next", sql: `
		CREATE UNIQUE INDEX CONCURRENTLY units_one_per_model ON {schema}.units (env, model);
		ALTER TABLE {schema}.units ADD COLUMN note text;`}
	describe := func() string {
		t.Helper()
		var note bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'units' AND column_name = 'note')`,
			schema).Scan(&note); err != nil {
			t.Fatal(err)
		}
		var version int
		if err := pool.QueryRow(ctx, sqlFor(schema, `SELECT max(version) FROM {schema}.schema_version`)).Scan(&version); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("version %d, note %v, index %q", version, note, indexes(t, pool, schema)["units_one_per_model"])
	}
	const def = "CREATE UNIQUE INDEX units_one_per_model ON {schema}.units USING btree (env, model)"

	v, err := migrate(ctx, pool, schema, append(ms, next))
	if pgCode(err) != codeUniqueViolation || v != 0 {
		t.Fatalf("migrate with a failing build = %d, %v; want a unique violation", v, err)
	}
	if got, want := describe(), fmt.Sprintf("version %d, note false, index %q", len(ms), def+" INVALID"); got != want {
		t.Fatalf("after the failed build: %s; want %s", got, want)
	}

	if _, err := pool.Exec(ctx, sqlFor(schema, `DELETE FROM {schema}.units WHERE since = $1`), at(1)); err != nil {
		t.Fatal(err)
	}
	if v, err := migrate(ctx, pool, schema, append(ms, next)); err != nil || v != next.version {
		t.Fatalf("migrate once the duplicate is gone = %d, %v; want %d", v, err, next.version)
	}
	if got, want := describe(), fmt.Sprintf("version %d, note true, index %q", next.version, def); got != want {
		t.Errorf("after the second migrate: %s; want %s", got, want)
	}
}
