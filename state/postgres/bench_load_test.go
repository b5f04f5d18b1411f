package postgres_test

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/state"
)

// loadColumns are the columns ScanUnits reads, in its order, for the floor.
const loadColumns = `u.id, u.env, u.model, u.since, u.until, u.status, u.applied_at, u.blocked_reason,
	u.error, u.attempts, u.run_id, u.lease_owner, u.lease_until, u.fence, u.rows_written, u.updated_at`

// BenchmarkLoad reads every unit of a generated store into memory as
// state.Unit values, through ScanUnits over the whole environment (one op),
// and measures the floor in the same run: psql copying the same rows —
// the same columns, filter and order — to /dev/null, the server's own
// fastest way out. Its time is floor-ns/op. BOLLHAV_BENCH_UNITS sets the
// size (10,000 when unset).
func BenchmarkLoad(b *testing.B) {
	g := sharedProject(b)
	psql, err := exec.LookPath("psql")
	if err != nil {
		b.Skip("no psql on PATH for the COPY floor")
	}
	s := g.store
	units := make([]state.Unit, 0, g.summary.Units)
	for b.Loop() {
		units = units[:0]
		err := s.ScanUnits(b.Context(), state.UnitQuery{}, func(u state.Unit) error {
			units = append(units, u)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if len(units) != g.summary.Units {
		b.Fatalf("loaded %d units, the store holds %d", len(units), g.summary.Units)
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)

	cfg, err := pgconn.ParseConfig(g.dsn)
	if err != nil {
		b.Fatal(err)
	}
	table := pgx.Identifier{g.schema, "units"}.Sanitize()
	copySQL := `COPY (SELECT ` + loadColumns + ` FROM ` + table + ` u WHERE u.env = '' ORDER BY u.model, u.since, u.until) TO STDOUT`
	runs := min(b.N, 3)
	var floor time.Duration
	for range runs {
		cmd := exec.CommandContext(b.Context(), psql, "-X", "-q", "-h", cfg.Host, "-p", strconv.Itoa(int(cfg.Port)), "-U", cfg.User, "-d", cfg.Database, "-c", copySQL)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+cfg.Password)
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = devNull
		started := time.Now()
		err = cmd.Run()
		floor += time.Since(started)
		devNull.Close()
		if err != nil {
			b.Fatalf("psql COPY: %v", err)
		}
	}
	b.ReportMetric(float64(floor.Nanoseconds())/float64(runs), "floor-ns/op")
	b.ReportMetric(float64(len(units))/perOp, "units/s")
}
