package serve

import (
	"context"
	"testing"
	"time"
)

// TestShutdownSaysGoodbyeAfterTheUI: every open session reads the goodbye,
// written once its UI has given the terminal back, so the UI's screen
// restore cannot wipe it.
func TestShutdownSaysGoodbyeAfterTheUI(t *testing.T) {
	f := start(t)
	_, s := f.login(t, f.operator.signer)
	s.waitFor(t, "readonly=false")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, f.srv.Shutdown(ctx))
	s.waitFor(t, "goodbye")
}
