package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// TestMain lets a test run the CLI as a real process of its own
// (BOLLHAV_CLI_MAIN=1, arguments after "--"), to signal it like an operator.
// Otherwise it runs the tests and then fails the package when a goroutine
// outlives them (goleak): a run, a worker, a watch or a server the CLI
// started must be gone when its command returns.
func TestMain(m *testing.M) {
	if os.Getenv("BOLLHAV_CLI_MAIN") == "1" {
		args := os.Args
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		os.Exit(Main(args, Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
	}
	goleak.VerifyTestMain(m,
		// teatest.NewTestModel (TestDemoUIOpensOnTheOutage) starts a
		// goroutine per program that waits for SIGINT/SIGTERM on a channel
		// it never closes, by teatest's design; it holds nothing of ours.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		goleak.Cleanup(func(int) { enginetest.RemoveTemplates() }),
	)
}

// cliProcess starts the CLI as a process of its own (see TestMain) with
// args, keeping its output; the test's end kills it if it still runs.
func cliProcess(t *testing.T, args ...string) (cmd *exec.Cmd, stdout, stderr *strings.Builder) {
	t.Helper()
	cmd = exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1")
	stdout, stderr = new(strings.Builder), new(strings.Builder)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, stdout, stderr
}

func TestApplyRegistersInTheDefaultStore(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	code, out, errOut := run(t, "apply", "--spec", sp)
	if code != 0 || out != "registered in prod: 5 created, 0 changed, 0 unchanged\n" {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(sp), ".bollhav", "state.db")); err != nil {
		t.Fatalf("the default store beside the spec: %v", err)
	}
	code, out, _ = run(t, "apply", "--spec", sp)
	if code != 0 || out != "registered in prod: 0 created, 0 changed, 5 unchanged\n" {
		t.Fatalf("second apply: code %d out %q", code, out)
	}
}

func TestApplyRefusals(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	const secret = "Sentinel-Pa55w0rd"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--read-only"}, "read-only"},
		{[]string{"--env", "pr-1"}, "--env"},
		{[]string{"--dsn", "mysql://root:" + secret + "@localhost/db"}, "mysql"},
		{[]string{"--dsn", "postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=2"}, "127.0.0.1"},
	}
	for _, c := range cases {
		code, out, errOut := run(t, append([]string{"apply", "--spec", sp}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d out %q err %q; want exit 2 naming %q", c.args, code, out, errOut, c.want)
		}
		if strings.Contains(errOut, secret) {
			t.Errorf("%v: the password reached stderr", c.args)
		}
	}
}

func TestWorkerRunsUnitsAndStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "bollhav.yaml")
	if err := os.WriteFile(sp, []byte(`models:
  - {name: raw.ticks, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {command: ["sh", "-c", "echo rows_written=2"]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "state.db")
	if code, _, errOut := run(t, "apply", "--spec", sp, "--dsn", db); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	windows := []state.Window{}
	for h := 0; h < 6; h++ {
		since := time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC)
		windows = append(windows, state.MustWindow(since, since.Add(time.Hour)))
	}
	if _, err := s.Prefill(context.Background(), state.PrefillRequest{Model: "raw.ticks", Windows: windows, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}

	cmd, _, stderr := cliProcess(t, "worker", "--spec", sp, "--dsn", db, "--workers", "2")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, _ := s.Stats(context.Background(), "", "raw.ticks")
		if st.Counts[state.Applied] == 6 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker did not stop cleanly on SIGTERM: %v\n%s", err, stderr.String())
	}
	st, _ := s.Stats(context.Background(), "", "raw.ticks")
	if st.Counts[state.Applied] != 6 {
		t.Fatalf("units %v, want 6 applied\n%s", st.Counts, stderr.String())
	}
	if !strings.Contains(stderr.String(), "worker stopped") {
		t.Errorf("no stop line in the log:\n%s", stderr.String())
	}
}

func TestApplyJSON(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	code, out, errOut := run(t, "apply", "--spec", sp, "-o", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, want := range []string{`"env": ""`, `"name": "raw.a"`, `"task_id": 1`, `"outcome": "created"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
}
