package serve

import (
	"runtime"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

func countProgramWaiters() int {
	buf := make([]byte, 8<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "serve.(*Server).program.func1")
}

// TestSessionsOnOneConnectionLeakNothing: sessions opened and closed in
// turn on one connection leave no goroutine behind (the watcher of a
// session used to wait for the connection, not the session).
func TestSessionsOnOneConnectionLeakNothing(t *testing.T) {
	f := start(t)
	c, err := dial(t, f.addr, gossh.PublicKeys(f.viewer.signer))
	must(t, err)
	defer c.Close()
	for i := 0; i < 20; i++ {
		s := open(t, c)
		s.waitFor(t, "readonly=true")
		_, _ = s.in.Write([]byte("q"))
		_ = s.s.Wait()
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && f.srv.Sessions() > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("live sessions %d, program.func1 goroutines still waiting: %d", f.srv.Sessions(), countProgramWaiters())
}

// Sessions is how many sessions are open.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}
