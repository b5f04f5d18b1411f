package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// TestInterruptedCommandExits130: a command that works on the process's
// context and finds it cancelled (what the first SIGINT or SIGTERM does)
// exits 130 and says it was interrupted, and gives the signals their
// default action back so that a second one quits at once; run, which stops
// on a signal its own way, keeps its own status and words.
func TestInterruptedCommandExits130(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	if code, _, errOut := run(t, "apply", "--spec", sp); code != 0 {
		t.Fatalf("apply: %d %s", code, errOut)
	}
	interrupted := func(args ...string) (int, string, chan struct{}) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		restored := make(chan struct{}, 1)
		// run's interrupt notice is written from a goroutine of its own,
		// as it would be to the process's stderr.
		var out, errb enginetest.SyncBuffer
		code := mainContext(ctx, func() {
			select {
			case restored <- struct{}{}:
			default:
			}
		}, args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		return code, errb.String(), restored
	}
	for _, cmd := range [][]string{{"status"}, {"plan", "raw.a"}, {"mark", "raw.a", "--since", "2026-01-01", "--until", "2026-01-02", "--status", "pending"}} {
		code, errOut, restored := interrupted(append(cmd, "--spec", sp)...)
		if code != ExitInterrupted || !strings.HasSuffix(errOut, "bollhav "+cmd[0]+": interrupted\n") {
			t.Errorf("%s on a cancelled context: exit %d, stderr %q; want 130 and \"interrupted\" last", cmd[0], code, errOut)
		}
		select {
		case <-restored:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the signals' default action was not restored after the first", cmd[0])
		}
	}
	code, errOut, _ := interrupted("run", "raw.a", "--since", "2026-01-01", "--until", "2026-01-02", "--spec", sp)
	if code == ExitInterrupted || strings.HasSuffix(errOut, "bollhav run: interrupted\n") || !strings.Contains(errOut, "interrupt again to quit at once") {
		t.Errorf("run on a cancelled context: exit %d, stderr %q; want its own status and words", code, errOut)
	}
}

// TestMarkStopsOnSIGINTAndExits130: SIGINT to a `bollhav mark` process (the
// real CLI, a process of its own) that waits for rows another transaction
// holds cancels its write at once: the process records the mark as failed
// in the audit log, closes the store and exits 130, saying it was
// interrupted; the units are as they were, nothing of the mark commits once
// the rows are free, and the next mark goes through.
func TestMarkStopsOnSIGINTAndExits130(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	t.Setenv("BOLLHAV_PG_SCHEMA", schema)
	sp := writeSpec(t, `models:
  - {name: raw.a, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`)
	window := []string{"--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T03:00:00Z"}
	if code, _, errOut := run(t, append([]string{"run", "raw.a", "--spec", sp, "--dsn", dsn}, window...)...); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	ctx := t.Context()
	s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	applied := func() int {
		t.Helper()
		st, err := s.Stats(ctx, "", "raw.a")
		if err != nil {
			t.Fatal(err)
		}
		return st.Counts[state.Applied]
	}
	if n := applied(); n != 3 {
		t.Fatalf("%d units applied before the mark, want 3", n)
	}

	// Another transaction holds the units' rows: the mark's update waits.
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(context.Background())
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // released below; a no-op then
	if _, err := tx.Exec(ctx, `SELECT id FROM `+pgx.Identifier{schema, "units"}.Sanitize()+` FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	app := pgtest.ApplicationName("bollhav_sigint_")
	cmd, stdout, stderr := cliProcess(t, append([]string{"mark", "raw.a", "--status", "pending", "--spec", sp,
		"--dsn", pgtest.WithApplicationName(dsn, app)}, window...)...)
	admin := pgtest.NewAdmin(t, dsn)
	for deadline := time.Now().Add(30 * time.Second); admin.Waiting(app, "transactionid") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the mark never waited for the held rows\n%s", stderr.String())
		}
	}

	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want 130\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if took := time.Since(signalled); took > 10*time.Second {
		t.Errorf("the mark took %s to stop: it waited for the rows instead of giving up its write", took)
	}
	if !strings.HasSuffix(stderr.String(), "bollhav mark: interrupted\n") || stdout.String() != "" {
		t.Errorf("stdout %q, stderr %q; want nothing marked and \"interrupted\" last", stdout.String(), stderr.String())
	}

	// The rows free, the abandoned update's backend ends without a commit.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); admin.Backends(app) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the interrupted mark's connections outlived it")
		}
	}
	if n := applied(); n != 3 {
		t.Errorf("%d units applied after the interrupted mark, want the 3 it never marked", n)
	}
	log, err := s.AuditLog(ctx, 1)
	if err != nil || len(log) != 1 || log[0].Action != "mark" || !strings.HasPrefix(log[0].Outcome, "error: ") || !strings.Contains(log[0].Outcome, "context canceled") {
		t.Errorf("audit log %+v, %v; want the mark recorded as cancelled", log, err)
	}
	if code, out, errOut := run(t, append([]string{"mark", "raw.a", "--status", "pending", "--spec", sp, "--dsn", dsn}, window...)...); code != 0 || !strings.HasPrefix(out, "marked 3 units") {
		t.Fatalf("the next mark: %d %q %s", code, out, errOut)
	}
	if n := applied(); n != 0 {
		t.Errorf("%d units applied after the next mark, want 0", n)
	}
}

// TestRunStopsOnSIGTERMAsItsHelpSays: SIGTERM during `bollhav run` stops
// the running unit's command at once (it does not wait for it to finish),
// returns the unit to pending without counting an attempt, records the run
// cancelled, names the retry and exits 1 — what `run --help` promises.
func TestRunStopsOnSIGTERMAsItsHelpSays(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "bollhav.yaml")
	if err := os.WriteFile(sp, []byte(`models:
  - {name: raw.slow, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["sleep", "60"]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "state.db")
	cmd, stdout, stderr := cliProcess(t, "run", "raw.slow", "--spec", sp, "--dsn", db, "--since", "2026-01-01", "--until", "2026-01-02")
	var s *sqlite.Store
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s == nil {
			if _, err := os.Stat(db); err == nil {
				s, _ = sqlite.Open(context.Background(), db)
			}
		}
		if s != nil {
			if st, _ := s.Stats(context.Background(), "", "raw.slow"); st.Counts[state.Running] == 1 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s == nil {
		t.Fatalf("the run never created its store\n%s", stderr.String())
	}
	defer s.Close()
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if took := time.Since(signalled); took > 20*time.Second {
		t.Errorf("the run took %s to stop: it waited for the unit instead of stopping it", took)
	}
	var units []state.Unit
	_ = s.ScanUnits(context.Background(), state.UnitQuery{Model: "raw.slow"}, func(u state.Unit) error { units = append(units, u); return nil })
	if len(units) != 1 || units[0].Status != state.Pending || units[0].Attempts != 0 {
		t.Errorf("units %+v, want the one day back to pending with no attempt counted", units)
	}
	runs, _ := s.Runs(context.Background(), "", 1)
	if len(runs) != 1 || runs[0].Status != state.RunCancelled {
		t.Errorf("runs %+v, want one cancelled", runs)
	}
	if !strings.Contains(stdout.String(), "cancelled") || !strings.Contains(stdout.String(), "bollhav run --retry 1") {
		t.Errorf("summary does not say cancelled and name the retry:\n%s", stdout.String())
	}
	_, help, _ := run(t, "help", "run")
	if !strings.Contains(help, "back to pending") || strings.Contains(help, "lets running units finish") {
		t.Errorf("run --help does not say what SIGTERM does:\n%s", help)
	}
}
