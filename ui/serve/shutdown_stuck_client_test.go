package serve

import (
	"context"
	"fmt"
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
)

type flood struct{ n int }

type tickMsg struct{}

func (f *flood) Init() tea.Cmd {
	return tea.Tick(time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}
func (f *flood) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tickMsg); ok {
		f.n++
		return f, f.Init()
	}
	return f, nil
}
func (f *flood) View() tea.View {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "%d %s\n", f.n, strings.Repeat(fmt.Sprint(f.n%10), 390))
	}
	return tea.NewView(b.String())
}

// TestShutdownEndsDespiteAClientThatStoppedReading: a client that stops
// reading blocks writes to its session; Shutdown still returns when its
// context ends, instead of hanging in the goodbye under the server lock.
func TestShutdownEndsDespiteAClientThatStoppedReading(t *testing.T) {
	f := start(t) // for keys and engine
	dir := t.TempDir()
	srv, err := New(Config{Addr: "127.0.0.1:0", StateDir: filepath.Join(dir, "state"), Keys: Keys{Operators: f.operators, Viewers: f.viewers},
		Engine: f.e, NewModel: func(_ context.Context, e *engine.Engine, _ ssh.Session) (tea.Model, error) { return &flood{}, nil },
		Log: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	must(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go func() { _ = srv.Serve(l) }()
	c, err := dial(t, l.Addr().String(), gossh.PublicKeys(f.viewer.signer))
	must(t, err)
	defer c.Close()
	s, err := c.NewSession()
	must(t, err)
	_, err = s.StdoutPipe() // never read: no window adjust
	must(t, err)
	must(t, s.RequestPty("xterm-256color", 200, 400, gossh.TerminalModes{}))
	must(t, s.Shell())
	time.Sleep(4 * time.Second) // let the window fill
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	t0 := time.Now()
	go func() { done <- srv.Shutdown(ctx) }()
	returned := false
	select {
	case err := <-done:
		returned = true
		t.Logf("Shutdown returned after %v: %v", time.Since(t0), err)
	case <-time.After(15 * time.Second):
		t.Errorf("Shutdown(ctx 3s) still blocked after 15s")
	}
	// The stuck session ends once its connection is gone: wait for it, so
	// that nothing it started outlives the test.
	c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for srv.Sessions() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d session(s) still live 20 s after the client and the server closed", srv.Sessions())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !returned {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Shutdown never returned")
		}
	}
}
