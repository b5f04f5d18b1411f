package engine

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
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
