package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// upgradeFromVersion is the schema BenchmarkUpgradeLock upgrades: the last
// before 0008, the first migration that builds an index on units.
const upgradeFromVersion = 7

// BenchmarkUpgradeLock is issue 35's figure: how long an upgrade of a large
// store makes a worker's write wait. It builds a version-7 store of
// BOLLHAV_BENCH_UNITS units (skipped when unset) over BOLLHAV_BENCH_MODELS
// models, 90% of each model's hours applied and the rest pending, then
// upgrades it to this release while a writer, as one worker of the
// earlier release, claims a pending unit, completes a running one or adds
// a pending one every 10 ms, each its own transaction on units.
//
// build=concurrent is this release's upgrade; build=in-transaction runs the
// same migrations the way earlier releases did, in one transaction with
// plain index builds, for the figure before (up to 1M units). ns/op and upgrade-s are the
// upgrade's time; max-write-wait-ms is the longest any write took from
// its start to its commit while the upgrade ran (goal: under a second),
// and write-floor-ms the longest before it began. lock-wait-samples/op
// counts the times (sampled every 5 ms) the writer was seen waiting on a
// lock; -v logs every wait seen, beside what the upgrade ran then.
func BenchmarkUpgradeLock(b *testing.B) {
	if os.Getenv(gen.BenchUnitsEnvVar) == "" {
		b.Skipf("%s is unset: the upgrade is only worth timing at a production store's size", gen.BenchUnitsEnvVar)
	}
	units, models := gen.BenchUnits(), gen.BenchConfig(0).Models
	dsn := pgtest.DSN(b)
	ms, err := embeddedMigrations()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"concurrent", "in-transaction"} {
		b.Run(fmt.Sprintf("units=%s/build=%s", gen.SizeName(units), mode), func(b *testing.B) {
			if mode == "in-transaction" && units > 1_000_000 {
				// Its figure is the whole upgrade at any size, and its
				// fixture takes a quarter of an hour at 10M.
				b.Skip("the earlier releases' upgrade is measured up to 1M units")
			}
			var waits upgradeWaits
			for range b.N {
				b.StopTimer()
				schema, pool := upgradeFixture(b, dsn, units, models, ms)
				w := timeUpgrade(b, dsn, schema, pool, ms, mode == "concurrent")
				waits.upgrade += w.upgrade
				waits.max = max(waits.max, w.max)
				waits.floor = max(waits.floor, w.floor)
				waits.writes += w.writes
				waits.lockWaits += w.lockWaits
			}
			b.ReportMetric(waits.upgrade.Seconds()/float64(b.N), "upgrade-s")
			b.ReportMetric(float64(waits.max.Microseconds())/1000, "max-write-wait-ms")
			b.ReportMetric(float64(waits.floor.Microseconds())/1000, "write-floor-ms")
			b.ReportMetric(float64(waits.writes)/float64(b.N), "writes/op")
			b.ReportMetric(float64(waits.lockWaits)/float64(b.N), "lock-wait-samples/op")
		})
	}
}

// upgradeWaits is what one timed upgrade measured.
type upgradeWaits struct {
	upgrade    time.Duration // the upgrade, start to finish
	max, floor time.Duration // the longest write during it, and before it
	writes     int           // writes that committed during it
	lockWaits  int           // samples that saw the writer wait on a lock
}

// upgradeFixture makes a version-7 store of units units over models models
// in a schema of its own, dropped when b ends, and returns it with a pool
// on it. The units are written in one statement with the version-7 indexes
// on units dropped and then built again, which is faster than keeping them
// up to date row by row and leaves the same indexes. Most of its time is
// the GiST index on applied spans version 7 had: about 5 s for 100k units
// here.
func upgradeFixture(b *testing.B, dsn string, units, models int, ms []migration) (string, *pgxpool.Pool) {
	b.Helper()
	ctx := b.Context()
	started := time.Now()
	schema := pgtest.Schema(b, dsn)
	pool, err := pgxpool.New(ctx, gen.FixtureDSN(dsn))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	if v, err := migrate(ctx, pool, schema, ms[:upgradeFromVersion]); err != nil || v != upgradeFromVersion {
		b.Fatalf("a version %d schema: %d, %v", upgradeFromVersion, v, err)
	}
	// One connection for the whole fixture, so that its session setting
	// holds for the index builds.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	exec := func(sql string, args ...any) {
		b.Helper()
		if _, err := conn.Exec(ctx, sqlFor(schema, sql), args...); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`SET maintenance_work_mem = '512MB'`)
	type index struct{ Name, Def string }
	rows, err := conn.Query(ctx, `SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = to_regclass($1) AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
		quoteIdent(schema)+".units")
	var idx []index
	if err == nil {
		idx, err = pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, i := range idx {
		exec(`DROP INDEX {schema}.` + quoteIdent(i.Name))
	}

	perModel := max(units/models, 1)
	exec(`INSERT INTO {schema}.models (env, name, task_id, pipeline, temporality, flexibility, grain,
		timezone, start_at, definition, content_hash, registered_at, longest_unit)
		SELECT '', 'm' || lpad(m::text, 6, '0'), m + 1, 'p', 'temporal', 'fix', '1h', 'UTC', $1, '{}', 'h', $1, 3600000000
		FROM generate_series(0, $2 - 1) m`, t0, models)
	exec(`INSERT INTO {schema}.units (env, model, flexible, since, until, status, applied_at, updated_at, fingerprint)
		SELECT '', 'm' || lpad((n / $2)::text, 6, '0'), false,
		       $1::timestamptz + (n % $2) * interval '1 hour', $1::timestamptz + (n % $2 + 1) * interval '1 hour',
		       CASE WHEN n % $2 < $2 * 9 / 10 THEN 'applied' ELSE 'pending' END,
		       CASE WHEN n % $2 < $2 * 9 / 10 THEN $1::timestamptz + (n % $2 + 1) * interval '1 hour' END,
		       $1,
		       CASE WHEN n % $2 < $2 * 9 / 10 THEN 'f1' END
		FROM generate_series(0, $3::bigint - 1) n`, t0, perModel, units)
	exec(`INSERT INTO {schema}.applied_counts (env, model, fingerprint, units)
		SELECT env, model, fingerprint, count(*) FROM {schema}.units WHERE status = 'applied' GROUP BY env, model, fingerprint`)
	for _, i := range idx {
		exec(i.Def)
	}
	exec(`VACUUM (ANALYZE) {schema}.units`)
	b.Logf("a version %d store of %d units over %d models in %v", upgradeFromVersion, units, models, time.Since(started).Round(time.Second))
	return schema, pool
}

// timeUpgrade upgrades schema to ms's newest version, concurrently as this
// release does or the earlier way, while a writer writes to its units, and
// returns what it measured. The upgrade and the writer use pools of their
// own on dsn, with the server's commit settings (the fixture's pool does
// not wait for its commits to reach the disk).
func timeUpgrade(b *testing.B, dsn, schema string, pool *pgxpool.Pool, ms []migration, concurrent bool) upgradeWaits {
	b.Helper()
	ctx := b.Context()
	upgrader, writer := pgtest.ApplicationName("bollhav_bench_upgrade_"), pgtest.ApplicationName("bollhav_bench_writer_")
	upool, err := pgxpool.New(ctx, pgtest.WithApplicationName(dsn, upgrader))
	if err != nil {
		b.Fatal(err)
	}
	defer upool.Close()
	wpool, err := pgxpool.New(ctx, pgtest.WithApplicationName(dsn, writer))
	if err != nil {
		b.Fatal(err)
	}
	defer wpool.Close()
	w := newUnitWriter(b, wpool, schema)

	// The writer's floor: its slowest of 100 writes with nothing else on.
	var floor time.Duration
	for range 100 {
		took, err := w.write(ctx)
		if err != nil {
			b.Fatal(err)
		}
		floor = max(floor, took)
	}

	stop := make(chan struct{})
	type result struct {
		waits  []time.Duration
		writes int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- r
				return
			case <-tick.C:
			}
			took, err := w.write(ctx)
			if err != nil {
				r.err = err
				done <- r
				return
			}
			r.waits = append(r.waits, took)
			r.writes++
		}
	}()

	waits := sampleWaits(ctx, pool, writer, upgrader, stop)

	b.StartTimer()
	started := time.Now()
	if concurrent {
		_, err = migrate(ctx, upool, schema, ms)
	} else {
		err = upgradeInOneTransaction(ctx, upool, schema, ms)
	}
	upgrade := time.Since(started)
	b.StopTimer()
	close(stop)
	r := <-done
	seen := <-waits
	if err != nil {
		b.Fatalf("the upgrade: %v", err)
	}
	if r.err != nil {
		b.Fatalf("the writer: %v", r.err)
	}
	var version int
	if err := pool.QueryRow(ctx, sqlFor(schema, `SELECT max(version) FROM {schema}.schema_version`)).Scan(&version); err != nil || version != len(ms) {
		b.Fatalf("after the upgrade: version %d, %v; want %d", version, err, len(ms))
	}
	lockWaits := 0
	for what, n := range seen {
		b.Logf("the writer waited on %s: %d samples", what, n)
		if strings.HasPrefix(what, "Lock:") {
			lockWaits += n
		}
	}
	return upgradeWaits{upgrade: upgrade, max: slices.Max(append(r.waits, 0)), floor: floor, writes: r.writes, lockWaits: lockWaits}
}

// sampleWaits looks at the writer's backend every 5 ms until stop, and
// counts what it was seen waiting on (wait_event_type:wait_event) beside
// what the upgrader ran then: a lock the upgrade holds shows as a Lock
// wait, a slow disk as an IO or WAL one.
func sampleWaits(ctx context.Context, pool *pgxpool.Pool, writer, upgrader string, stop <-chan struct{}) <-chan map[string]int {
	out := make(chan map[string]int, 1)
	go func() {
		seen := map[string]int{}
		defer func() { out <- seen }()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var what string
			err := pool.QueryRow(ctx, `SELECT w.wait_event_type || ':' || w.wait_event || ' while the upgrade ran '
				|| coalesce((SELECT left(regexp_replace(u.query, '\s+', ' ', 'g'), 70) FROM pg_stat_activity u
				             WHERE u.application_name = $2 AND u.state = 'active' LIMIT 1), 'nothing')
				FROM pg_stat_activity w WHERE w.application_name = $1 AND w.state = 'active' AND w.wait_event_type IS NOT NULL`,
				writer, upgrader).Scan(&what)
			if err == nil {
				seen[what]++
			} else if !errors.Is(err, pgx.ErrNoRows) {
				seen["(sampling failed: "+err.Error()+")"]++
				return
			}
		}
	}()
	return out
}

// upgradeInOneTransaction upgrades schema as releases before issue 35 did:
// every pending migration, index builds plain, in one transaction.
func upgradeInOneTransaction(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, m := range ms[upgradeFromVersion:] {
			if err := apply(ctx, tx, schema, m, m.plain()); err != nil {
				return err
			}
		}
		return nil
	})
}

// unitWriter writes to a store's units as a worker of an earlier release
// would, one transaction a write: it claims a pending unit, completes the
// unit it claimed, then adds a pending unit after the last hour, in turn.
type unitWriter struct {
	pool    *pgxpool.Pool
	schema  string
	pending []int64 // units to claim, oldest first
	claimed int64   // the unit claimed last, 0 once completed
	added   int     // the hours added so far
	n       int
}

func newUnitWriter(b *testing.B, pool *pgxpool.Pool, schema string) *unitWriter {
	b.Helper()
	rows, err := pool.Query(b.Context(), sqlFor(schema, `SELECT id FROM {schema}.units WHERE status = 'pending' ORDER BY id LIMIT 100000`))
	var ids []int64
	if err == nil {
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		b.Fatal(err)
	}
	return &unitWriter{pool: pool, schema: schema, pending: ids}
}

// write makes the next write and returns how long it took to commit.
func (w *unitWriter) write(ctx context.Context) (time.Duration, error) {
	var sql string
	var args []any
	switch {
	case w.claimed != 0:
		sql, args = `UPDATE {schema}.units SET status = 'applied', applied_at = $2, lease_owner = '', lease_until = NULL, updated_at = $2
			WHERE id = $1 AND status = 'running'`, []any{w.claimed, t0}
		w.claimed = 0
	case w.n%2 == 0 && len(w.pending) > 0:
		w.claimed, w.pending = w.pending[0], w.pending[1:]
		sql, args = `UPDATE {schema}.units SET status = 'running', lease_owner = 'bench', lease_until = $2,
			fence = nextval('{schema}.fences'), attempts = attempts + 1, updated_at = $3 WHERE id = $1 AND status = 'pending'`,
			[]any{w.claimed, t0.Add(time.Hour), t0}
	default:
		w.added++
		sql, args = `INSERT INTO {schema}.units (env, model, flexible, since, until, status, updated_at)
			VALUES ('', 'bench', false, $1, $2, 'pending', $3)`, []any{at(w.added), at(w.added + 1), t0}
	}
	w.n++
	started := time.Now()
	tag, err := w.pool.Exec(ctx, sqlFor(w.schema, sql), args...)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("%s: %d rows, want 1", sql, tag.RowsAffected())
	}
	return time.Since(started), err
}
