package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/stores"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// hostileErr is what raw.leak's command writes to stderr before it exits
// 1, as a loader that echoes an upstream API's error body would: a title
// change, a screen clear, concealed text and a clipboard write (OSC 52).
const hostileErr = "\x1b]0;TITLE\x07\x1b[2J\x1b[8mhidden\x1b]52;c;cm0gLXJmIH4=\x07"

// hostileSeen is hostileErr as text output shows it: every escape visible.
var hostileSeen = untrusted.Line(hostileErr)

// hostileSpec: raw.leak fails every window with hostileErr on stderr;
// core.down is gated on it (EXACT), and the test stores a blocked reason
// of core.down that quotes the same bytes.
const hostileSpec = `models:
  - {name: raw.leak, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {command: ["sh", "-c", "printf '\\033]0;TITLE\\007\\033[2J\\033[8mhidden\\033]52;c;cm0gLXJmIH4=\\007' >&2; exit 1"]}}
  - {name: core.down, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.leak, contract: exact}], run: {command: ["true"]}}
`

type hostileWorld struct{ spec, dsn string }

func (w hostileWorld) args(cmd string, more ...string) []string {
	return append([]string{cmd, "--spec", w.spec, "--dsn", w.dsn}, more...)
}

func hostileHour(n int) string { return state.FormatTime(time.Date(2026, 1, 1, n, 0, 0, 0, time.UTC)) }

// hostileEach runs f on a SQLite world and a PostgreSQL one (skipped
// without a server, as pgtest says) where raw.leak's first hour failed
// through a real run (its error is hostileErr from the command's stderr)
// and core.down's first hour is blocked with a reason that quotes it.
func hostileEach(t *testing.T, f func(t *testing.T, w hostileWorld)) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			w := hostileWorld{spec: filepath.Join(dir, "bollhav.yaml"), dsn: filepath.Join(dir, "state.db")}
			schema := ""
			if backend == "postgres" {
				w.dsn = pgtest.DSN(t)
				schema = pgtest.Schema(t, w.dsn)
				t.Setenv("BOLLHAV_PG_SCHEMA", schema)
			}
			t.Setenv("BOLLHAV_ACTOR", "tester")
			if err := os.WriteFile(w.spec, []byte(hostileSpec), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := run(t, w.args("apply")...); code != ExitOK {
				t.Fatalf("apply: %s", errOut)
			}
			if code, _, errOut := run(t, w.args("run", "raw.leak", "--since", hostileHour(0), "--until", hostileHour(1))...); code != ExitFailure {
				t.Fatalf("run raw.leak: exit %d, want 1: %s", code, errOut)
			}
			s, _, err := stores.Open(context.Background(), w.dsn, dir, stores.Options{PostgresSchema: schema})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, now := context.Background(), time.Now()
			win := state.MustWindow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC))
			if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "core.down", Windows: []state.Window{win}, Now: now}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetStatus(ctx, state.StatusChange{Model: "core.down", Window: win, From: []state.UnitStatus{state.Pending},
				To: state.Blocked, Reason: "raw.leak (EXACT): " + hostileErr, Now: now}); err != nil {
				t.Fatal(err)
			}
			f(t, w)
		})
	}
}

// hostileCommands are the commands that print raw.leak's error or
// core.down's reason, each with its arguments.
var hostileCommands = []struct {
	name string
	args []string
}{
	{"units", []string{"raw.leak"}},
	{"units down", []string{"core.down"}},
	{"incidents", nil},
	{"why", []string{"raw.leak", "--at", hostileHour(0)}},
	{"why down", []string{"core.down", "--at", hostileHour(0)}},
	{"blocked", nil},
}

// checkNoHostileBytes fails unless out holds no ESC and no other control
// byte but newline, and shows hostileErr's escapes as text. On a terminal
// bollhav's own escapes may remain: SGR styling without the hidden-text
// attribute, and run's live view: autowrap off and on around its footer,
// moving up a few lines and erasing below.
func checkNoHostileBytes(t *testing.T, what, out string, terminal bool) {
	t.Helper()
	plain := out
	if terminal {
		for _, m := range sgrRe.FindAllStringSubmatch(out, -1) {
			if sgrHides(m[1]) {
				t.Errorf("%s: the terminal got a hidden-text SGR %q:\n%q", what, m[0], out)
			}
		}
		plain = strings.ReplaceAll(ownEscapesRe.ReplaceAllString(sgrRe.ReplaceAllString(out, ""), ""), "\r\n", "\n")
	}
	for i := 0; i < len(plain); i++ {
		if c := plain[i]; c < 0x20 && c != '\n' || c == 0x7f {
			t.Errorf("%s: control byte %#x at %d reached the output:\n%q", what, c, i, out)
			break
		}
	}
	if !strings.Contains(plain, `\x1b]0;TITLE\x07`) || !strings.Contains(plain, `\x1b[8mhidden`) || !strings.Contains(plain, `\x1b]52;c;`) {
		t.Errorf("%s: the escapes are not shown as text:\n%s", what, plain)
	}
}

var (
	sgrRe        = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)
	ownEscapesRe = regexp.MustCompile(`\x1b\[[0-9]*F|\x1b\[J|\x1b\[\?7[lh]`)
)

// sgrHides reports whether SGR parameters p turn on concealed text (8),
// reading past the arguments of extended colours (38;5;N, 38;2;R;G;B).
func sgrHides(p string) bool {
	ps := strings.FieldsFunc(p, func(r rune) bool { return r == ';' || r == ':' })
	for i := 0; i < len(ps); i++ {
		switch ps[i] {
		case "8":
			return true
		case "38", "48", "58":
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		}
	}
	return false
}

// TestStoredEscapesReachTheTerminalAsText: a unit's error that a command
// wrote to stderr with escape sequences (a title, a screen clear, hidden
// text, a clipboard write), and a blocked reason quoting it, are shown by
// units, incidents, why and blocked with every escape made visible —
// piped and on a terminal (a pseudo-terminal, colours on) — while -o json
// keeps the exact bytes. run prints the error the same way, piped, on a
// terminal and on stderr beside its JSON (whose document has no errors).
func TestStoredEscapesReachTheTerminalAsText(t *testing.T) {
	hostileEach(t, func(t *testing.T, w hostileWorld) {
		for _, c := range hostileCommands {
			cmd := strings.Fields(c.name)[0]
			code, out, errOut := run(t, w.args(cmd, c.args...)...)
			if code != ExitOK {
				t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
			}
			checkNoHostileBytes(t, c.name+" piped", out, false)

			code, out = onTerminal(t, w.args(cmd, c.args...)...)
			if code != ExitOK {
				t.Fatalf("%s on a terminal: exit %d:\n%s", c.name, code, out)
			}
			checkNoHostileBytes(t, c.name+" on a terminal", out, true)

			code, out, errOut = run(t, w.args(cmd, append(c.args, "-o", "json")...)...)
			if code != ExitOK {
				t.Fatalf("%s -o json: exit %d: %s", c.name, code, errOut)
			}
			checkJSONKeepsTheBytes(t, c.name, out)
		}

		// run: its summary piped, on a terminal, and its errors on stderr
		// beside -o json — each run a window of its own that fails anew.
		code, out, errOut := run(t, w.args("run", "raw.leak", "--since", hostileHour(1), "--until", hostileHour(2))...)
		if code != ExitFailure {
			t.Fatalf("run piped: exit %d, want 1: %s", code, errOut)
		}
		checkNoHostileBytes(t, "run piped", out, false)
		code, out = onTerminal(t, w.args("run", "raw.leak", "--since", hostileHour(2), "--until", hostileHour(3))...)
		if code != ExitFailure {
			t.Fatalf("run on a terminal: exit %d, want 1:\n%s", code, out)
		}
		checkNoHostileBytes(t, "run on a terminal", out, true)
		code, out, errOut = run(t, w.args("run", "raw.leak", "--since", hostileHour(3), "--until", hostileHour(4), "-o", "json")...)
		if code != ExitFailure {
			t.Fatalf("run -o json: exit %d, want 1: %s", code, errOut)
		}
		checkNoHostileBytes(t, "run -o json's stderr", errOut, false)
		if strings.IndexByte(out, 0x1b) >= 0 { // its tasks' errors are on stderr, not in the document
			t.Errorf("run -o json: a raw ESC in the document:\n%q", out)
		}
	})
}

// checkJSONKeepsTheBytes fails unless the JSON document out holds
// hostileErr exactly, its control bytes escaped as JSON escapes them.
func checkJSONKeepsTheBytes(t *testing.T, what, out string) {
	t.Helper()
	if strings.IndexByte(out, 0x1b) >= 0 {
		t.Errorf("%s -o json: a raw ESC in the document", what)
	}
	if !strings.Contains(out, `\u001b]0;TITLE\u0007\u001b[2J\u001b[8mhidden\u001b]52;c;cm0gLXJmIH4=\u0007`) {
		t.Errorf("%s -o json: the error's exact bytes are not in the document:\n%s", what, out)
	}
}

// onTerminal runs the CLI as a process of its own (see TestMain) with
// stdout and stderr on a pseudo-terminal of 200 columns, colours on, and
// returns its exit code and everything it wrote there, byte for byte.
func onTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1", "TERM=xterm-256color", "NO_COLOR=", "COLORTERM=truecolor")
	cmd.Stdout, cmd.Stderr = tty, tty
	if err := cmd.Start(); err != nil {
		tty.Close()
		t.Fatal(err)
	}
	tty.Close() // the child holds its own: the master reads EOF (EIO) when it exits
	var out bytes.Buffer
	read := make(chan error, 1)
	go func() { _, err := io.Copy(&out, ptmx); read <- err }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v on a terminal: still running after 60 s:\n%s", args, out.String())
	}
	if err := <-read; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the terminal: %v", err)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(werr, &exit):
		return exit.ExitCode(), out.String()
	case werr != nil:
		t.Fatal(werr)
	}
	return 0, out.String()
}
