package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

const restartSpec = `models:
  - name: raw.ticks
    chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: mart.daily
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.ticks, contract: encapsulate}]
    run: {command: ["true"]}
  - name: DATA.sql_ticks
    chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}
    run:
      sql: ["INSERT INTO {{ this }} (since, until) VALUES (:since, :until)"]
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
