package tui

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state"
)

// launchTimeout bounds one launch: a program that never draws its data
// fails the benchmark instead of hanging it.
const launchTimeout = 2 * time.Minute

// bollhavBinary builds the bollhav program once per benchmark process, into
// dir, and returns its path.
var bollhavBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "bollhav-launch-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bollhav")
	cmd := exec.Command("go", "build", "-o", bin, "../..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// benchLaunch is the whole program as a user starts it: `bollhav ui` on the
// generated store and spec, in a pseudo-terminal of 160×48, timed from the
// exec to the first frame that shows the data — the opening screen's rows,
// not its loading line — as launch-ns. The generated store has failed and
// blocked units, so the program opens on Incidents, whose first frame is a
// glance (the failed roots, "first look: …"); traced-ns is the time to the
// traced report that replaces it ("… failures first, then by what they hold"), so
// the cost of the whole screen stays in view. The program then quits on q.
// Each launch reports the child's own peak RSS (VmHWM, read once the
// traced report is drawn, just before q) as launch-peak-MB: the memory of
// a real UI process that has done its opening work, nothing of the
// benchmark's.
//
// dsn names the store (dir/state.db when empty) and env is added to the
// child's environment (BOLLHAV_PG_SCHEMA for a PostgreSQL fixture).
func benchLaunch(b *testing.B, dir string, models int, dsn string, env ...string) {
	bin, err := bollhavBinary()
	if err != nil {
		b.Fatal(err)
	}
	specPath := filepath.Join(dir, gen.SpecFile)
	if err := os.WriteFile(specPath, gen.Spec(gen.Config{Models: models, Seed: scaleSeed}), 0o644); err != nil {
		b.Fatal(err)
	}
	var peak float64
	for i := 0; i < b.N; i++ {
		l, err := launchOnce(bin, specPath, cmp.Or(dsn, filepath.Join(dir, "state.db")), env...)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(l.data.Nanoseconds()), "launch-ns")
		b.ReportMetric(float64(l.traced.Nanoseconds()), "traced-ns")
		peak = max(peak, l.peakMB)
	}
	b.ReportMetric(peak, "launch-peak-MB")
}

// launch is one launch's figures: exec to the first frame with data, exec
// to the traced opening screen, and the child's peak RSS then.
type launch struct {
	data, traced time.Duration
	peakMB       float64
}

// launchOnce starts the program, waits for its first frame with data and
// then for its traced opening screen, and quits it.
func launchOnce(bin, specPath, dsn string, env ...string) (launch, error) {
	var l launch
	cmd := exec.Command(bin, "ui", "--spec", specPath, "--dsn", dsn, "--as-of", state.FormatTime(gen.AsOf))
	cmd.Env = append(append(os.Environ(), "TERM=xterm-256color", "NO_COLOR="), env...)
	start := time.Now()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: scaleHeight, Cols: scaleWidth})
	if err != nil {
		return l, fmt.Errorf("starting %s: %w", bin, err)
	}
	defer tty.Close()
	shown, traced := make(chan time.Duration, 1), make(chan time.Duration, 1)
	var screen lockedBuffer
	go func() {
		buf := make([]byte, 64<<10)
		seen, done := false, false
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				screen.Write(buf[:n])
				out := screen.String()
				if !seen && hasLaunchData(out) {
					seen = true
					shown <- time.Since(start)
				}
				if seen && !done && hasTracedData(out) {
					done = true
					traced <- time.Since(start)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	wait := func(ch chan time.Duration, what string) error {
		select {
		case d := <-ch:
			if what == "data" {
				l.data = d
			} else {
				l.traced = d
			}
			return nil
		case <-time.After(launchTimeout):
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("no frame with %s within %s; the screen so far:\n%s", what, launchTimeout, tail(ansi.Strip(screen.String()), 2000))
		}
	}
	if err := wait(shown, "data"); err != nil {
		return l, err
	}
	if err := wait(traced, "the traced report"); err != nil {
		return l, err
	}
	if l.peakMB, err = childPeakRSS(cmd.Process.Pid); err != nil {
		return l, err
	}
	if _, err := io.WriteString(tty, "q"); err != nil {
		return l, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return l, fmt.Errorf("the program ended with %v; the screen:\n%s", err, tail(ansi.Strip(screen.String()), 2000))
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return l, errors.New("the program did not quit on q within 30 s")
	}
	return l, nil
}

// hasLaunchData reports whether the terminal output so far holds the
// opening screen's data: on Incidents, the glance's footer ("first look:
// 628 failed roots · tracing …") or the traced report's; the pipelines
// view (nothing wrong) has its MODEL column.
func hasLaunchData(out string) bool {
	return strings.Contains(ansi.Strip(out), "first look:") || hasTracedData(out)
}

// hasTracedData reports whether the output holds the traced opening
// screen: the incidents footer ("642 incidents · failures first, then by what
// they hold") or, with nothing wrong, the pipelines view it steps aside for.
func hasTracedData(out string) bool {
	s := ansi.Strip(out)
	return strings.Contains(s, "· failures first") || strings.Contains(s, "MODEL")
}

// childPeakRSS is a running process's peak resident set (VmHWM) in MB.
func childPeakRSS(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return vmHWM(raw)
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// lockedBuffer is a bytes.Buffer the pty reader writes while the
// benchmark reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
