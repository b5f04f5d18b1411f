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

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

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
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "run", "raw.slow", "--spec", sp, "--dsn", db,
		"--since", "2026-01-01", "--until", "2026-01-02")
	cmd.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
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
