package cli

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

const serveSpec = `models:
  - {name: raw.a, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-04T00:00:00Z"},
     run: {command: ["true"]}}
`

// sshScreen collects what a session prints; text reads it without escape
// sequences.
type sshScreen struct{ enginetest.SyncBuffer }

var ansiSeq = regexp.MustCompile(`\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\x1b\][^\x07]*\x07`)

func (s *sshScreen) text() string { return ansiSeq.ReplaceAllString(s.String(), "") }

func (s *sshScreen) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		text := s.text()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(text, w)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the SSH screen:\n%s", want, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type served struct {
	addr, dir, db    string
	operator, viewer gossh.Signer
	cmd              *exec.Cmd
	stderr           *sshScreen
}

// startServe runs `bollhav serve` as a real process on a free port.
func startServe(t *testing.T) *served {
	t.Helper()
	return startServeSpec(t, serveSpec)
}

// startServeSpec is startServe over the spec body.
func startServeSpec(t *testing.T, body string) *served {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bollhav.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServeIn(t, dir, filepath.Join(dir, "state.db"))
}

// startServeIn runs `bollhav serve` on dir's bollhav.yaml and the store
// at db, with an operator and a viewer key written beside the spec.
func startServeIn(t *testing.T, dir, db string, extra ...string) *served {
	t.Helper()
	s := &served{dir: dir, db: db, stderr: &sshScreen{}}
	var opLine, viewLine string
	s.operator, opLine = enginetest.SSHKey(t)
	s.viewer, viewLine = enginetest.SSHKey(t)
	for name, content := range map[string]string{"operators": opLine, "viewers": viewLine} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	l.Close()
	sp := filepath.Join(dir, "bollhav.yaml")
	if code, _, errOut := run(t, "apply", "--spec", sp, "--dsn", s.db); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	s.cmd = exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--ssh", s.addr, "--spec", sp, "--dsn", s.db,
		"--operators", filepath.Join(dir, "operators"), "--viewers", filepath.Join(dir, "viewers"))
	s.cmd.Args = append(s.cmd.Args, extra...)
	s.cmd.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1")
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
	s.stderr.waitFor(t, "listening on")
	return s
}

func (s *served) session(t *testing.T, signer gossh.Signer) (*sshScreen, io.Writer) {
	t.Helper()
	_, screen, in := s.sessionClient(t, signer)
	return screen, in
}

// sessionClient is session with the SSH client, which the test may close
// to disconnect.
func (s *served) sessionClient(t *testing.T, signer gossh.Signer) (*gossh.Client, *sshScreen, io.Writer) {
	t.Helper()
	c, err := gossh.Dial("tcp", s.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	screen := &sshScreen{}
	sess.Stdout, sess.Stderr = screen, screen
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return c, screen, in
}

func (s *served) store(t *testing.T) state.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), s.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestServeOperatorRunsAModelOverSSH: an operator's session gets the UI,
// runs a model from its dialog, and the run lands in the store and the
// audit log under the SSH user and key; a viewer's session shows no action
// and pressing one runs nothing; SIGTERM says goodbye and exits 0.
func TestServeOperatorRunsAModelOverSSH(t *testing.T) {
	s := startServe(t)
	screen, keys := s.session(t, s.operator)
	screen.waitFor(t, "Pipelines", "raw.a")
	screen.waitFor(t, "R run model")
	pressRun(t, screen, keys, "units of raw.a")
	st := s.store(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		stats, err := st.Stats(t.Context(), "", "raw.a")
		if err == nil && stats.Counts[state.Applied] == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not land: %+v %v\n%s", stats, err, screen.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, err := st.AuditLog(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	fp := gossh.FingerprintSHA256(s.operator.PublicKey())
	found := false
	for _, a := range log {
		found = found || a.Actor == "ssh:"+fp+" alice"
	}
	runs, _ := st.Runs(t.Context(), "", 1)
	if len(runs) != 1 || runs[0].Actor != "ssh:"+fp+" alice" {
		t.Errorf("runs %+v: want the run by ssh:alice %s", runs, fp)
	}
	if !found {
		t.Errorf("no audit entry by ssh:alice %s in %+v", fp, log)
	}

	vscreen, vkeys := s.session(t, s.viewer)
	vscreen.waitFor(t, "Pipelines", "raw.a")
	if strings.Contains(vscreen.text(), "R run model") {
		t.Error("a viewer's UI offers actions")
	}
	io.WriteString(vkeys, "R")
	vscreen.waitFor(t, "read-only: run refused")
	if runs, _ := st.Runs(t.Context(), "", 10); len(runs) != 1 {
		t.Errorf("a viewer's key press started a run: %d runs", len(runs))
	}
	// The refused attempt is audited under the viewer's key.
	vfp := gossh.FingerprintSHA256(s.viewer.PublicKey())
	refused := false
	log, _ = st.AuditLog(t.Context(), 20)
	for _, a := range log {
		refused = refused || a.Action == "run" && a.Outcome == "refused: read-only" && strings.HasPrefix(a.Actor, "ssh:"+vfp)
	}
	if !refused {
		t.Errorf("no refused run by the viewer (%s) in the audit log: %+v", vfp, log)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	vscreen.waitFor(t, "goodbye")
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, s.stderr.text())
	}
}

// TestServeOpensOnTheIncidentsOverSSH: over SSH with the real client at
// 80×24, the demo's first screen is the incidents, raw.payments' failed
// hour on top with its error, before any key.
func TestServeOpensOnTheIncidentsOverSSH(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds the demo")
	}
	dir, _ := demoCopy(t)
	s := startServeIn(t, dir, filepath.Join(dir, ".bollhav", "state.db"))
	screen, _ := s.session(t, s.viewer)
	screen.waitFor(t, "Incidents", "raw.payments failed", "503 Service Unavailable", "holds 4 units of core.daily_revenue")
	text := screen.text()
	if strings.Contains(text, "Keys —") || strings.Index(text, "raw.payments failed") > strings.Index(text, "raw.clickstream stale") {
		t.Errorf("raw.payments' failure is not the first card:\n%s", text)
	}
}

func TestServeRefusesBadSetup(t *testing.T) {
	sp := writeSpec(t, serveSpec)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--spec", sp}, "--ssh"},
		{[]string{"serve", "--spec", sp, "--ssh", "127.0.0.1:0"}, "--operators"},
		{[]string{"serve", "--spec", sp, "--ssh", "nope", "--viewers", "x"}, "nope"},
		{[]string{"serve", "--spec", sp, "--ssh", "127.0.0.1:0", "--viewers", filepath.Join(t.TempDir(), "missing")}, "missing"},
	} {
		code, out, errOut := run(t, c.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestServeDisconnectCancelsTheSessionsRun: a run an operator starts over
// SSH does not outlive the session: when the client disconnects mid-run,
// the unit goes back to pending and the run is recorded cancelled, instead
// of both staying "running" until a lease expires.
func TestServeDisconnectCancelsTheSessionsRun(t *testing.T) {
	s := startServeSpec(t, slowSpec)
	c, screen, st := startSlowRun(t, s)
	running := func() int {
		stats, _ := st.Stats(t.Context(), "", "raw.slow")
		return stats.Counts[state.Running]
	}
	c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs, _ := st.Runs(t.Context(), "", 1)
		if running() == 0 && len(runs) == 1 && runs[0].Status == state.RunCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the disconnect: %d unit(s) running, runs %+v\n%s\n%s", running(), runs, s.stderr.text(), screen.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeSIGTERMCancelsRunsBeforeExiting: SIGTERM to `bollhav serve`
// while a session's run holds a unit: the process exits only after the run
// recorded its cancellation, so no unit is left running under a dead lease.
func TestServeSIGTERMCancelsRunsBeforeExiting(t *testing.T) {
	s := startServeSpec(t, slowSpec)
	_, _, st := startSlowRun(t, s)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, s.stderr.text())
	}
	stats, _ := st.Stats(t.Context(), "", "raw.slow")
	runs, _ := st.Runs(t.Context(), "", 1)
	if stats.Counts[state.Running] != 0 || stats.Counts[state.Pending] != 1 || len(runs) != 1 || runs[0].Status != state.RunCancelled {
		t.Errorf("after serve exited: units %v, runs %+v; want the unit pending and the run cancelled", stats.Counts, runs)
	}
	// A shutdown is normal: nothing of it is logged as an error (the SSH
	// library once logged every open session's "app exit with error …
	// context canceled").
	if out := s.stderr.text(); strings.Contains(out, "ERRO") || strings.Contains(out, "level=ERROR") {
		t.Errorf("SIGTERM logged an error:\n%s", out)
	}
}

// slowSpec is one daily unit whose command takes a minute: a run of it is
// still running when the test acts.
const slowSpec = `models:
  - {name: raw.slow, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z"},
     run: {command: ["sleep", "60"]}}
`

// pressRun runs the selected model from the session's screen: R opens
// its run dialog (the screen shows dialog), right moves onto the Run
// button and enter presses it.
func pressRun(t *testing.T, screen *sshScreen, keys io.Writer, dialog string) {
	t.Helper()
	io.WriteString(keys, "R")
	screen.waitFor(t, dialog, "Cancel")
	io.WriteString(keys, "\x1b[C") // right: onto the Run button
	screen.waitFor(t, "[ Run ]")
	io.WriteString(keys, "\r")
}

// startSlowRun has an operator's session run raw.slow from its dialog and
// waits until the unit is running; it returns the session's client and
// the store.
func startSlowRun(t *testing.T, s *served) (*gossh.Client, *sshScreen, state.Store) {
	t.Helper()
	c, screen, keys := s.sessionClient(t, s.operator)
	screen.waitFor(t, "Pipelines", "raw.slow")
	pressRun(t, screen, keys, "of raw.slow")
	st := s.store(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		stats, _ := st.Stats(t.Context(), "", "raw.slow")
		if stats.Counts[state.Running] == 1 {
			return c, screen, st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never started its unit:\n%s", screen.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
