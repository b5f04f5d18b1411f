package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxUI runs `bollhav ARGS` (this test binary as the CLI) in a detached
// tmux session of the given size and returns a function that captures the
// screen and one that types keys (tmux send-keys names) into it.
func tmuxUI(t *testing.T, width, height string, args ...string) (capture func() string, send func(keys ...string)) {
	t.Helper()
	return tmuxUIEnv(t, nil, width, height, args...)
}

// tmuxUIEnv is tmuxUI with env ("NAME=value") set for the process: the
// tmux server's environment is its own, not the test's.
func tmuxUIEnv(t *testing.T, env []string, width, height string, args ...string) (capture func() string, send func(keys ...string)) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	name := "bollhav-test-" + strings.ReplaceAll(filepath.Base(t.TempDir()), "/", "")
	cmd := "BOLLHAV_CLI_MAIN=1 TERM=xterm-256color "
	for _, kv := range env {
		cmd += shellQuote(kv) + " "
	}
	cmd = "env " + cmd + shellQuote(os.Args[0]) + " -test.run=^$ --"
	for _, a := range args {
		cmd += " " + shellQuote(a)
	}
	if out, err := exec.Command("tmux", "new-session", "-d", "-s", name, "-x", width, "-y", height, cmd+"; sleep 60").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", name).Run() })
	capture = func() string {
		out, err := exec.Command("tmux", "capture-pane", "-p", "-t", name).Output()
		if err != nil {
			t.Fatalf("tmux capture-pane: %v", err)
		}
		return string(out)
	}
	send = func(keys ...string) {
		if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", name}, keys...)...).CombinedOutput(); err != nil {
			t.Fatalf("tmux send-keys: %v\n%s", err, out)
		}
	}
	return capture, send
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func waitScreen(t *testing.T, capture func() string, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen := capture()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not on the screen after 20 s:\n%s", what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func rowOf(screen, model string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " "+model+" ") {
			return l
		}
	}
	return ""
}

// TestUIInTmuxOnTheDemo drives the built CLI's UI in a real terminal (tmux,
// 80×24) on the demo project: it opens on the incidents with the payments
// failure and its error on top; the pipelines view (key 1) lists the demo's models
// with the payments failure, fits the screen, and a mark made by another
// process (re-queueing the failed hour) appears without a key press.
func TestUIInTmuxOnTheDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds the demo and drives tmux")
	}
	dir, sp := demoCopy(t)
	capture, send := tmuxUI(t, "80", "24", "--spec", sp, "ui")
	// It opens on the incidents, raw.payments' failed hour on top with its
	// error readable, no key pressed: first the first look, then the
	// traced report, which names what waits on it.
	first := waitScreen(t, capture, "the traced incidents with raw.payments on top", func(s string) bool {
		return strings.Contains(s, "Incidents") && strings.Contains(s, "503 Service Unavailable") && !strings.Contains(s, "first look:")
	})
	lines := strings.Split(first, "\n")
	if len(lines) < 4 || !strings.Contains(lines[1], "raw.payments failed") || !strings.Contains(lines[1], "›") {
		t.Errorf("the first card is not raw.payments' failure, selected:\n%s", first)
	}
	if !strings.Contains(first, "holds 4 units of core.daily_revenue, mart.monthly_revenue") {
		t.Errorf("the blocked units behind it are not named:\n%s", first)
	}
	send("1")
	screen := waitScreen(t, capture, "the pipelines view with raw.payments failed", func(s string) bool {
		return strings.Contains(s, "Pipelines") && strings.Contains(rowOf(s, "raw.payments"), "✗ 1")
	})
	for _, m := range []string{"raw.orders", "core.daily_revenue", "mart.monthly_revenue"} {
		if rowOf(screen, m) == "" {
			t.Errorf("no row for %s:\n%s", m, screen)
		}
	}
	lines = strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) > 24 {
		t.Errorf("%d lines on a 24-line terminal", len(lines))
	}
	since := demoOutage(t, dir)
	mark := exec.Command(os.Args[0], "-test.run=^$", "--", "mark", "raw.payments", "--spec", sp,
		"--since", since.Format(time.RFC3339), "--until", since.Add(time.Hour).Format(time.RFC3339), "--status", "pending")
	mark.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1")
	if out, err := mark.CombinedOutput(); err != nil {
		t.Fatalf("mark from another process: %v\n%s", err, out)
	}
	waitScreen(t, capture, "raw.payments without its failure, with a pending unit", func(s string) bool {
		row := rowOf(s, "raw.payments")
		return row != "" && !strings.Contains(row, "✗ 1") && strings.Contains(row, "· 1")
	})
}
