package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// coverageRows is the size of the coverage figure: a flexible model with
// this many applied rows.
const coverageRows = 100_000

// BenchmarkCoverage computes the coverage of a flexible model with 100,000
// applied one-hour rows and a hole every 1,000 hours two ways: in Go, the
// applied rows (Store.Applied) unioned by state.NewIntervalSet (ns/op), and
// in PostgreSQL, range_agg over the same rows (Store.Coverage, floor-ns/op).
// Both must give the same set.
func BenchmarkCoverage(b *testing.B) {
	dsn := pgtest.DSN(b)
	schema := pgtest.Schema(b, dsn)
	s := openStore(b, gen.FixtureDSN(dsn), schema)
	ctx := b.Context()
	start := time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.Add(200_000 * time.Hour)
	rec := state.ModelRecord{Name: "raw.events", Pipeline: "ingest", Temporality: "temporal", Flexibility: "flex",
		Interval: "1h", Timezone: "UTC", Start: start, Definition: []byte(`{}`), ContentHash: "bench"}
	if _, err := s.Register(ctx, "", []state.ModelRecord{rec}, nil, now); err != nil {
		b.Fatal(err)
	}
	var ws []state.Window
	for h := 0; len(ws) < coverageRows; h++ {
		if h%1000 == 999 {
			continue // a hole: no unit covers this hour
		}
		since := start.Add(time.Duration(h) * time.Hour)
		ws = append(ws, state.Window{Since: since, Until: since.Add(time.Hour)})
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: rec.Name, Windows: ws, Now: now}); err != nil {
		b.Fatal(err)
	}
	n, err := s.SetStatus(ctx, state.StatusChange{Model: rec.Name, From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: now, Now: now})
	if err != nil || n != coverageRows {
		b.Fatalf("applied %d rows, %v; want %d", n, err, coverageRows)
	}
	// Both sides read a vacuumed table, not the dead rows the update left.
	if err := pgtest.Exec(dsn, "VACUUM ANALYZE "+pgx.Identifier{schema, "units"}.Sanitize()); err != nil {
		b.Fatal(err)
	}

	var inGo state.IntervalSet
	for b.Loop() {
		rows, err := s.Applied(ctx, "", rec.Name, state.Window{})
		if err != nil {
			b.Fatal(err)
		}
		windows := make([]state.Window, len(rows))
		for i, r := range rows {
			windows[i] = r.Window
		}
		inGo = state.NewIntervalSet(windows...)
	}

	runs := min(b.N, 5)
	started := time.Now()
	var inSQL state.IntervalSet
	for range runs {
		if inSQL, err = s.Coverage(ctx, "", rec.Name, state.Window{}); err != nil {
			b.Fatal(err)
		}
	}
	floor := time.Since(started) / time.Duration(runs)
	if !inGo.Equal(inSQL) || inGo.Len() != coverageRows/999+1 {
		b.Fatalf("Go coverage has %d islands, range_agg %d; want the same %d", inGo.Len(), inSQL.Len(), coverageRows/999+1)
	}
	b.ReportMetric(float64(floor.Nanoseconds()), "floor-ns/op")
}
