package engine

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
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
	"go.uber.org/goleak"
)

// TestMain lets a test start this test binary as a separate worker process
// (BOLLHAV_TEST_WORKER set), so a worker can be killed for real. Otherwise
// it runs the tests and then fails the package when a goroutine outlives
// them (goleak): a run's task and heartbeat goroutines, a worker's pollers
// and a command's output readers must all be gone once Run or Work return.
func TestMain(m *testing.M) {
	if os.Getenv("BOLLHAV_TEST_WORKER") != "" {
		os.Exit(runTestWorker())
	}
	goleak.VerifyTestMain(m)
}

// runTestWorker is the worker process: it opens the store and spec the
// parent names and works until SIGTERM (or SIGKILL).
func runTestWorker() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := openTestWorkerStore(ctx)
	if err != nil {
		os.Stderr.WriteString("worker: " + err.Error() + "\n")
		return 2
	}
	defer s.Close()
	specPath := os.Getenv("BOLLHAV_TEST_WORKER_SPEC")
	sp, err := spec.Load(specPath)
	if err != nil {
		os.Stderr.WriteString("worker: " + err.Error() + "\n")
		return 2
	}
	e := New(s, sp, Options{SpecDir: filepath.Dir(specPath), Actor: "worker", Lease: time.Second})
	if err := e.Work(ctx, &executor.CommandExecutor{}, WorkOptions{Poll: 50 * time.Millisecond}); err != nil {
		os.Stderr.WriteString("worker: " + err.Error() + "\n")
		return 1
	}
	return 0
}

func openTestWorkerStore(ctx context.Context) (state.Store, error) {
	if os.Getenv("BOLLHAV_TEST_WORKER") == "postgres" {
		return postgres.Open(ctx, os.Getenv("BOLLHAV_TEST_WORKER_DSN"), postgres.Options{Schema: os.Getenv("BOLLHAV_TEST_WORKER_SCHEMA")})
	}
	return sqlite.Open(ctx, os.Getenv("BOLLHAV_TEST_WORKER_DSN"))
}

const slowSpec = `models:
  - {name: raw.slow, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["./slow.sh"]}}
`

// The first attempt hangs (it is the one killed); later ones succeed. The
// pid is written before "started", which the test waits for, so it is
// there to read once the test sees the command running.
const slowScript = `#!/bin/sh
if [ -f started ]; then echo rows_written=1; exit 0; fi
echo $$ > pid
touch started
exec sleep 20
`

// A worker process killed with SIGKILL mid-unit leaves a lease that expires;
// the unit then runs again and is applied once, with the dead attempt counted.
func TestWorkerKilledMidUnitIsTakenOverAfterItsLease(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			env := []string{"BOLLHAV_TEST_WORKER=" + backend, "BOLLHAV_TEST_WORKER_SPEC=" + filepath.Join(dir, "bollhav.yaml")}
			var s state.Store
			var err error
			if backend == "postgres" {
				dsn := pgtest.DSN(t)
				schema := pgtest.Schema(t, dsn)
				s, err = postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
				env = append(env, "BOLLHAV_TEST_WORKER_DSN="+dsn, "BOLLHAV_TEST_WORKER_SCHEMA="+schema)
			} else {
				path := filepath.Join(dir, "state.db")
				s, err = sqlite.Open(t.Context(), path)
				env = append(env, "BOLLHAV_TEST_WORKER_DSN="+path)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			for name, body := range map[string]string{"bollhav.yaml": slowSpec, "slow.sh": slowScript} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			sp, err := spec.Load(filepath.Join(dir, "bollhav.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			e := New(s, sp, Options{SpecDir: dir, Actor: "test", Lease: time.Second, Now: func() time.Time { return t0.Add(2 * time.Hour) }})
			if _, err := e.Apply(t.Context()); err != nil {
				t.Fatal(err)
			}
			hour := hours(0, 1)
			if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.slow", Windows: []state.Window{hour}, Now: e.now()}); err != nil {
				t.Fatal(err)
			}

			worker := exec.Command(os.Args[0], "-test.run=^$")
			worker.Env = append(os.Environ(), env...)
			worker.Stderr = os.Stderr
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
			waitForUnit(t, s, "raw.slow", state.Running, 30*time.Second)
			// Claimed is not yet started: wait until the command itself runs.
			waitForFile(t, filepath.Join(dir, "started"), 30*time.Second)

			if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = worker.Wait()
			time.Sleep(1500 * time.Millisecond) // past the 1 s lease
			if runtime.GOOS == "linux" {
				// The killed worker's command died with it: no orphan
				// still writes the unit another worker is about to run.
				pid, _ := os.ReadFile(filepath.Join(dir, "pid"))
				if alive(strings.TrimSpace(string(pid))) {
					t.Errorf("the killed worker's command (pid %s) is still running", strings.TrimSpace(string(pid)))
				}
			}

			res, err := e.Run(t.Context(), RunRequest{Window: &hour, Mode: spec.Discover}, &executor.CommandExecutor{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed() || res.Tasks[0].Applied != 1 {
				t.Fatalf("the unit was not taken over: %+v", res.Tasks)
			}
			var u state.Unit
			_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.slow"}, func(x state.Unit) error { u = x; return nil })
			if u.Status != state.Applied || u.Attempts < 1 || u.RowsWritten == nil || *u.RowsWritten != 1 {
				t.Errorf("unit %+v: want applied by the second attempt, with the killed one counted", u)
			}
		})
	}
}

func waitForUnit(t *testing.T, s state.Store, model string, want state.UnitStatus, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st, err := s.Stats(t.Context(), "", model)
		if err == nil && st.Counts[want] > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s unit of %s within %s", want, model, limit)
}

// Two workers against one store apply every pending unit exactly once, and
// stop taking work when their context ends.
func TestTwoWorkersShareTheWork(t *testing.T) {
	s := openSQLite(t)
	e := runEngine(t, s, claimAheadSpec)
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	g, _ := state.NewGrid(t0, state.MustInterval("15m"), time.UTC)
	if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.ticks", Windows: g.Windows(hours(0, 50)), Now: e.now()}); err != nil {
		t.Fatal(err)
	}
	exec := &fakeExec{delay: time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() { done <- e.Work(ctx, exec, WorkOptions{Workers: 2, Poll: 20 * time.Millisecond}) }()
	}
	deadline := time.Now().Add(30 * time.Second)
	for statuses(t, s, "raw.ticks")[state.Applied] < 200 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if c := statuses(t, s, "raw.ticks"); c[state.Applied] != 200 {
		t.Fatalf("units %v, want 200 applied", c)
	}
	for k, n := range exec.calls {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
}

func TestWorkRefusedReadOnly(t *testing.T) {
	e := runEngine(t, openSQLite(t), chainSpec)
	e.opts.ReadOnly = true
	if err := e.Work(t.Context(), &fakeExec{}, WorkOptions{}); err == nil {
		t.Fatal("a read-only engine must not work units")
	}
}

func openSQLite(t *testing.T) state.Store {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func waitForFile(t *testing.T, path string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %s", path, limit)
}

// alive reports whether the process pid exists and is not a zombie.
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestWorkStopGivesBackQueuedUnitsBehindALongOne: a worker stopped while its
// only slot runs a long unit gives back the units it claimed ahead at once,
// not when the long unit ends (a SIGKILL after a stop timeout would strand
// them for their leases).
func TestWorkStopGivesBackQueuedUnitsBehindALongOne(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := workerWorld(t, s)
		x, cancel, done := startGatedWorker(t, e)
		<-x.blocked
		time.Sleep(200 * time.Millisecond)
		cancel()
		time.Sleep(2 * time.Second)
		running := 0
		must(t, s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.ticks", Statuses: []state.UnitStatus{state.Running}},
			func(state.Unit) error { running++; return nil }))
		close(x.release)
		must(t, <-done)
		if running > 1 {
			t.Errorf("2 s after the stop, %d units are still running: only the long unit should be", running)
		}
	})
}
