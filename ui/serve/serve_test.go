package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// probe is a stand-in UI: it prints the engine it got and, on "w", tries
// a write (a mark) through it and prints what the engine said; "p" panics.
type probe struct {
	e      *engine.Engine
	result string
}

func (p *probe) Init() tea.Cmd { return nil }

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "w":
			_, err := p.e.Mark(context.Background(), "raw.a", engineWindow(), "pending")
			p.result = "mark: ok"
			if err != nil {
				p.result = "mark: " + err.Error()
			}
		case "p":
			panic("boom")
		case "q":
			return p, tea.Quit
		}
	}
	return p, nil
}

func (p *probe) View() tea.View {
	return tea.NewView("actor=" + p.e.Actor() + "\nreadonly=" + boolText(p.e.ReadOnly()) + "\n" + p.result + "\n")
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

type keyPair struct {
	signer gossh.Signer
	line   string
}

func newKey(t *testing.T) keyPair {
	t.Helper()
	s, line := enginetest.SSHKey(t)
	return keyPair{signer: s, line: line}
}

type fixture struct {
	srv                *Server
	addr               string
	operator, viewer   keyPair
	operators, viewers string
	e                  *engine.Engine
	log                *enginetest.SyncBuffer
}

func start(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{operator: newKey(t), viewer: newKey(t), log: &enginetest.SyncBuffer{}}
	f.operators, f.viewers = filepath.Join(dir, "operators"), filepath.Join(dir, "viewers")
	must(t, os.WriteFile(f.operators, []byte("# on-call\n"+f.operator.line), 0o600))
	must(t, os.WriteFile(f.viewers, []byte(f.viewer.line), 0o600))
	s := enginetest.Open(t, enginetest.SQLite)
	sp, err := spec.Parse("bollhav.yaml", []byte("models:\n  - name: raw.a\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n"))
	must(t, err)
	f.e = engine.New(s, sp, engine.Options{SpecDir: dir, Actor: "server"})
	if _, err := f.e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Addr: "127.0.0.1:0", StateDir: filepath.Join(dir, "state"), Keys: Keys{Operators: f.operators, Viewers: f.viewers},
		Engine: f.e, NewModel: func(_ context.Context, e *engine.Engine, _ ssh.Session) (tea.Model, error) { return &probe{e: e}, nil },
		Log: slog.New(slog.NewTextHandler(f.log, nil))})
	must(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	f.srv, f.addr = srv, l.Addr().String()
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// session is an interactive SSH session with a PTY whose output is
// collected.
type session struct {
	s  *gossh.Session
	in io.WriteCloser
	enginetest.SyncBuffer
}

func (s *session) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got := s.String()
		if strings.Contains(got, want) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q on the screen:\n%q", want, s.String())
	return ""
}

func dial(t *testing.T, addr string, auth ...gossh.AuthMethod) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "alice", Auth: auth,
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
}

// login connects to f's server as alice with signer's key and opens a
// session on the connection; the connection closes when the test ends.
func (f *fixture) login(t *testing.T, signer gossh.Signer) (*gossh.Client, *session) {
	t.Helper()
	c, err := dial(t, f.addr, gossh.PublicKeys(signer))
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c, open(t, c)
}

func open(t *testing.T, c *gossh.Client) *session {
	t.Helper()
	s, err := c.NewSession()
	must(t, err)
	out := &session{s: s}
	s.Stdout, s.Stderr = out, out
	in, err := s.StdinPipe()
	must(t, err)
	out.in = in
	must(t, s.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}))
	must(t, s.Shell())
	t.Cleanup(func() { _ = s.Close() })
	return out
}

func TestOperatorGetsAWritableEngineNamedByItsKey(t *testing.T) {
	f := start(t)
	_, s := f.login(t, f.operator.signer)
	s.waitFor(t, "actor=ssh:"+gossh.FingerprintSHA256(f.operator.signer.PublicKey())+" alice")
	s.waitFor(t, "readonly=false")
	_, _ = s.in.Write([]byte("w"))
	s.waitFor(t, "mark: ok")
	log, err := f.e.AuditLog(t.Context(), 1)
	must(t, err)
	if len(log) != 1 || log[0].Action != "mark" || log[0].Actor != "ssh:"+gossh.FingerprintSHA256(f.operator.signer.PublicKey())+" alice" {
		t.Errorf("audit %+v, want the mark by the key's fingerprint, then alice", log)
	}
}

func TestViewerActionIsRefusedByTheEngineAndAudited(t *testing.T) {
	f := start(t)
	_, s := f.login(t, f.viewer.signer)
	s.waitFor(t, "readonly=true")
	_, _ = s.in.Write([]byte("w"))
	s.waitFor(t, "mark: mark refused: bollhav is read-only")
	log, err := f.e.AuditLog(t.Context(), 1)
	must(t, err)
	if len(log) != 1 || log[0].Outcome != "refused: read-only" || !strings.Contains(log[0].Actor, gossh.FingerprintSHA256(f.viewer.signer.PublicKey())) {
		t.Errorf("audit %+v, want the viewer's refused mark", log)
	}
}

func TestUnknownKeyAndPasswordsAreRefused(t *testing.T) {
	f := start(t)
	if c, err := dial(t, f.addr, gossh.PublicKeys(newKey(t).signer)); err == nil {
		c.Close()
		t.Error("an unknown key was let in")
	}
	if c, err := dial(t, f.addr, gossh.Password("hunter2")); err == nil {
		c.Close()
		t.Error("a password was accepted")
	}
}

// TestSecondKeyDecidesTheRole: a client offering a key the server does
// not know and then a viewer key is a viewer, named by the viewer key.
func TestSecondKeyDecidesTheRole(t *testing.T) {
	f := start(t)
	c, err := dial(t, f.addr, gossh.PublicKeys(newKey(t).signer, f.viewer.signer))
	must(t, err)
	defer c.Close()
	s := open(t, c)
	out := s.waitFor(t, "readonly=true")
	if !strings.Contains(out, gossh.FingerprintSHA256(f.viewer.signer.PublicKey())) {
		t.Fatalf("the session is not named by the viewer key:\n%q", out)
	}
}

func TestRemovedKeyIsRefusedOnItsNextConnection(t *testing.T) {
	f := start(t)
	c, err := dial(t, f.addr, gossh.PublicKeys(f.viewer.signer))
	must(t, err)
	c.Close()
	must(t, os.WriteFile(f.viewers, []byte("# nobody\n"), 0o600))
	if c, err := dial(t, f.addr, gossh.PublicKeys(f.viewer.signer)); err == nil {
		c.Close()
		t.Error("a key removed from the viewers file was let in")
	}
}

func TestOneSessionsPanicLeavesTheOthers(t *testing.T) {
	f := start(t)
	_, s1 := f.login(t, f.operator.signer)
	s1.waitFor(t, "readonly=false")
	_, s2 := f.login(t, f.viewer.signer)
	s2.waitFor(t, "readonly=true")
	_, _ = s2.in.Write([]byte("p"))
	time.Sleep(300 * time.Millisecond)
	_, _ = s1.in.Write([]byte("w"))
	s1.waitFor(t, "mark: ok")
	// The server still takes new sessions.
	c3, err := dial(t, f.addr, gossh.PublicKeys(f.viewer.signer))
	must(t, err)
	c3.Close()
}

func TestHostKeyIsCreatedOnceWithMode0600(t *testing.T) {
	dir := t.TempDir()
	s1, path, err := LoadOrCreateHostKey(dir)
	must(t, err)
	info, err := os.Stat(path)
	must(t, err)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("host key mode %v, want 0600", info.Mode().Perm())
	}
	s2, _, err := LoadOrCreateHostKey(dir)
	must(t, err)
	if !bytes.Equal(s1.PublicKey().Marshal(), s2.PublicKey().Marshal()) || s1.PublicKey().Type() != gossh.KeyAlgoED25519 {
		t.Error("the host key changed on restart, or is not ed25519")
	}
	must(t, os.Chmod(path, 0o644))
	if _, _, err := LoadOrCreateHostKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable host key: err = %v", err)
	}
}

func TestMalformedKeysFileIsAStartupError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ops")
	must(t, os.WriteFile(p, []byte("ssh-ed25519 not-base64!!\n"), 0o600))
	if _, _, err := (Keys{Operators: p}).Check(); err == nil || !strings.Contains(err.Error(), p+":1") {
		t.Errorf("Check = %v, want the file and line named", err)
	}
	if _, _, err := (Keys{}).Check(); err == nil {
		t.Error("no key files at all was accepted")
	}
}

func engineWindow() state.Window {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return state.MustWindow(t0, t0.Add(time.Hour))
}

// TestNoKeyWrittenToTheWorkingDirectory: the host key lives in the state
// directory only; wish's default (a new id_ed25519 in the working
// directory) must never kick in.
func TestNoKeyWrittenToTheWorkingDirectory(t *testing.T) {
	start(t)
	if _, err := os.Stat("id_ed25519"); !os.IsNotExist(err) {
		_ = os.Remove("id_ed25519")
		_ = os.Remove("id_ed25519.pub")
		t.Error("the server wrote id_ed25519 into the working directory")
	}
}

// querySigner offers a public key it cannot sign for: the client asks the
// server whether the key would do (the unsigned "query" of RFC 4252 7) and
// then fails to produce the signature.
type querySigner struct {
	gossh.AlgorithmSigner
	asked bool
}

func (q *querySigner) Sign(io.Reader, []byte) (*gossh.Signature, error) {
	q.asked = true
	return nil, errors.New("no private key")
}

func (q *querySigner) SignWithAlgorithm(io.Reader, []byte, string) (*gossh.Signature, error) {
	q.asked = true
	return nil, errors.New("no private key")
}

// TestQueriedOperatorKeyGivesNoOperatorRights is the CVE-2024-45337
// pattern: the server's key callback accepts the operator key on a query
// the client never signs, then the client authenticates with a viewer key.
// The session must be the viewer's: the role comes from the key that
// verified, not from the last key the callback saw.
func TestQueriedOperatorKeyGivesNoOperatorRights(t *testing.T) {
	f := start(t)
	operator := &querySigner{AlgorithmSigner: f.operator.signer.(gossh.AlgorithmSigner)}
	viewerAuth := gossh.PublicKeys(f.viewer.signer)
	c, err := gossh.Dial("tcp", f.addr, &gossh.ClientConfig{User: "mallory",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(operator)},
		// After the operator key fails to sign, go on with the viewer key.
		AuthCallback: func(*gossh.ClientAuthContext) (gossh.AuthMethod, error) {
			if operator.asked && viewerAuth != nil {
				next := viewerAuth
				viewerAuth = nil
				return next, nil
			}
			return nil, nil
		},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	must(t, err)
	defer c.Close()
	if !operator.asked {
		t.Fatal("the server never accepted the operator key's query: the test did not reproduce the pattern")
	}
	s := open(t, c)
	out := s.waitFor(t, "readonly=true")
	if !strings.Contains(out, gossh.FingerprintSHA256(f.viewer.signer.PublicKey())) ||
		strings.Contains(out, gossh.FingerprintSHA256(f.operator.signer.PublicKey())) {
		t.Fatalf("the session is not named by the viewer key alone:\n%q", out)
	}
	_, _ = s.in.Write([]byte("w"))
	s.waitFor(t, "mark: mark refused: bollhav is read-only")
	log, err := f.e.AuditLog(t.Context(), 10)
	must(t, err)
	var marks []state.AuditEntry
	for _, a := range log {
		if a.Action == "mark" {
			marks = append(marks, a)
		}
	}
	if len(marks) != 1 || marks[0].Outcome != "refused: read-only" ||
		!strings.Contains(marks[0].Actor, gossh.FingerprintSHA256(f.viewer.signer.PublicKey())) {
		t.Errorf("marks in the audit log %+v, want only the viewer's refused one", marks)
	}
}
