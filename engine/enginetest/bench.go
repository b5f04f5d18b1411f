package enginetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// What the throughput benchmarks (engine's EngineThroughput, the
// executor's WarehouseThroughput) share: their unit count, store handles
// for several workers, the timed drain, and the floor they are measured
// against.

// BenchUnits is the number of units a throughput benchmark drains: def,
// or the count the environment variable env gives, at least 10.
func BenchUnits(b *testing.B, env string, def int) int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 10 {
		b.Fatalf("%s=%q: want a unit count of at least 10", env, v)
	}
	return n
}

// Drain times workers work loops (work(ctx, i) is loop i, an Engine.Work
// over a store handle of its own, until ctx ends) until wait, given when
// they started, returns how long the units took to be applied. Only the
// draining is timed; the loops are stopped after, and a loop that ended in
// an error fails b.
func Drain(b *testing.B, workers int, work func(ctx context.Context, i int) error, wait func(started time.Time) time.Duration) time.Duration {
	workCtx, stop := context.WithCancel(b.Context())
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	b.StartTimer()
	started := time.Now()
	for i := range workers {
		wg.Go(func() { errs <- work(workCtx, i) })
	}
	elapsed := wait(started)
	b.StopTimer()
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatalf("worker: %v", err)
		}
	}
	return elapsed
}

// OpenHandles opens n handles on one fresh store: for PostgreSQL one
// schema and n connection pools, for SQLite one file in dir opened n
// times. Each is closed when b ends.
func OpenHandles(b *testing.B, backend, dir string, n int) []state.Store {
	ctx := b.Context()
	var open func() (state.Store, error)
	switch backend {
	case Postgres:
		dsn := pgtest.DSN(b)
		schema := pgtest.Schema(b, dsn) // registered first, so it drops after the stores close
		open = func() (state.Store, error) { return postgres.Open(ctx, dsn, postgres.Options{Schema: schema}) }
	case SQLite:
		path := filepath.Join(dir, "state.db")
		open = func() (state.Store, error) { return sqlite.Open(ctx, path) }
	default:
		b.Fatalf("unknown backend %q", backend)
	}
	stores := make([]state.Store, n)
	for i := range stores {
		s, err := open()
		if err != nil {
			b.Fatalf("open %s store: %v", backend, err)
		}
		b.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	return stores
}

// The floor: pgbench's TPS (tpcb-like, scale 4, 4 clients, 2 threads, 10 s)
// against a scratch database on the benchmark's server, measured once per
// process however many sub-benchmarks and iterations ask for it.
var (
	floorOnce  sync.Once
	floorTPS   float64
	floorError error
)

const pgbenchDatabase = "bollhav_pgbench"

// PgbenchFloor is pgbench's TPS on the server at dsn, measured on the
// first call of the process.
func PgbenchFloor(dsn string) (float64, error) {
	floorOnce.Do(func() { floorTPS, floorError = measurePgbench(dsn) })
	return floorTPS, floorError
}

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// measurePgbench recreates the scratch database with the client tools
// (dropdb, createdb), initialises it with pgbench -i and runs pgbench. The
// connection goes through the PG* environment variables, so no password
// appears on a command line or in an error.
func measurePgbench(dsn string) (float64, error) {
	for _, tool := range []string{"pgbench", "createdb", "dropdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			return 0, fmt.Errorf("%s is not on PATH (install the PostgreSQL client tools)", tool)
		}
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("the test DSN does not parse")
	}
	env := append(os.Environ(), "PGHOST="+cfg.Host, "PGPORT="+strconv.Itoa(int(cfg.Port)), "PGUSER="+cfg.User,
		"PGPASSWORD="+cfg.Password, "PGDATABASE="+pgbenchDatabase)
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s: %v: %s", name, err, lastLine(out))
		}
		return string(out), nil
	}
	drop := func() (string, error) {
		return run("dropdb", "--if-exists", "--maintenance-db="+cfg.Database, pgbenchDatabase)
	}
	if _, err := drop(); err != nil {
		return 0, err
	}
	defer func() { _, _ = drop() }()
	if _, err := run("createdb", "--maintenance-db="+cfg.Database, pgbenchDatabase); err != nil {
		return 0, err
	}
	if _, err := run("pgbench", "-i", "-s", "4", "-q"); err != nil {
		return 0, err
	}
	out, err := run("pgbench", "-c", "4", "-j", "2", "-T", "10")
	if err != nil {
		return 0, err
	}
	m := tpsLine.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps line: %s", lastLine([]byte(out)))
	}
	return strconv.ParseFloat(m[1], 64)
}

func lastLine(out []byte) string {
	lines := regexp.MustCompile(`\S[^\n]*`).FindAll(out, -1)
	if len(lines) == 0 {
		return "(no output)"
	}
	return string(lines[len(lines)-1])
}
