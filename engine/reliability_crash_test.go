package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite/sqlitetest"
	"github.com/bollhav/bollhav/state/stores"
	"github.com/jackc/pgx/v5/pgconn"
)

// crashSpec is a recreate_partition query over a source with two rows per
// hour. The query of a window listed in ctl first takes a shared advisory
// lock the test holds exclusively: the unit then hangs mid-transaction —
// after its DELETE of the partition, inside its INSERT — for exactly as
// long as the test wants, which a pg_sleep could only approximate.
// SCHEMA and LOCKKEY are replaced per test.
const crashSpec = `models:
  - name: SCHEMA.hourly
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: SCHEMA.src
    run:
      query: >-
        SELECT ts, amount FROM {{ ref "SCHEMA.src" }} WHERE ts >= :since AND ts < :until
        AND (SELECT count(*) FROM (SELECT CASE WHEN EXISTS (SELECT 1 FROM "SCHEMA".ctl c WHERE c.since = :since)
             THEN pg_advisory_xact_lock_shared(LOCKKEY) END) AS hang) = 1
      write: {mode: recreate_partition, column: ts}
`

// TestReliabilityCrashMidUnitAppliesEachWindowOnce is issue 9 item 1, on
// PostgreSQL only: SQLite has no way to hang a statement mid-transaction
// (no sleep, no advisory lock), and a command model's crash on SQLite is
// TestWorkerKilledMidUnitIsTakenOverAfterItsLease.
//
// A worker process applies hours 0–2 of a recreate_partition query model,
// hangs inside hour 3's transaction and is killed with SIGKILL. Its backend
// lives on, still inside that transaction (PostgreSQL notices a dead client
// only when it next talks to it). Once the lease has expired a run applies
// hours 3–5. Then the orphaned transaction is let go: it inserts hour 3's
// rows a second time, finds its client gone and rolls back. The target
// holds each hour's two rows exactly once, before and after; hour 3 is
// applied by the run with two attempts (the dead one counted), and its
// change feed shows both claims.
func TestReliabilityCrashMidUnitAppliesEachWindowOnce(t *testing.T) {
	app := relName("bollhav_reliability_crash_")
	rs := openRelStore(t, "postgres", app)
	s, ds := rs.Store, rs.Store.(state.DataStore)
	admin := pgtest.NewAdmin(t, rs.base)
	lockKey := pgtest.LockKey()

	data := relName("rel_data_")
	must(t, pgtest.Exec(rs.base, fmt.Sprintf(`CREATE SCHEMA %[1]q;
		CREATE TABLE %[1]q.src (ts timestamp, amount integer);
		INSERT INTO %[1]q.src SELECT timestamp '2026-01-01' + h * interval '1 hour' + m * interval '30 minutes', 10 * h + m
		  FROM generate_series(0, 5) h, generate_series(0, 1) m;
		CREATE TABLE %[1]q.ctl (since timestamptz);
		INSERT INTO %[1]q.ctl VALUES ('2026-01-01 03:00:00+00')`, data)))
	t.Cleanup(func() { _ = pgtest.Exec(rs.base, fmt.Sprintf(`DROP SCHEMA IF EXISTS %q CASCADE`, data)) })

	dir := t.TempDir()
	sp := strings.NewReplacer("SCHEMA", data, "LOCKKEY", fmt.Sprint(lockKey)).Replace(crashSpec)
	specPath := writeSpec(t, dir, map[string]string{"bollhav.yaml": sp})
	loaded, err := spec.Load(specPath)
	must(t, err)
	model := data + ".hourly"
	const lease = time.Second
	e := New(s, loaded, Options{SpecDir: dir, Actor: "test", Lease: lease, Now: func() time.Time { return t0.Add(48 * time.Hour) }})
	_, err = e.Apply(t.Context())
	must(t, err)
	seq0, err := e.LatestChangeSeq(t.Context())
	must(t, err)
	var windows []state.Window
	for h := range 6 {
		windows = append(windows, hours(h, h+1))
	}
	_, err = s.Prefill(t.Context(), state.PrefillRequest{Model: model, Windows: windows, Now: e.now()})
	must(t, err)

	// The test holds the lock hour 3's transaction will wait for.
	admin.Lock(lockKey)

	workerApp := app + "_w"
	w := startRelWorker(t, "A", append(rs.workerEnv(workerApp), relEnvSpec+"="+specPath, relEnvLease+"="+lease.String(), relEnvWorkers+"=1")...)
	eventually(t, 60*time.Second, "worker A hanging inside hour 3's transaction", func() bool {
		return admin.Waiting(workerApp, "advisory") == 1
	})
	hang := hours(3, 4)
	if u := unitAt(t, s, model, hang); u.Status != state.Running {
		t.Fatalf("hour 3 is %s while its transaction hangs, want running", u.Status)
	}
	rows := func() string {
		return strings.Join(read(t, ds, data, `SELECT to_char(ts, 'HH24:MI'), count(*), sum(amount) FROM {t:hourly} GROUP BY ts ORDER BY ts`), " ")
	}
	// Hours 0–2 committed with their units; hour 3's partial work did not.
	eq(t, "rows before the crash", rows(), "00:00|1|0 00:30|1|1 01:00|1|10 01:30|1|11 02:00|1|20 02:30|1|21")

	must(t, w.cmd.Process.Signal(syscall.SIGKILL))
	<-w.done
	// The dead worker's backend is still inside hour 3's transaction.
	if n := admin.Waiting(workerApp, "advisory"); n != 1 {
		t.Fatalf("%d backends of the killed worker still wait inside hour 3, want 1 (the orphaned transaction)", n)
	}
	// Later attempts do not hang.
	must(t, pgtest.Exec(rs.base, fmt.Sprintf(`DELETE FROM %q.ctl`, data)))

	time.Sleep(lease + 500*time.Millisecond) // past the lease the dead worker can no longer extend
	span := hours(0, 6)
	res, err := e.Run(t.Context(), RunRequest{Window: &span, Models: []string{model}, Mode: spec.Discover}, e.Executor(), nil)
	must(t, err)
	if res.Failed() || len(res.Tasks) != 1 || res.Tasks[0].Applied != 3 {
		t.Fatalf("run after the crash: %+v, want hours 3–5 applied", res.Tasks)
	}
	want := "00:00|1|0 00:30|1|1 01:00|1|10 01:30|1|11 02:00|1|20 02:30|1|21 " +
		"03:00|1|30 03:30|1|31 04:00|1|40 04:30|1|41 05:00|1|50 05:30|1|51"
	eq(t, "rows after the takeover", rows(), want)

	// Let the orphaned transaction go: it inserts hour 3 again, then
	// finds its client gone and rolls back.
	admin.Unlock(lockKey)
	eventually(t, 30*time.Second, "the orphaned transaction ending", func() bool { return admin.Backends(workerApp) == 0 })
	eq(t, "rows after the orphan ended", rows(), want)

	for _, win := range windows {
		u := unitAt(t, s, model, win)
		wantAttempts, wantRun := 1, int64(0) // hours 0–2: the worker, first try
		if !win.Since.Before(hang.Since) {
			wantRun = res.RunID
			if win == hang {
				wantAttempts = 2 // the killed one, released at lease expiry, and the run's
			}
		}
		if u.Status != state.Applied || u.Attempts != wantAttempts || u.RunID != wantRun || u.RowsWritten == nil || *u.RowsWritten != 2 {
			t.Errorf("unit %s: %s, attempts %d, run %d, rows %v; want applied by run %d with 2 rows after %d attempt(s)",
				win, u.Status, u.Attempts, u.RunID, u.RowsWritten, wantRun, wantAttempts)
		}
	}
	// The feed, hour 3's story: claimed by the worker, released when its
	// lease expired, claimed by the run, applied.
	var story []string
	for _, c := range changesSince(t, s, seq0) {
		if c.Model == model && c.Window == hang {
			story = append(story, fmt.Sprintf("%s>%s@run%d", c.From, c.To, c.RunID))
		}
	}
	eq(t, "hour 3 in the change feed", strings.Join(story, " "),
		fmt.Sprintf("pending>running@run0 running>pending@run0 pending>running@run%[1]d running>applied@run%[1]d", res.RunID))
}

// zombieScript is a unit's command: the first attempt (worker A's) marks
// that it started, then works for $1 seconds and reports 111 rows; every
// later attempt (worker B's) reports 222 at once.
const zombieScript = `#!/bin/sh
if [ -f started ]; then echo rows_written=222; exit 0; fi
touch started
echo $$ > pid
sleep "$1"
echo rows_written=111
`

// TestReliabilityZombieWorkerIsFenced is issue 9 item 3, on both stores.
// Worker process A claims a unit and starts its command; A is paused with
// SIGSTOP past its lease (at a moment it holds no lock in the store, which a
// real pause could also hit, but then nobody can write until it resumes);
// a run — worker B — takes the unit over and applies it; A is resumed with
// SIGCONT. Whatever A does then — its overdue heartbeat, its completion —
// changes nothing: the unit's status, applied_at, fence, rows and attempts
// stay B's, the change feed records nothing more, and A logs on stderr that
// it lost the lease.
//
// "finished while paused": A's command ends while A is stopped, so A comes
// back with a successful outcome of 111 rows to record — the dangerous
// one. "running when resumed": A's command still runs, so A's heartbeat is
// the first to hear of the takeover; A stops the command and its failed
// outcome is refused as well.
func TestReliabilityZombieWorkerIsFenced(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, tc := range []struct {
			name     string
			work     string // seconds A's command works
			resumeAt time.Duration
		}{
			{"finished while paused", "2", 2500 * time.Millisecond},
			{"running when resumed", "30", 0},
		} {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				if testing.Short() && backend == "sqlite" {
					t.Skip("-short: the postgres half runs; CI (.ci/run) runs both")
				}
				testZombie(t, backend, tc.work, tc.resumeAt)
			})
		}
	}
}

func testZombie(t *testing.T, backend, work string, resumeAt time.Duration) {
	app := relName("bollhav_reliability_zombie_")
	rs := openRelStore(t, backend, app)
	s := rs.Store
	dir := t.TempDir()
	specPath := writeSpec(t, dir, map[string]string{
		"zombie.sh": zombieScript,
		"bollhav.yaml": fmt.Sprintf(`models:
  - {name: raw.zombie, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["./zombie.sh", "%s"]}}
`, work),
	})
	sp, err := spec.Load(specPath)
	must(t, err)
	const lease = time.Second
	e := New(s, sp, Options{SpecDir: dir, Actor: "test", Lease: lease, Now: func() time.Time { return t0.Add(48 * time.Hour) }})
	_, err = e.Apply(t.Context())
	must(t, err)
	hour := hours(0, 1)
	_, err = s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.zombie", Windows: []state.Window{hour}, Now: e.now()})
	must(t, err)

	workerApp := app + "_a"
	a := startRelWorker(t, "A", append(rs.workerEnv(workerApp), relEnvSpec+"="+specPath, relEnvLease+"="+lease.String(), relEnvWorkers+"=1")...)
	waitForFile(t, filepath.Join(dir, "started"), 60*time.Second)
	started := time.Now()
	claimA := unitAt(t, s, "raw.zombie", hour)
	if claimA.Status != state.Running {
		t.Fatalf("A's unit is %s while its command runs", claimA.Status)
	}

	pauseIdle(t, rs, a, workerApp)
	// Past A's lease: its last heartbeat is the last it will make.
	paused := unitAt(t, s, "raw.zombie", hour)
	if paused.Status != state.Running || paused.Fence != claimA.Fence || paused.LeaseUntil == nil {
		t.Fatalf("A's unit after the pause: %+v", paused)
	}
	time.Sleep(time.Until(paused.LeaseUntil.Add(200 * time.Millisecond)))

	// B: a run takes the unit over once the lease has expired.
	res, err := e.Run(t.Context(), RunRequest{Window: &hour, Mode: spec.Discover}, &executor.CommandExecutor{}, nil)
	must(t, err)
	if res.Failed() || res.Tasks[0].Applied != 1 {
		t.Fatalf("B did not take the unit over: %+v", res.Tasks)
	}
	byB := unitAt(t, s, "raw.zombie", hour)
	if byB.Status != state.Applied || byB.Fence == claimA.Fence || byB.RunID != res.RunID || byB.AppliedAt == nil ||
		byB.RowsWritten == nil || *byB.RowsWritten != 222 || byB.Attempts != 2 {
		t.Fatalf("unit after B: %+v; want applied by run %d with 222 rows after 2 attempts (A's released one and B's), under a new fence", byB, res.RunID)
	}
	seq, err := e.LatestChangeSeq(t.Context())
	must(t, err)
	if resumeAt > 0 {
		time.Sleep(time.Until(started.Add(resumeAt))) // A's command has ended meanwhile
	}

	must(t, a.cmd.Process.Signal(syscall.SIGCONT))
	// A records its outcome, which the store refuses, and logs that it
	// lost the lease.
	eventually(t, 30*time.Second, "A logging that its outcome was dropped", func() bool {
		return strings.Contains(a.stderr.String(), "lost the lease: another worker owns the unit now; its outcome is dropped")
	})
	eventually(t, 10*time.Second, "A reporting the unit unrecorded", func() bool {
		return strings.Contains(a.stderr.String(), "unit not recorded")
	})
	if resumeAt == 0 {
		// The heartbeat heard first, and stopped the command.
		if !strings.Contains(a.stderr.String(), "lost the lease while running: stopping the unit") {
			t.Errorf("A's heartbeat did not log the lost lease; stderr:\n%s", a.stderr.String())
		}
		pid, _ := os.ReadFile(filepath.Join(dir, "pid"))
		eventually(t, 10*time.Second, "A's command stopping", func() bool { return !alive(strings.TrimSpace(string(pid))) })
	}
	a.stop(t, 30*time.Second)

	after := unitAt(t, s, "raw.zombie", hour)
	if !reflect.DeepEqual(after, byB) {
		t.Errorf("A changed the unit B applied:\n  B's:   %+v\n  after: %+v", byB, after)
	}
	if cs := changesSince(t, s, seq); len(cs) != 0 {
		t.Errorf("the feed recorded %d change(s) after B applied the unit, the first %+v", len(cs), cs[0])
	}
}

// pauseIdle stops the worker with SIGSTOP at a moment it holds nothing in
// the store that would block another writer: no SQLite write lock, no open
// PostgreSQL transaction. A pause inside a transaction is real too, but it
// stalls every writer until the process resumes (SQLite) or until the
// server's idle-transaction timeout ends it (PostgreSQL), which is a test
// of another thing.
func pauseIdle(t *testing.T, rs *relStore, w *relWorker, app string) {
	t.Helper()
	var admin *pgtest.Admin
	if rs.backend == "postgres" {
		admin = pgtest.NewAdmin(t, rs.base)
	}
	for range 100 {
		must(t, w.cmd.Process.Signal(syscall.SIGSTOP))
		time.Sleep(30 * time.Millisecond) // let whatever it had sent arrive
		if idle(t, rs, admin, app) {
			return
		}
		must(t, w.cmd.Process.Signal(syscall.SIGCONT))
		time.Sleep(37 * time.Millisecond)
	}
	t.Fatal("the worker never paused outside a transaction")
}

func idle(t *testing.T, rs *relStore, admin *pgtest.Admin, app string) bool {
	t.Helper()
	if rs.backend == "postgres" {
		return admin.Busy(app) == 0
	}
	return sqlitetest.WriterIdle(t, rs.base)
}

const restartSpec = `models:
  - {name: raw.ticks, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.ticks, contract: encapsulate}], run: {command: ["true"]}}
  - {name: DATA.sql_ticks, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"},
     run: {sql: ["INSERT INTO {{ this }} (since, until) VALUES (:since, :until)"]}}
`

// TestReliabilityPostgresConnectionsTerminatedMidRun is issue 9 item 2:
// every connection of the store — the run's pool and the change feed's
// LISTEN connection — is terminated with pg_terminate_backend, three times
// during a run of 288 + 3 command units (a fake executor) and 288 units of
// a sql model, whose data commits with the unit, as a database restart
// would. Only the
// test's own backends are terminated: its store names its connections with
// an application_name no other test uses. The run must finish on its own
// with every unit applied and none left running, the sql model's table
// holding each window's row once (its primary key refuses a second), and a
// change feed
// follower on the same store must deliver every change of the run, the
// ones after each kill included, once and in order.
func TestReliabilityPostgresConnectionsTerminatedMidRun(t *testing.T) {
	app := relName("bollhav_reliability_restart_")
	rs := openRelStore(t, "postgres", app)
	s := rs.Store
	admin := pgtest.NewAdmin(t, rs.base)
	data := relName("rel_data_")
	must(t, pgtest.Exec(rs.base, fmt.Sprintf(`CREATE SCHEMA %[1]q; CREATE TABLE %[1]q.sql_ticks (since timestamptz PRIMARY KEY, until timestamptz)`, data)))
	t.Cleanup(func() { _ = pgtest.Exec(rs.base, fmt.Sprintf(`DROP SCHEMA IF EXISTS %q CASCADE`, data)) })
	e := New(s, mustParse(t, strings.ReplaceAll(restartSpec, "DATA", data)), Options{SpecDir: t.TempDir(), Actor: "test", Lease: 10 * time.Second, Now: func() time.Time { return t0.Add(10 * 24 * time.Hour) }})
	_, err := e.Apply(t.Context())
	must(t, err)
	seq0, err := e.LatestChangeSeq(t.Context())
	must(t, err)

	// The follower a UI keeps, with its banner: OnError(err) shows it,
	// OnError(nil) clears it.
	var (
		fmu       sync.Mutex
		delivered []state.Change
		banner    []string
	)
	fctx, stopFollow := context.WithCancel(t.Context())
	defer stopFollow()
	feed := state.Follower{Store: s, After: seq0, Poll: 100 * time.Millisecond, OnError: func(err error) {
		fmu.Lock()
		defer fmu.Unlock()
		if err != nil {
			banner = append(banner, "down")
		} else {
			banner = append(banner, "up")
		}
	}}.Follow(fctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		for c := range feed {
			fmu.Lock()
			delivered = append(delivered, c)
			fmu.Unlock()
		}
	}()

	// Terminate every backend of the store when the run has applied 40,
	// 120 and 200 ticks.
	kill := make(chan struct{}, 3)
	var (
		kmu        sync.Mutex
		terminated []int
		killErr    error
	)
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for range kill {
			n, err := admin.Terminate(context.Background(), app)
			kmu.Lock()
			terminated = append(terminated, n)
			if err != nil && killErr == nil {
				killErr = err
			}
			kmu.Unlock()
		}
	}()
	var pmu sync.Mutex
	fired := map[int]bool{}
	progress := func(p Progress) {
		if p.Model != "raw.ticks" { // the fired kills land in the sql model's run as well: tasks run at once
			return
		}
		pmu.Lock()
		defer pmu.Unlock()
		for _, at := range []int{40, 120, 200} {
			if p.Applied >= at && !fired[at] {
				fired[at] = true
				kill <- struct{}{}
			}
		}
	}

	// Command models run in the fake executor, the sql model in the
	// store's database.
	exec := executor.New(e.store, &fakeExec{delay: 2 * time.Millisecond}, e.opts.Now)
	w := days(0, 3)
	res, err := e.Run(t.Context(), RunRequest{Window: &w, Workers: 4}, exec, progress)
	close(kill)
	<-killerDone
	if killErr != nil {
		t.Fatalf("terminating the store's backends: %v", killErr)
	}
	kmu.Lock()
	t.Logf("backends terminated at each kill: %v", terminated)
	if len(terminated) != 3 || terminated[0] == 0 {
		t.Errorf("kills %v: want 3, the first terminating the run's connections", terminated)
	}
	kmu.Unlock()
	if err != nil {
		t.Fatalf("the run did not survive the terminated connections: %v", err)
	}
	for _, tr := range res.Tasks {
		if tr.Status != graph.StatusSuccess {
			t.Errorf("task %s: %s %v", tr.Model, tr.Outcome(), tr.Errors)
		}
	}
	for model, want := range map[string]int{"raw.ticks": 288, "mart.daily": 3, data + ".sql_ticks": 288} {
		c := statuses(t, s, model)
		if c[state.Applied] != want || c[state.Running] != 0 || c[state.Pending] != 0 || c[state.Failed] != 0 {
			t.Errorf("%s units %v, want %d applied and nothing else", model, c, want)
		}
	}
	eqRows(t, "sql_ticks rows", read(t, rs.Store.(state.DataStore), data, `SELECT count(*), count(DISTINCT since), min(since) = '2026-01-01', max(since) = '2026-01-03 23:45' FROM {t:sql_ticks}`), "288|288|true|true")
	run, err := s.GetRun(t.Context(), res.RunID)
	must(t, err)
	eq(t, "run status", run.Status, state.RunSucceeded)

	// The feed: everything the store recorded after seq0, delivered once
	// and in order.
	all := changesSince(t, s, seq0)
	eventually(t, 30*time.Second, "the follower catching up with the feed", func() bool {
		fmu.Lock()
		defer fmu.Unlock()
		return len(delivered) >= len(all)
	})
	stopFollow()
	<-followed
	fmu.Lock()
	defer fmu.Unlock()
	if len(delivered) != len(all) {
		t.Fatalf("follower delivered %d changes, the feed holds %d", len(delivered), len(all))
	}
	for i := range all {
		if delivered[i] != all[i] {
			t.Fatalf("change %d: delivered %+v, the feed holds %+v", i, delivered[i], all[i])
		}
	}
	applied := 0
	for _, c := range all {
		if c.To == state.Applied {
			applied += c.Count
		}
	}
	eq(t, "applied transitions in the feed", applied, 579)
	// A banner that went up came down again.
	t.Logf("follower banner: %v", banner)
	if len(banner) > 0 && banner[len(banner)-1] != "up" {
		t.Errorf("the follower's banner is still up: %v", banner)
	}
}

// TestReliabilityConnectionLostClassification: what the engine retries (a
// lost connection) and what it does not (everything the call itself got
// wrong, a cancelled run, a lost lease).
func TestReliabilityConnectionLostClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{&pgconn.PgError{Severity: "FATAL", Code: "25P03", Message: "terminating connection due to idle-in-transaction timeout"}, true},
		{fmt.Errorf("claim: %w", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}), true},
		{&pgconn.PgError{Code: "08006", Message: "connection failure"}, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key"}, false},
		{&pgconn.PgError{Code: "42P01", Message: "relation does not exist"}, false},
		{state.ErrLeaseLost, false},
		{fmt.Errorf("claim: %w", context.Canceled), false},
		{context.DeadlineExceeded, false},
		{errors.New("exit status 1"), false},
		{nil, false},
	} {
		if got := connectionLost(tc.err); got != tc.want {
			t.Errorf("connectionLost(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}

	e := New(nil, nil, Options{})
	calls := 0
	lost := &pgconn.PgError{Code: "57P01"}
	err := e.retryStore(t.Context(), "test", func() error {
		if calls++; calls < 3 {
			return lost
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("retryStore over two lost connections: err %v after %d calls, want nil after 3", err, calls)
	}
	calls = 0
	wrong := &pgconn.PgError{Code: "42P01"}
	if err := e.retryStore(t.Context(), "test", func() error { calls++; return wrong }); err != wrong || calls != 1 {
		t.Errorf("retryStore of a wrong call: err %v after %d calls, want it at once", err, calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls = 0
	if err := e.retryStore(ctx, "test", func() error { calls++; return lost }); err != lost || calls != 1 {
		t.Errorf("retryStore in a cancelled run: err %v after %d calls, want the lost connection at once", err, calls)
	}
}

// The warehouse crash tests: a worker process on enginetest.WarehouseSpec
// dies or stalls between a unit's warehouse commit and the store's. The
// executor's own tests of warehouse units are in engine/executor.

// whCrashWorld is a warehouse crash test's world on backend: a store of
// its own (connections named after prefix), a warehouse database with
// six hours of source rows, an engine over enginetest.WarehouseSpec
// applied with wh.log's first six hours pending, and a worker process on
// them with a lease of one second and the extra environment; and the
// warehouse's DSN.
func whCrashWorld(t *testing.T, backend, prefix, extra string) (rs *relStore, e *Engine, w *relWorker, dsn string) {
	t.Helper()
	app := relName(prefix)
	rs = openRelStore(t, backend, app)
	dsn, env := enginetest.NewWarehouseDB(t, 6)
	sp, dir, path := enginetest.WarehouseSpecFile(t, enginetest.WarehouseSpec, env)
	wh := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	t.Cleanup(func() { _ = wh.Close() })
	e = New(rs.Store, sp, Options{SpecDir: dir, Actor: "test", Warehouses: wh, Now: func() time.Time { return t0.Add(48 * time.Hour) }})
	_, err := e.Apply(t.Context())
	must(t, err)
	ws := make([]state.Window, 6)
	for h := range ws {
		ws[h] = hours(h, h+1)
	}
	_, err = e.store.Prefill(t.Context(), state.PrefillRequest{Model: "wh.log", Windows: ws, Now: e.now()})
	must(t, err)
	vars := append(rs.workerEnv(app), relEnvSpec+"="+path, relEnvLease+"=1s", relEnvWorkers+"=1", env+"="+dsn, extra)
	return rs, e, startRelWorker(t, app, vars...), dsn
}

// TestWarehouseCrashBetweenCommitsIsRepairedFromTheLedger: a worker is
// SIGKILLed right after its first unit's data committed in the warehouse,
// before the state store recorded it. The unit is left running with its
// data and its ledger row in the warehouse. Once the lease expires, a run
// records that unit applied from the ledger without running it again, and
// runs the rest: each hour's two rows land exactly once.
func TestWarehouseCrashBetweenCommitsIsRepairedFromTheLedger(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			rs, e, w, dsn := whCrashWorld(t, backend, "bollhav_whcrash_", relEnvCrash+"=1")
			select {
			case <-w.done:
			case <-time.After(30 * time.Second):
				t.Fatal("the worker did not crash")
			}
			if ws := w.cmd.ProcessState.String(); !strings.Contains(ws, "killed") {
				t.Fatalf("worker ended %s, not by SIGKILL: %s", ws, w.stderr.String())
			}
			// Exactly one window's data committed; the store does not know.
			done := enginetest.WarehouseQuery(t, dsn, `SELECT unit_key, rows FROM bollhav_warehouse.ledger WHERE done_fence > 0`)
			if len(done) != 1 || !strings.HasSuffix(done[0], "|2") {
				t.Fatalf("ledger rows with data = %v, want one of 2 rows", done)
			}
			if st := statuses(t, rs.Store, "wh.log"); st[state.Running] < 1 || st[state.Applied] != 0 {
				t.Fatalf("statuses after the crash = %v, want the crashed unit running and none applied", st)
			}
			if got := enginetest.PerHour(t, dsn); strings.Count(got, "=2") != 1 {
				t.Fatalf("wh.log after the crash = %q, want one hour", got)
			}

			time.Sleep(1500 * time.Millisecond) // the worker's lease of 1s expires
			six := hours(0, 6)
			_, err := e.Run(t.Context(), RunRequest{Models: []string{"wh.log"}, Window: &six, Mode: spec.Discover}, e.Executor(), nil)
			must(t, err)
			if got := enginetest.PerHour(t, dsn); got != enginetest.TwoEach(6) {
				t.Errorf("wh.log per hour = %s, want %s", got, enginetest.TwoEach(6))
			}
			if st := statuses(t, rs.Store, "wh.log"); st[state.Applied] != 6 {
				t.Errorf("statuses = %v, want 6 applied", st)
			}
			enginetest.CheckLedger(t, rs.Store, dsn, "wh.log")
			// The repaired unit counts the dead worker's attempt, and keeps
			// the rows that attempt wrote.
			var expired int
			must(t, rs.Store.ScanUnits(t.Context(), state.UnitQuery{Model: "wh.log"}, func(u state.Unit) error {
				if u.Attempts == 2 {
					expired++
					if u.RowsWritten == nil || *u.RowsWritten != 2 {
						t.Errorf("repaired unit %s rows_written = %v, want 2", u.Window, u.RowsWritten)
					}
				}
				return nil
			}))
			if expired != 1 {
				t.Errorf("%d units show the dead worker's attempt, want 1", expired)
			}
		})
	}
}

// TestWarehouseZombieWritesNothing: a worker claims a unit and is paused
// (SIGSTOP) just before its warehouse transaction. Its lease expires, a run
// takes the unit over and applies it. Resumed, the zombie opens its
// transaction with the older fence (or its heartbeat finds the lease lost
// first): it writes nothing, and each hour holds its two rows once.
func TestWarehouseZombieWritesNothing(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			rs, e, w, dsn := whCrashWorld(t, backend, "bollhav_whzombie_", relEnvPause+"=1")
			eventually(t, 30*time.Second, "the worker stops itself", func() bool { return stopped(w.cmd.Process.Pid) })
			if got := enginetest.WarehouseQuery(t, dsn, `SELECT count(*) FROM wh.log`); got[0] != "0" {
				t.Fatalf("the paused worker wrote %s rows", got[0])
			}
			time.Sleep(1500 * time.Millisecond) // its lease of 1s expires
			six := hours(0, 6)
			_, err := e.Run(t.Context(), RunRequest{Models: []string{"wh.log"}, Window: &six, Mode: spec.Discover}, e.Executor(), nil)
			must(t, err)
			if st := statuses(t, rs.Store, "wh.log"); st[state.Applied] != 6 {
				t.Fatalf("statuses = %v, want 6 applied", st)
			}

			must(t, w.cmd.Process.Signal(syscall.SIGCONT))
			eventually(t, 30*time.Second, "the zombie reports its lost lease", func() bool {
				return strings.Contains(w.stderr.String(), "lost the lease")
			})
			w.stop(t, 30*time.Second)
			if got := enginetest.PerHour(t, dsn); got != enginetest.TwoEach(6) {
				t.Errorf("wh.log per hour = %s, want %s", got, enginetest.TwoEach(6))
			}
			// Which of its fences stopped it — the store's heartbeat or the
			// ledger — is a race; engine/executor's
			// TestWarehouseLedgerFencesAnOldClaim pins the ledger's down.
			enginetest.CheckLedger(t, rs.Store, dsn, "wh.log")
		})
	}
}

// stopped reports whether process pid is stopped (state T in /proc).
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i > 0 && len(s) > i+2 && s[i+2] == 'T'
}
