package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// The gate sweep's baseline: the verdict of every unit that is not applied,
// computed by PostgreSQL alone in one set-based query — coverage with
// range_agg and containment, freshness with min/max over the applied rows
// each level selects, hard errors from the registrations. Its answers must
// equal engine.GateSweep's unit for unit (TestGateSweepSQLAgrees), which
// makes each the other's proof; BenchmarkGateSweepSQL then times them side
// by side. What the query is given besides the tables is what a run knows
// before any unit: the edges (downstream, upstream, level, freshness) of the
// models, and each upstream's contract range end at now, which is grid
// arithmetic over a registration, not per-unit work.
const gateSweepSQL = `
WITH edge AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bool[], $7::timestamptz[])
        AS e (down, up, level, within_us, scope_all, up_end)
), up AS (
    -- Each upstream once, its coverage only when a level needs it.
    SELECT m.name, m.temporality, m.flexibility, m.start_at, m.longest_unit,
           CASE WHEN n.coverage THEN (
               SELECT range_agg(a.span) FROM {schema}.units a
               WHERE a.env = $1 AND a.model = m.name AND a.status = 'applied' AND a.span IS NOT NULL) END AS cov
    FROM (SELECT up, bool_or(level IN ('ENCAPSULATE', 'THROUGH', 'WHOLE')) AS coverage FROM edge GROUP BY up) n
    JOIN {schema}.models m ON m.env = $1 AND m.name = n.up
), todo AS (
    SELECT u.id, u.model, u.since, u.until, u.span FROM {schema}.units u
    WHERE u.env = $1 AND u.status <> 'applied'
), pair AS (
    SELECT t.id, t.since, t.until, t.span, e.up, e.level, e.within_us, e.scope_all, e.up_end,
           p.name IS NOT NULL AS registered, p.temporality, p.flexibility, p.start_at, p.longest_unit, p.cov,
           $8::timestamptz - e.within_us * interval '1 microsecond' AS cut
    FROM todo t JOIN edge e ON e.down = t.model LEFT JOIN up p ON p.name = e.up
), verdict AS (
    -- Hard errors fail; EXISTS only needs the registration.
    SELECT id, registered AND level = 'EXISTS' AS ok FROM pair
    WHERE NOT registered OR level = 'EXISTS'
       OR level IN ('EXACT', 'ENCAPSULATE', 'THROUGH')
          AND (temporality = 'timeless' OR level = 'EXACT' AND flexibility = 'flex' OR span IS NULL)
    UNION ALL
    -- EXACT: the applied row at exactly this window, fresh enough.
    SELECT p.id, coalesce(x.applied_at >= p.cut, x.applied_at IS NOT NULL)
    FROM pair p LEFT JOIN {schema}.units x
        ON x.env = $1 AND x.model = p.up AND x.status = 'applied' AND x.since = p.since AND x.until = p.until
    WHERE p.registered AND p.level = 'EXACT' AND p.temporality = 'temporal' AND p.flexibility = 'fix' AND p.span IS NOT NULL
    UNION ALL
    -- ENCAPSULATE, THROUGH and WHOLE of a temporal upstream: the coverage
    -- holds the range the level needs, and the rows touching it are fresh.
    SELECT n.id, coalesce(n.cov @> n.need, false) AND (n.within_us IS NULL OR coalesce((
        SELECT CASE WHEN n.scope_all THEN min(a.applied_at) ELSE max(a.applied_at) END >= n.cut
        FROM {schema}.units a
        WHERE a.env = $1 AND a.model = n.up AND a.status = 'applied' AND a.span && n.need
          -- The rows overlapping need, as a range scan of units_sweep_applied.
          AND a.since < upper(n.need) AND a.until > lower(n.need)
          AND a.since >= lower(n.need) - n.longest_unit * interval '1 microsecond'), false))
    FROM (
        SELECT p.*, CASE p.level
            WHEN 'ENCAPSULATE' THEN p.span
            WHEN 'THROUGH' THEN tstzrange(least(p.start_at, p.since), p.until, '[)')
            ELSE CASE WHEN p.up_end > p.start_at THEN tstzrange(p.start_at, p.up_end, '[)') END
        END AS need
        FROM pair p
        WHERE p.registered AND p.temporality = 'temporal'
          AND (p.level IN ('ENCAPSULATE', 'THROUGH') AND p.span IS NOT NULL OR p.level = 'WHOLE')
    ) n
    UNION ALL
    -- WHOLE of a timeless upstream: its existence row applied, fresh.
    SELECT p.id, coalesce((
        SELECT count(*) > 0 AND (p.within_us IS NULL OR
               CASE WHEN p.scope_all THEN min(a.applied_at) ELSE max(a.applied_at) END >= p.cut)
        FROM {schema}.units a WHERE a.env = $1 AND a.model = p.up AND a.status = 'applied'), false)
    FROM pair p
    WHERE p.registered AND p.level = 'WHOLE' AND p.temporality = 'timeless'
)
SELECT t.model, t.since, t.until, coalesce(bool_and(v.ok), true)
FROM todo t LEFT JOIN verdict v ON v.id = t.id
GROUP BY t.id, t.model, t.since, t.until`

// sqlVerdict is one unit's verdict from the baseline.
type sqlVerdict struct {
	key       string
	satisfied bool
}

// unitKey names a unit for comparing the two sweeps: model and window in
// Unix microseconds (a timeless existence row has none).
func unitKey(model string, w state.Window) string {
	if w.IsZero() {
		return model + " existence"
	}
	return fmt.Sprintf("%s %d %d", model, w.Since.UnixMicro(), w.Until.UnixMicro())
}

// sweepSQL runs the baseline for e's environment over schema and returns
// every unit's verdict, by key.
func sweepSQL(ctx context.Context, conn *pgx.Conn, schema string, e *engine.Engine) ([]sqlVerdict, error) {
	now := e.Clock()
	recs, err := e.Models(ctx)
	if err != nil {
		return nil, err
	}
	ends := map[string]pgtype.Timestamptz{}
	for _, rec := range recs {
		ends[rec.Name] = contractEnd(rec, now)
	}
	var downs, ups, levels []string
	var withins []*int64
	var alls []bool
	var upEnds []pgtype.Timestamptz
	for _, m := range e.Spec().Models {
		for _, src := range m.Upstream {
			if !src.Gated() || m.GateSkipped(src, e.Env()) {
				continue
			}
			downs, ups, levels = append(downs, m.Name), append(ups, src.Name), append(levels, src.Contract.String())
			var within *int64
			all := false
			if f := src.Freshness; f != nil {
				us := f.Within.Microseconds()
				within, all = &us, f.Scope == spec.All
			}
			withins, alls, upEnds = append(withins, within), append(alls, all), append(upEnds, ends[src.Name])
		}
	}
	q := pgx.Identifier{schema}.Sanitize()
	rows, err := conn.Query(ctx, strings.ReplaceAll(gateSweepSQL, "{schema}", q), e.Env().Suffix, downs, ups, levels, withins, alls, upEnds, now)
	if err != nil {
		return nil, err
	}
	var out []sqlVerdict
	var (
		model        string
		since, until pgtype.Timestamptz
		ok           bool
	)
	_, err = pgx.ForEachRow(rows, []any{&model, &since, &until, &ok}, func() error {
		w := state.Window{}
		if since.Valid {
			w = state.Window{Since: since.Time, Until: until.Time}
		}
		out = append(out, sqlVerdict{key: unitKey(model, w), satisfied: ok})
		return nil
	})
	return out, err
}

// contractEnd is the until of a registered temporal model's contract range
// at now (the grid's last complete window, or its end), NULL when the range
// is empty or the model is timeless.
func contractEnd(rec state.ModelRecord, now time.Time) pgtype.Timestamptz {
	if rec.Temporality != "temporal" {
		return pgtype.Timestamptz{}
	}
	iv, err1 := state.ParseInterval(rec.Interval)
	loc, err2 := state.LoadLocation(rec.Timezone)
	g, err3 := state.NewGrid(rec.Start, iv, loc)
	if err1 != nil || err2 != nil || err3 != nil {
		return pgtype.Timestamptz{}
	}
	r, ok := g.ContractRange(now, rec.End)
	if !ok {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: r.Until, Valid: true}
}

// sweepEngine runs the engine's sweep and returns every unit's verdict, by
// key: satisfied is Ready.
func sweepEngine(ctx context.Context, e *engine.Engine) ([]sqlVerdict, *gate.SweepReport, error) {
	var out []sqlVerdict
	rep, err := e.GateSweep(ctx, gate.BlockedFilter{}, func(u gate.SweptUnit) error {
		out = append(out, sqlVerdict{key: unitKey(u.Model, u.Window), satisfied: u.Readiness == gate.Ready})
		return nil
	})
	return out, rep, err
}

// generated is a generated project in a PostgreSQL schema: engine is
// over store with the project's spec and clock (now).
type generated struct {
	dsn, schema string
	store       state.Store
	spec        *spec.Spec
	now         func() time.Time
	engine      *engine.Engine
	summary     gen.Summary
}

// generate populates a fresh schema, dropped when tb ends, with the project
// of cfg.
func generate(tb testing.TB, cfg gen.Config) *generated {
	tb.Helper()
	dsn := pgtest.DSN(tb)
	g, err := populate(tb.Context(), dsn, pgtest.Schema(tb, dsn), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	g.store = openStore(tb, dsn, g.schema)
	g.engine = engine.New(g.store, g.spec, engine.Options{Now: g.now})
	tb.Logf("generated %d models, %d units in %v", g.summary.Models, g.summary.Units, g.summary.Elapsed.Round(time.Millisecond))
	return g
}

// populate fills schema with the project of cfg through a store of its own
// (opened with gen.FixtureDSN, so its commits do not wait for the disk, and
// closed when done), then vacuums the units, so every figure measured on
// it reads a table without the dead rows the population's updates left.
// The returned project has the spec and the clock but no store.
func populate(ctx context.Context, dsn, schema string, cfg gen.Config) (*generated, error) {
	s, err := postgres.Open(ctx, gen.FixtureDSN(dsn), postgres.Options{Schema: schema})
	if err != nil {
		return nil, err
	}
	e, sum, err := gen.Populate(ctx, s, engine.Options{}, cfg)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	// On a connection bound by ctx, not pgtest.Exec: its 30 s bound is too
	// short for a million rows on a loaded machine.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{schema, "units"}.Sanitize()); err != nil {
		return nil, err
	}
	return &generated{dsn: dsn, schema: schema, spec: e.Spec(), now: e.Clock, summary: sum}, nil
}

// conn is a connection of tb's own to the project's database, for the
// baseline's SQL.
func (g *generated) conn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), g.dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// The benchmarks that read the BOLLHAV_BENCH_UNITS project share one copy
// per process: at a million units it takes minutes to write.
var (
	benchOnce  sync.Mutex
	benchProj  *generated
	benchUsers int
)

// benchReaders are the benchmarks that read the shared project.
var benchReaders = []string{"BenchmarkLoad", "BenchmarkGateSweepSQL"}

// sharedProject returns the process's generated project, built on first
// use, with a store of b's own. The schema is dropped when the last of the
// benchmarks this run selects (-test.bench, times -test.count) is done with
// it; should that count be off, a later reader simply builds it again.
func sharedProject(b *testing.B) *generated {
	b.Helper()
	benchOnce.Lock()
	defer benchOnce.Unlock()
	dsn := pgtest.DSN(b)
	if benchProj == nil {
		schema := "bollhav_bench_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		g, err := populate(context.WithoutCancel(b.Context()), dsn, schema, gen.BenchConfig(gen.BenchUnits()))
		if err != nil {
			_ = pgtest.Exec(dsn, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			b.Fatal(err)
		}
		b.Logf("generated %d models, %d units in %v", g.summary.Models, g.summary.Units, g.summary.Elapsed.Round(time.Millisecond))
		benchProj, benchUsers = g, selectedReaders()
	}
	g := benchProj
	benchUsers--
	if benchUsers <= 0 {
		benchProj = nil
		// Registered before the store's Close, so it runs after it.
		b.Cleanup(func() {
			if err := pgtest.Exec(dsn, "DROP SCHEMA IF EXISTS "+pgx.Identifier{g.schema}.Sanitize()+" CASCADE"); err != nil {
				b.Errorf("dropping %s: %v", g.schema, err)
			}
		})
	}
	s := openStore(b, dsn, g.schema)
	return &generated{dsn: g.dsn, schema: g.schema, summary: g.summary, store: s, spec: g.spec, now: g.now,
		engine: engine.New(s, g.spec, engine.Options{Now: g.now})}
}

// selectedReaders counts the runs of benchReaders this process will make:
// those -test.bench selects, -test.count times each.
func selectedReaders() int {
	count := 1
	if f := flag.Lookup("test.count"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			count = n
		}
	}
	f := flag.Lookup("test.bench")
	if f == nil {
		return 1
	}
	re, err := regexp.Compile(strings.Split(f.Value.String(), "/")[0])
	if err != nil {
		return 1
	}
	n := 0
	for _, name := range benchReaders {
		if re.MatchString(name) {
			n++
		}
	}
	return max(n, 1) * count
}

// agree compares the two sweeps row for row.
func agree(tb testing.TB, got, want []sqlVerdict) {
	tb.Helper()
	byKey := func(vs []sqlVerdict) {
		sort.Slice(vs, func(i, j int) bool { return vs[i].key < vs[j].key })
	}
	byKey(got)
	byKey(want)
	if len(got) != len(want) {
		tb.Fatalf("the engine judged %d units, the SQL baseline %d", len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			if bad < 10 {
				tb.Errorf("engine %+v, SQL %+v", got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		tb.Fatalf("%d of %d units disagree", bad, len(got))
	}
}

func TestGateSweepSQLAgrees(t *testing.T) {
	g := generate(t, gen.Config{Models: 120, Units: 30_000, Seed: 2})
	conn := g.conn(t)
	for _, at := range []time.Time{gen.AsOf, gen.AsOf.Add(20 * time.Hour)} {
		// Later, freshness limits and contract ranges have moved on.
		g.engine = engine.New(g.store, g.spec, engine.Options{Now: func() time.Time { return at }})
		fromSQL, err := sweepSQL(t.Context(), conn, g.schema, g.engine)
		if err != nil {
			t.Fatal(err)
		}
		fromEngine, rep, err := sweepEngine(t.Context(), g.engine)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, fromEngine, fromSQL)
		ready := 0
		for _, v := range fromSQL {
			if v.satisfied {
				ready++
			}
		}
		if ready == 0 || ready == len(fromSQL) {
			t.Errorf("at %s: %d of %d units ready; want a mix to compare", at, ready, len(fromSQL))
		}
		stale := 0
		for _, m := range rep.Models {
			stale += m.Stale
		}
		t.Logf("at %s: %d units, %d ready, %d stale", at, len(fromSQL), ready, stale)
	}
}

// BenchmarkGateSweepSQL times engine.GateSweep (ns/op) and, in the same run
// on the same store, the SQL baseline (floor-ns/op), over a generated
// project of BOLLHAV_BENCH_UNITS units (10,000 when unset). The two must
// agree, or the benchmark fails.
func BenchmarkGateSweepSQL(b *testing.B) {
	g := sharedProject(b)
	conn := g.conn(b)
	for b.Loop() {
		if _, err := g.engine.GateSweep(b.Context(), gate.BlockedFilter{}, nil); err != nil {
			b.Fatal(err)
		}
	}
	engineNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	started := time.Now()
	fromSQL, err := sweepSQL(b.Context(), conn, g.schema, g.engine)
	if err != nil {
		b.Fatal(err)
	}
	sqlNs := float64(time.Since(started).Nanoseconds())
	fromEngine, _, err := sweepEngine(b.Context(), g.engine)
	if err != nil {
		b.Fatal(err)
	}
	agree(b, fromEngine, fromSQL)
	b.ReportMetric(sqlNs, "floor-ns/op")
	b.ReportMetric(float64(g.summary.Units)/(engineNs/1e9), "units/s")
	b.ReportMetric(sqlNs/engineNs, "x-faster")
}
