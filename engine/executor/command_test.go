//go:build unix

package executor

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// writeScript writes an executable /bin/sh script into dir and returns its
// path.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := state.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// seenEnv runs the env-dumping script for u and returns the BOLLHAV_*
// variables it saw, and the directory it ran in.
func seenEnv(t *testing.T, u UnitRun) (map[string]string, string, Result) {
	t.Helper()
	dir := u.SpecDir
	writeScript(t, dir, "bin/show_env.sh", `env > "$1"; pwd -P > "$2"; echo rows_written=42`)
	envFile, pwdFile := filepath.Join(dir, "env.out"), filepath.Join(dir, "pwd.out")
	u.Model.Run.Command = []string{"bin/show_env.sh", envFile, pwdFile}
	res, err := (&CommandExecutor{}).Execute(context.Background(), u)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	raw, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if name, value, ok := strings.Cut(line, "="); ok && strings.HasPrefix(name, "BOLLHAV_") {
			seen[name] = value
		}
	}
	pwd, err := os.ReadFile(pwdFile)
	if err != nil {
		t.Fatal(err)
	}
	return seen, strings.TrimSpace(string(pwd)), res
}

func TestCommandEnvForAWindow(t *testing.T) {
	t.Setenv("BOLLHAV_MODEL", "inherited.model")
	t.Setenv("BOLLHAV_TEST_PARENT", "passed on")
	dir := t.TempDir()
	w := state.MustWindow(mustTime(t, "2026-01-01T00:00:00Z"), mustTime(t, "2026-01-01T01:00:00Z"))
	seen, pwd, res := seenEnv(t, UnitRun{Model: commandModel("raw.orders"), Window: &w, RunID: 7, StateMode: spec.Discover, SpecDir: dir})
	want := map[string]string{
		"BOLLHAV_MODEL":       "raw.orders",
		"BOLLHAV_TARGET":      `"raw"."orders"`,
		"BOLLHAV_SINCE":       "2026-01-01T00:00:00Z",
		"BOLLHAV_UNTIL":       "2026-01-01T01:00:00Z",
		"BOLLHAV_RUN_ID":      "7",
		"BOLLHAV_STATE_MODE":  "discover",
		"BOLLHAV_SOURCES":     "[]",
		"BOLLHAV_TEST_PARENT": "passed on",
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("%s = %q, want %q", k, seen[k], v)
		}
	}
	if real, _ := filepath.EvalSymlinks(dir); pwd != real {
		t.Errorf("ran in %s, want the spec directory %s", pwd, real)
	}
	if res.RowsWritten == nil || *res.RowsWritten != 42 {
		t.Errorf("RowsWritten = %v, want 42", res.RowsWritten)
	}
}

func TestCommandEnvForATimelessModel(t *testing.T) {
	m := commandModel("mart.countries")
	m.Temporality = spec.Timeless
	m.Upstream = []spec.Source{spec.NewUnknownSource(m.Name)}
	seen, _, _ := seenEnv(t, UnitRun{Model: m, RunID: 1, SpecDir: t.TempDir()})
	for k, v := range map[string]string{
		"BOLLHAV_TARGET":     `"mart"."countries"`,
		"BOLLHAV_SINCE":      "",
		"BOLLHAV_UNTIL":      "",
		"BOLLHAV_STATE_MODE": "bulldozer",
		"BOLLHAV_SOURCES":    "[]",
	} {
		got, set := seen[k]
		if !set || got != v {
			t.Errorf("%s = %q (set: %v), want %q, set", k, got, set, v)
		}
	}
}

func TestCommandEnvInASuffixedEnvironment(t *testing.T) {
	m := commandModel("warehouse.daily")
	m.Upstream = shopSources()
	dir := t.TempDir()
	w := state.MustWindow(mustTime(t, "2026-03-29T00:00:00Z"), mustTime(t, "2026-03-30T00:00:00Z"))
	seen, _, _ := seenEnv(t, UnitRun{Model: m, Env: spec.Env{Suffix: "pr123"}, Window: &w, RunID: 99, StateMode: spec.Torch, SpecDir: dir})
	for k, v := range map[string]string{
		"BOLLHAV_TARGET":     `"warehouse_pr123"."daily"`,
		"BOLLHAV_SINCE":      "2026-03-29T00:00:00Z",
		"BOLLHAV_UNTIL":      "2026-03-30T00:00:00Z",
		"BOLLHAV_RUN_ID":     "99",
		"BOLLHAV_STATE_MODE": "torch",
	} {
		if seen[k] != v {
			t.Errorf("%s = %q, want %q", k, seen[k], v)
		}
	}
	checkShopSourcesJSON(t, seen["BOLLHAV_SOURCES"])
}

// runScript runs a script with body as a command model's program and
// returns its result, the folder it ran in and its error.
func runScript(t *testing.T, ctx context.Context, e *CommandExecutor, timeout time.Duration, body string) (Result, string, error) {
	t.Helper()
	dir := t.TempDir()
	writeScript(t, dir, "run.sh", body)
	m := commandModel("raw.orders", "./run.sh")
	m.Run.Timeout = timeout
	res, err := e.Execute(ctx, UnitRun{Model: m, SpecDir: dir})
	return res, dir, err
}

func TestCommandRowsWritten(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       *int64
		err        string
	}{
		{"none", "echo hello", nil, ""},
		{"zero", "echo rows_written=0", int64p((0)), ""},
		{"last wins", "echo rows_written=1; echo noise; echo '  rows_written=17\r'", int64p((17)), ""},
		{"malformed", "echo ok; echo rows_written=abc", nil, `stdout line 2: malformed "rows_written=abc"`},
		{"negative", "echo rows_written=-4", nil, `stdout line 1: malformed "rows_written=-4"`},
		{"spaced", "echo 'rows_written = 5'", nil, `stdout line 1: malformed "rows_written = 5"`},
		{"empty", "echo rows_written=", nil, `stdout line 1: malformed`},
		{"other key", "echo rows_written_by_batch=5; echo rows_written=3", int64p((3)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := runScript(t, context.Background(), &CommandExecutor{}, 0, tc.body)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (res.RowsWritten == nil) != (tc.want == nil) || res.RowsWritten != nil && *res.RowsWritten != *tc.want {
				t.Errorf("RowsWritten = %v, want %v", deref(res.RowsWritten), deref(tc.want))
			}
		})
	}
}

func deref(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

func TestCommandFailureKeepsStderrTail(t *testing.T) {
	_, _, err := runScript(t, context.Background(), &CommandExecutor{}, 0,
		"echo rows_written=5; echo 'loading orders' >&2; echo 'ERROR: relation \"raw.orders\" does not exist  ' >&2; exit 3")
	want := "exit status 3: loading orders\nERROR: relation \"raw.orders\" does not exist"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Status != "exit status 3" {
		t.Errorf("err is not a *CommandError with status exit status 3: %#v", err)
	}
	_, _, err = runScript(t, context.Background(), &CommandExecutor{}, 0, "exit 1")
	if err == nil || err.Error() != "exit status 1" {
		t.Errorf("silent failure: err = %q, want exit status 1", err)
	}
}

func TestCommandHugeOutputIsBounded(t *testing.T) {
	// 2 MB of stderr in 40-byte lines, a 4 MB stdout line with no newline,
	// then the lines that matter.
	_, _, err := runScript(t, context.Background(), &CommandExecutor{}, 0, `
head -c 2000000 /dev/zero | tr '\0' 'x' | fold -w 40 >&2; echo >&2
head -c 4000000 /dev/zero | tr '\0' 'y'
echo
echo 'rows_written=9'
echo 'the real error' >&2
exit 2`)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "exit status 2: …\n") || !strings.HasSuffix(msg, "\nthe real error") {
		t.Errorf("err = %.200q…, want exit status 2, an elision mark and the last line", msg)
	}
	if len(msg) > tailBytes+100 || strings.Count(msg, "\n") > tailLines+1 {
		t.Errorf("err is %d bytes and %d lines, want at most about %d bytes and %d lines", len(msg), strings.Count(msg, "\n")+1, tailBytes, tailLines)
	}
}

// processGone reports whether pid has exited (a zombie waiting for its
// reaper counts as gone: it runs nothing and holds nothing).
func processGone(pid int) bool {
	if raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := bytes.LastIndexByte(raw, ')'); i >= 0 && i+2 < len(raw) && raw[i+2] == 'Z' {
			return true
		}
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// waitGone waits up to 3 s for the process whose pid is in file to go.
func waitGone(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if processGone(pid) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("child process %d is still running", pid)
}

func TestCommandTimeoutKillsTheProcessGroup(t *testing.T) {
	start := time.Now()
	_, dir, err := runScript(t, context.Background(), &CommandExecutor{KillGrace: time.Second}, 300*time.Millisecond,
		`sleep 300 & echo $! > child.pid; echo started >&2; wait`)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Execute took %s for a 300ms timeout", took)
	}
	if err == nil || err.Error() != "timed out after 300ms: started" {
		t.Errorf("err = %q, want timed out after 300ms: started", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err does not wrap context.DeadlineExceeded: %v", err)
	}
	waitGone(t, filepath.Join(dir, "child.pid"))
}

func TestCommandIgnoringSIGTERMIsKilledAfterTheGrace(t *testing.T) {
	start := time.Now()
	_, dir, err := runScript(t, context.Background(), &CommandExecutor{KillGrace: 300 * time.Millisecond}, 200*time.Millisecond,
		`trap '' TERM; sleep 300 & echo $! > child.pid; wait; wait`)
	took := time.Since(start)
	if took < 500*time.Millisecond || took > 4*time.Second {
		t.Errorf("Execute took %s, want the timeout plus the grace", took)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "timed out after 200ms") {
		t.Errorf("err = %v", err)
	}
	waitGone(t, filepath.Join(dir, "child.pid"))
}

func TestCommandCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, dir, err := runScript(t, ctx, &CommandExecutor{}, 0, `sleep 300 & echo $! > child.pid; wait`)
	if err == nil || !strings.HasPrefix(err.Error(), "cancelled") || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want cancelled wrapping context.Canceled", err)
	}
	waitGone(t, filepath.Join(dir, "child.pid"))

	if _, err := (&CommandExecutor{}).Execute(ctx, UnitRun{Model: commandModel("raw.orders", "true")}); !errors.Is(err, context.Canceled) {
		t.Errorf("already cancelled: err = %v", err)
	}
}

func TestCommandBackgroundChildDoesNotOutliveASuccess(t *testing.T) {
	start := time.Now()
	res, dir, err := runScript(t, context.Background(), &CommandExecutor{}, 0, `sleep 300 & echo $! > child.pid; echo rows_written=1`)
	if err != nil || res.RowsWritten == nil || *res.RowsWritten != 1 {
		t.Fatalf("Execute = %v, %v", deref(res.RowsWritten), err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Execute waited %s for a background child holding stdout", took)
	}
	waitGone(t, filepath.Join(dir, "child.pid"))
}

func TestCommandProgramErrors(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "bin/ok.sh", "true")
	if err := os.WriteFile(filepath.Join(dir, "plain.sh"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv0 string
		want  []string
	}{
		{"./missing.sh", []string{`command "./missing.sh"`, filepath.Join(dir, "missing.sh"), "does not exist"}},
		{"bin/missing.sh", []string{filepath.Join(dir, "bin/missing.sh"), "does not exist"}},
		{"./plain.sh", []string{"plain.sh", "not executable"}},
		{"./bin", []string{"is a directory"}},
		{"bollhav-no-such-program", []string{`command "bollhav-no-such-program": not found in PATH`, "./bollhav-no-such-program"}},
	} {
		_, err := (&CommandExecutor{}).Execute(context.Background(), UnitRun{Model: commandModel("raw.orders", tc.argv0), SpecDir: dir})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %v, want it to contain %q", tc.argv0, err, w)
			}
		}
	}
	// A bare name is looked up in PATH, and an absolute path is used as is.
	for _, argv0 := range []string{"true", filepath.Join(dir, "bin/ok.sh")} {
		if _, err := (&CommandExecutor{}).Execute(context.Background(), UnitRun{Model: commandModel("raw.orders", argv0), SpecDir: dir}); err != nil {
			t.Errorf("%s: %v", argv0, err)
		}
	}
	m := commandModel("raw.orders")
	m.Run = spec.Run{Kind: spec.RunSQL, SQL: []string{"SELECT 1"}}
	if _, err := (&CommandExecutor{}).Execute(context.Background(), UnitRun{Model: m}); err == nil || !strings.Contains(err.Error(), "sql") {
		t.Errorf("sql model: err = %v", err)
	}
}

func TestCommandErrorsRedactSecrets(t *testing.T) {
	t.Setenv("PGPASSWORD", "hunter2-secret")
	t.Setenv("WAREHOUSE_CONN", "host=db user=loader sslcert=/etc/loader.pem")
	dir := t.TempDir()
	writeScript(t, dir, "run.sh", `
echo "rows_written=$PGPASSWORD"
echo "connecting with $WAREHOUSE_CONN" >&2
echo "dial postgres://loader:s3cr3t@db:5432/x failed; password=other-secret" >&2
echo "env: PGPASSWORD=$PGPASSWORD" >&2
exit 1`)
	m := commandModel("raw.orders", "./run.sh")
	m.Connection = &spec.Connection{DSNEnvVar: "WAREHOUSE_CONN"}
	_, err := (&CommandExecutor{}).Execute(context.Background(), UnitRun{Model: m, SpecDir: dir})
	if err == nil {
		t.Fatal("no error")
	}
	for _, secret := range []string{"hunter2-secret", "sslcert=/etc/loader.pem", "s3cr3t", "other-secret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error leaks %q: %s", secret, err)
		}
	}
	for _, kept := range []string{"[redacted WAREHOUSE_CONN]", "postgres://loader:[redacted]@db:5432/x", "password=[redacted]", "PGPASSWORD=[redacted PGPASSWORD]"} {
		if !strings.Contains(err.Error(), kept) {
			t.Errorf("error lacks %q: %s", kept, err)
		}
	}

	// A malformed rows_written line quoted in an error is redacted too.
	writeScript(t, dir, "run.sh", `echo "rows_written=$PGPASSWORD"`)
	_, err = (&CommandExecutor{}).Execute(context.Background(), UnitRun{Model: m, SpecDir: dir})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "stdout line 1") {
		t.Errorf("malformed secret line: err = %v", err)
	}
}

func TestCommandOutputIsLogged(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, _, err := runScript(t, context.Background(), &CommandExecutor{Logger: logger}, 0, "echo to-stdout; echo to-stderr >&2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stream=stdout line=to-stdout model=raw.orders", "stream=stderr line=to-stderr"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}

func int64p(v int64) *int64 { return &v }
