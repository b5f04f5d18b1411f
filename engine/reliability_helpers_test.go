package engine

// Shared machinery of the reliability tests (issue 9, items 1–5): a worker
// process of our own, started by re-executing this test binary, that logs to
// stderr and runs any executor a test asks for; stores whose PostgreSQL
// connections carry an application_name of their own, so a test can find —
// and terminate — exactly its own backends in a database other tests share.

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/state/stores"
)

// The reliability worker's environment. BOLLHAV_REL_WORKER (the backend)
// turns this test binary into a worker process before any test runs.
const (
	relEnvWorker  = "BOLLHAV_REL_WORKER"  // sqlite | postgres
	relEnvDSN     = "BOLLHAV_REL_DSN"     // the SQLite path or the PostgreSQL DSN
	relEnvSchema  = "BOLLHAV_REL_SCHEMA"  // the PostgreSQL store's schema
	relEnvSpec    = "BOLLHAV_REL_SPEC"    // the spec file
	relEnvLease   = "BOLLHAV_REL_LEASE"   // Engine.Lease
	relEnvWorkers = "BOLLHAV_REL_WORKERS" // WorkOptions.Workers
	relEnvName    = "BOLLHAV_REL_NAME"    // WorkOptions.Name
	relEnvExec    = "BOLLHAV_REL_EXEC"    // "" the engine's executor; "log" relLogExec
	relEnvLog     = "BOLLHAV_REL_LOG"     // relLogExec's file
	relEnvDelay   = "BOLLHAV_REL_DELAY"   // relLogExec's time per unit, "model=duration,…"
	// relEnvCrash SIGKILLs the worker after its first warehouse commit,
	// before the store records the unit; relEnvPause SIGSTOPs it before
	// its first warehouse transaction ("1" each).
	relEnvCrash = "BOLLHAV_REL_CRASH_AFTER_WAREHOUSE"
	relEnvPause = "BOLLHAV_REL_PAUSE_BEFORE_WAREHOUSE"
)

// init runs before TestMain: a process started as a reliability worker
// works and exits without running any test.
func init() {
	if os.Getenv(relEnvWorker) != "" {
		os.Exit(relWorkerMain())
	}
}

// relWorkerMain is `bollhav worker` in miniature: it opens the store and
// spec its environment names and works until SIGTERM, logging (the lost
// lease warnings included) to stderr.
func relWorkerMain() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var (
		s   state.Store
		err error
	)
	if os.Getenv(relEnvWorker) == "postgres" {
		s, err = postgres.Open(ctx, os.Getenv(relEnvDSN), postgres.Options{Schema: os.Getenv(relEnvSchema)})
	} else {
		s, err = sqlite.Open(ctx, os.Getenv(relEnvDSN))
	}
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	specPath := os.Getenv(relEnvSpec)
	sp, err := spec.Load(specPath)
	if err != nil {
		return fail(err)
	}
	lease, err := time.ParseDuration(os.Getenv(relEnvLease))
	if err != nil {
		return fail(fmt.Errorf("%s: %w", relEnvLease, err))
	}
	workers, _ := strconv.Atoi(os.Getenv(relEnvWorkers))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// The warehouses are this worker's, as bollhav worker's are its own.
	wh := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	defer wh.Close()
	e := New(s, sp, Options{SpecDir: filepath.Dir(specPath), Actor: "worker", Lease: lease, Log: log, Warehouses: wh})
	var x executor.Executor = e.Executor()
	var once sync.Once
	if os.Getenv(relEnvCrash) == "1" {
		executor.AfterWarehouseCommit = func(string) { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	}
	if os.Getenv(relEnvPause) == "1" {
		executor.BeforeWarehouseUnit = func(string) {
			once.Do(func() {
				if os.Getenv(relEnvWorker) != "postgres" {
					sqliteQuietPoint(ctx, os.Getenv(relEnvDSN))
				}
				_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			})
		}
	}
	if os.Getenv(relEnvExec) == "log" {
		delay := map[string]time.Duration{}
		for _, kv := range strings.Split(os.Getenv(relEnvDelay), ",") {
			if model, d, ok := strings.Cut(kv, "="); ok {
				if delay[model], err = time.ParseDuration(d); err != nil {
					return fail(fmt.Errorf("%s: %w", relEnvDelay, err))
				}
			}
		}
		f, err := os.OpenFile(os.Getenv(relEnvLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		x = &relLogExec{w: f, delay: delay, who: os.Getenv(relEnvName)}
	}
	log.Info("worker started", "pid", os.Getpid())
	if err := e.Work(ctx, x, WorkOptions{Workers: workers, Poll: 50 * time.Millisecond, Name: os.Getenv(relEnvName)}); err != nil {
		return fail(err)
	}
	log.Info("worker stopped")
	return 0
}

// relLogExec is a fast executor with a side effect that outlives its
// process: each execution appends one line to a file, "model since until
// start end who" (times in Unix nanoseconds of the wall clock, which every
// process on the machine shares), written after the work, so a line means
// the executor ran the unit to its end.
type relLogExec struct {
	mu    sync.Mutex
	w     *os.File
	delay map[string]time.Duration // by model
	who   string
}

func (x *relLogExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	start := time.Now().UnixNano()
	if d := x.delay[u.Model.Name]; d > 0 {
		time.Sleep(d)
	}
	var since, until string
	if u.Window != nil {
		since, until = state.FormatTime(u.Window.Since), state.FormatTime(u.Window.Until)
	}
	line := fmt.Sprintf("%s %s %s %d %d %s\n", u.Model.Name, since, until, start, time.Now().UnixNano(), x.who)
	x.mu.Lock()
	_, err := x.w.WriteString(line) // one write(2) with O_APPEND: lines never interleave
	x.mu.Unlock()
	if err != nil {
		return executor.Result{}, err
	}
	n := int64(1)
	return executor.Result{RowsWritten: &n}, nil
}

// relExecLine is one line of a relLogExec file.
type relExecLine struct {
	model      string
	window     state.Window
	start, end int64
	who        string
}

func readExecLines(t *testing.T, paths ...string) []relExecLine {
	t.Helper()
	var out []relExecLine
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		must(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			f := strings.Fields(l)
			if len(f) != 6 {
				t.Fatalf("%s: torn execution line %q", p, l)
			}
			since, err1 := state.ParseTime(f[1])
			until, err2 := state.ParseTime(f[2])
			start, err3 := strconv.ParseInt(f[3], 10, 64)
			end, err4 := strconv.ParseInt(f[4], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				t.Fatalf("%s: bad execution line %q", p, l)
			}
			out = append(out, relExecLine{model: f[0], window: state.MustWindow(since, until), start: start, end: end, who: f[5]})
		}
	}
	return out
}

// relStore is a test's store plus what a worker process needs to open it.
type relStore struct {
	state.Store
	backend string
	// base is the PostgreSQL DSN without an application_name, or the
	// SQLite file.
	base   string
	schema string
	// app is the application_name of this store's connections.
	app string
}

// openRelStore opens a fresh store of the backend. A PostgreSQL store gets
// a schema of its own and connections named app, so that the test can tell
// its backends from every other test's.
func openRelStore(t *testing.T, backend, app string) *relStore {
	t.Helper()
	r := &relStore{backend: backend, app: app}
	var err error
	switch backend {
	case "sqlite":
		r.base = filepath.Join(t.TempDir(), "state.db")
		r.Store, err = sqlite.Open(t.Context(), r.base)
	case "postgres":
		r.base = pgtest.DSN(t)
		r.schema = pgtest.Schema(t, r.base) // registered first, so it drops after Close
		r.Store, err = postgres.Open(t.Context(), pgtest.WithApplicationName(r.base, app), postgres.Options{Schema: r.schema})
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	if err != nil {
		t.Fatalf("open %s store: %v", backend, err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// open opens another store on the same database (another connection pool,
// as another process would have), with connections named app.
func (r *relStore) open(t *testing.T, app string) state.Store {
	t.Helper()
	var (
		s   state.Store
		err error
	)
	if r.backend == "postgres" {
		s, err = postgres.Open(t.Context(), pgtest.WithApplicationName(r.base, app), postgres.Options{Schema: r.schema})
	} else {
		s, err = sqlite.Open(t.Context(), r.base)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// workerEnv is the environment of a worker process on this store whose
// connections are named app.
func (r *relStore) workerEnv(app string) []string {
	env := []string{relEnvWorker + "=" + r.backend, relEnvSchema + "=" + r.schema}
	if r.backend == "postgres" {
		return append(env, relEnvDSN+"="+pgtest.WithApplicationName(r.base, app))
	}
	return append(env, relEnvDSN+"="+r.base)
}

// relName is a name no other test uses.
func relName(prefix string) string { return enginetest.UniqueName(prefix) }

// relWorker is a worker process: this test binary, re-executed.
type relWorker struct {
	cmd    *exec.Cmd
	stderr *enginetest.SyncBuffer
	done   chan struct{}
}

// startRelWorker starts a worker process with env (on top of ours) and
// kills it when the test ends, if it still runs. Its stderr is kept, and
// shown when the test fails.
func startRelWorker(t *testing.T, name string, env ...string) *relWorker {
	t.Helper()
	w := &relWorker{stderr: &enginetest.SyncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(append(os.Environ(), env...), relEnvName+"="+name)
	w.cmd.Stderr = w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Kill()
		<-w.done
		if t.Failed() {
			t.Logf("worker %s stderr:\n%s", name, w.stderr.String())
		}
	})
	return w
}

// stop ends the worker with SIGTERM (it finishes the units it holds) and
// fails t if it does not exit within limit or exits with an error.
func (w *relWorker) stop(t *testing.T, limit time.Duration) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(limit):
		t.Fatalf("worker %d did not stop within %s of SIGTERM", w.cmd.Process.Pid, limit)
	}
	if !w.cmd.ProcessState.Success() {
		t.Errorf("worker %d exited with %v: %s", w.cmd.Process.Pid, w.cmd.ProcessState, w.stderr.String())
	}
}

// eventually polls cond every 20 ms until it holds, failing t after limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unitAt returns the model's unit with exactly window w.
func unitAt(t *testing.T, s state.Store, model string, w state.Window) state.Unit {
	t.Helper()
	var found *state.Unit
	err := s.ScanUnits(t.Context(), state.UnitQuery{Model: model, Window: w}, func(u state.Unit) error {
		if u.Window == w {
			found = &u
		}
		return nil
	})
	must(t, err)
	if found == nil {
		t.Fatalf("no unit of %s at %s", model, w)
	}
	return *found
}

// changesSince reads the whole change feed after seq.
func changesSince(t *testing.T, s state.Store, seq int64) []state.Change {
	t.Helper()
	var out []state.Change
	for {
		cs, err := s.Changes(t.Context(), seq, 1000)
		must(t, err)
		out = append(out, cs...)
		if len(cs) < 1000 {
			return out
		}
		seq = cs[len(cs)-1].Seq
	}
}

// writeSpec writes a spec and its scripts into dir.
func writeSpec(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755))
	}
	return filepath.Join(dir, "bollhav.yaml")
}

// sqliteQuietPoint returns at a moment no transaction of this process
// writes to the SQLite store at path: it takes the file's write lock on a
// connection of its own (waiting out a claim ahead or a heartbeat in
// flight) and lets it go. A process SIGSTOPped inside a write transaction
// would keep SQLite's one write lock for as long as it is stopped — no
// server ends its session, as PostgreSQL's idle bound does — and every
// other process would wait on it; the zombie tests pause a worker between
// its store writes, which is what they are about.
func sqliteQuietPoint(ctx context.Context, path string) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err == nil {
		_, _ = conn.ExecContext(ctx, "ROLLBACK")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// read returns a query's rows as "a|b" strings, with {t:name} quoted.
func read(t *testing.T, ds state.DataStore, schema, query string) []string {
	t.Helper()
	for strings.Contains(query, "{t:") {
		a := strings.Index(query, "{t:")
		b := a + strings.Index(query[a:], "}")
		q, _ := ds.QuoteTable(schema, query[a+3:b])
		query = query[:a] + q + query[b+1:]
	}
	return enginetest.Rows(t, ds, query)
}

// eq and eqRows are enginetest's Eq and EqRows, by the names these tests use.
func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	enginetest.Eq(t, what, got, want)
}

var eqRows = enginetest.EqRows
