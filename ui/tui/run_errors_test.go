package tui

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
)

type errReader struct{}

func (errReader) Read([]byte) (int, error) {
	time.Sleep(300 * time.Millisecond)
	return 0, errors.New("input device gone")
}

// TestRunReportsAProgramKilledByItsInput: a program killed by a failing
// input (not by the caller's context) is an error Run returns, not a
// normal stop.
func TestRunReportsAProgramKilledByItsInput(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, "models:\n  - name: raw.a\n    chunking: {interval: 1d, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n")
	e := engine.New(s, sp, engine.Options{SpecDir: t.TempDir(), Actor: "test"})
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), e, Options{Theme: "none", Input: errReader{}, Output: io.Discard})
	}()
	select {
	case err := <-done:
		t.Logf("Run returned %v (caller's context was never cancelled)", err)
	case <-time.After(10 * time.Second):
		t.Log("Run did not return")
	}
}
