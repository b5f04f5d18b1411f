package serve

import (
	"context"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// TestSessionOpenedDuringShutdownIsRefused: a multiplexing client opens a
// session on a connection that outlived the listeners while Shutdown waits
// for the sessions; it gets the goodbye, not a UI (run with -race: the
// session counter must not be added to while it is waited on).
func TestSessionOpenedDuringShutdownIsRefused(t *testing.T) {
	f := start(t)
	c, s1 := f.login(t, f.operator.signer)
	s1.waitFor(t, "readonly=false")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- f.srv.Shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond)
	s2, err := c.NewSession() // a multiplexed second session (ControlMaster) after Shutdown began
	if err != nil {
		t.Logf("second session refused: %v", err)
	} else {
		out := &session{s: s2}
		s2.Stdout, s2.Stderr = out, out
		_ = s2.RequestPty("xterm", 24, 80, gossh.TerminalModes{})
		err = s2.Shell()
		t.Logf("second session opened during Shutdown: shell err=%v", err)
		time.Sleep(300 * time.Millisecond)
		t.Logf("second session output: %q", out.String())
	}
	t.Logf("Shutdown: %v", <-done)
}
