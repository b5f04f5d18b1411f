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
	return tmuxUIIn(t, "", env, width, height, args...)
}

// tmuxUIIn is tmuxUIEnv run in the folder dir ("" for tmux's own).
func tmuxUIIn(t *testing.T, dir string, env []string, width, height string, args ...string) (capture func() string, send func(keys ...string)) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	// A tmux server of the test's own, its socket in the test's folder
	// (-S): on the shared default server one test's last session ending
	// stops the server while another test's new-session connects to it
	// ("server exited unexpectedly", a flake of a CI run).
	sock := filepath.Join(t.TempDir(), "tmux")
	tmux := func(args ...string) *exec.Cmd { return exec.Command("tmux", append([]string{"-S", sock}, args...)...) }
	const name = "ui"
	cmd := "BOLLHAV_CLI_MAIN=1 TERM=xterm-256color "
	for _, kv := range env {
		cmd += shellQuote(kv) + " "
	}
	cmd = "env " + cmd + shellQuote(os.Args[0]) + " -test.run=^$ --"
	if dir != "" {
		cmd = "cd " + shellQuote(dir) + " && " + cmd
	}
	for _, a := range args {
		cmd += " " + shellQuote(a)
	}
	if out, err := tmux("new-session", "-d", "-s", name, "-x", width, "-y", height, cmd+"; sleep 60").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = tmux("kill-server").Run() })
	capture = func() string {
		out, err := tmux("capture-pane", "-p", "-t", name).Output()
		if err != nil {
			t.Fatalf("tmux capture-pane: %v", err)
		}
		return string(out)
	}
	send = func(keys ...string) {
		if out, err := tmux(append([]string{"send-keys", "-t", name}, keys...)...).CombinedOutput(); err != nil {
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

// readmeBlock is the first fenced block of README.md whose first line
// starts with first, as its lines.
func readmeBlock(t *testing.T, first string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```")[1:] {
		lines := strings.Split(strings.TrimPrefix(strings.TrimPrefix(block, "sh"), "\n"), "\n")
		if strings.HasPrefix(lines[0], first) {
			return lines
		}
	}
	t.Fatalf("README.md has no block starting with %q", first)
	return nil
}

// TestReadmeFirstStepsInTmux follows the README literally, as a newcomer
// on a terminal would: its first screen's demo command (this test binary
// stands in for `go run .`) in an empty folder, 80×24, ends in the UI on
// the payments failure; the repair's first step (rm …/scripts/outage) and
// the keys the README gives for the UI (r on the incident, d, y) fix it:
// the failure's card goes, and the store holds nothing failed and nothing
// blocked behind the payments hour.
func TestReadmeFirstStepsInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the demo and drives tmux")
	}
	demo := readmeBlock(t, "go run . demo")[0]
	args := strings.Fields(strings.SplitN(demo, "#", 2)[0])[3:] // after "go run ."
	repair := readmeBlock(t, "rm bollhav-demo/scripts/outage")
	dir := t.TempDir()
	capture, send := tmuxUIIn(t, dir, nil, "80", "24", args...)
	waitScreenFor(t, capture, 3*time.Minute, "the demo's UI on the payments failure", func(s string) bool {
		return strings.Contains(s, "Incidents") && strings.Contains(s, "raw.payments failed") && !strings.Contains(s, "first look:")
	})
	rm := strings.Fields(repair[0]) // rm bollhav-demo/scripts/outage
	if err := os.Remove(filepath.Join(dir, rm[1])); err != nil {
		t.Fatalf("the README's %q: %v", repair[0], err)
	}
	send("r")
	waitScreen(t, capture, "the run dialog on the failed hour", func(s string) bool { return strings.Contains(s, "Run 1 unit of raw.payments") })
	send("d")
	// d plans again; y before that plan is ready is refused ("wait for
	// the plan"), as a user sees: wait for it as a user would.
	waitScreen(t, capture, "the run with downstream, planned", func(s string) bool {
		return strings.Contains(s, "with downstream: on") && !strings.Contains(s, "working out the plan") && strings.Contains(s, "models in prod?")
	})
	send("y")
	waitScreenFor(t, capture, 2*time.Minute, "the payments card gone", func(s string) bool {
		return strings.Contains(s, "Incidents") && !strings.Contains(s, "raw.payments failed") && !strings.Contains(s, "Run 1 unit")
	})
	sp := filepath.Join(dir, "bollhav-demo", "bollhav.yaml")
	var st demoStatus
	jsonOf(t, &st, "status", "-o", "json", "--spec", sp)
	for model, want := range map[string]map[string]int{"raw.payments": {"failed": 0}, "core.daily_revenue": {"blocked": 0, "failed": 0}} {
		for status, n := range want {
			if got := st.counts(model)[status]; got != n {
				t.Errorf("after the README's repair %s has %d %s units, want %d", model, got, status, n)
			}
		}
	}
}

// waitScreenFor is waitScreen with a limit of its own.
func waitScreenFor(t *testing.T, capture func() string, limit time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		screen := capture()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not on the screen after %s:\n%s", what, limit, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
