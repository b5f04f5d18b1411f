package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"go.uber.org/goleak"
)

// onATerminal makes confirmTorch ask, as it does on a terminal, for the
// rest of the test.
func onATerminal(t *testing.T) {
	old := runStdinIsTerminal
	runStdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { runStdinIsTerminal = old })
}

// quietTerminal is a pipe nobody writes to: a terminal nobody types into.
func quietTerminal(t *testing.T) (r, w *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

// TestTorchConfirmationEndsWithItsContext: an interrupt while a torch waits
// for its "yes" ends the read of stdin as well as the wait, so no goroutine
// is left blocked on a terminal nobody types into once the command returned.
func TestTorchConfirmationEndsWithItsContext(t *testing.T) {
	onATerminal(t)
	r, w := quietTerminal(t)
	// The pipe stays open until after the check: closing it would end a
	// leaked read too, and hide it.
	defer r.Close()
	defer w.Close()
	ignore := goleak.IgnoreCurrent()

	var errb bytes.Buffer
	c := &cmdContext{Streams: Streams{In: r, Out: io.Discard, Err: &errb}}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	code, ok := c.confirmTorch(ctx, &engine.Plan{Mode: spec.Torch}, false)
	if ok || code != ExitFailure {
		t.Fatalf("confirmTorch after an interrupt = %d, %v; want %d, false", code, ok, ExitFailure)
	}
	if !strings.Contains(errb.String(), "Type yes") || !strings.HasSuffix(errb.String(), "\nbollhav run: interrupted: nothing was changed\n") {
		t.Errorf("stderr %q: want the question, then the interruption", errb.String())
	}
	goleak.VerifyNone(t, ignore)
}

// TestTorchConfirmationReadsATerminal: on a terminal (a file, read so that
// an interrupt can end the read), "yes" lets the torch go ahead and
// anything else declines it.
func TestTorchConfirmationReadsATerminal(t *testing.T) {
	onATerminal(t)
	for _, c := range []struct {
		typed string
		ok    bool
	}{{"yes\n", true}, {" yes \n", true}, {"y\n", false}, {"", false}} {
		r, w := quietTerminal(t)
		io.WriteString(w, c.typed)
		w.Close()
		var errb bytes.Buffer
		cc := &cmdContext{Streams: Streams{In: r, Out: io.Discard, Err: &errb}}
		code, ok := cc.confirmTorch(t.Context(), &engine.Plan{Mode: spec.Torch}, false)
		r.Close()
		if ok != c.ok || (ok && code != ExitOK) || (!ok && code != ExitFailure) {
			t.Errorf("typed %q: confirmTorch = %d, %v; want ok %v\n%s", c.typed, code, ok, c.ok, errb.String())
		}
		if !c.ok && !strings.HasSuffix(errb.String(), "bollhav run: torch not confirmed: nothing was changed\n") {
			t.Errorf("typed %q: stderr %q", c.typed, errb.String())
		}
	}
}
