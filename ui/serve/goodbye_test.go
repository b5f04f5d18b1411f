package serve

import (
	"context"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// TestShutdownSaysGoodbyeAfterTheUI: every open session reads the goodbye,
// written once its UI has given the terminal back, so the UI's screen
// restore cannot wipe it.
func TestShutdownSaysGoodbyeAfterTheUI(t *testing.T) {
	f := start(t)
	c, err := dial(t, f.addr, gossh.PublicKeys(f.operator.signer))
	must(t, err)
	defer c.Close()
	s := open(t, c)
	s.waitFor(t, "readonly=false")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, f.srv.Shutdown(ctx))
	s.waitFor(t, "goodbye")
}
