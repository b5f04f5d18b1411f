package tui

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// TestQuitCancelsTheRunItStarted: a run started from the UI does not
// outlive it. The operator runs a unit whose command takes a minute, then
// quits with q q ("quit and cancel it"): Run returns only once the run has
// recorded the cancellation — the unit is pending again (not running under
// a lease nobody renews), the run is cancelled and its task not in
// progress — long before the command would have finished.
func TestQuitCancelsTheRunItStarted(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, `models:
  - {name: raw.slow, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["sleep", "60"]}}
`)
	e := engine.New(s, sp, engine.Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC) }})
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	day := state.MustWindow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.slow", Windows: []state.Window{day}, Now: e.Clock()}); err != nil {
		t.Fatal(err)
	}
	keys, in := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), e, Options{Theme: "none", View: "model", Model: "raw.slow", Input: keys, Output: io.Discard})
	}()
	unitStatus := func() state.UnitStatus {
		var st state.UnitStatus
		_ = s.ScanUnits(context.Background(), state.UnitQuery{Model: "raw.slow"}, func(u state.Unit) error { st = u.Status; return nil })
		return st
	}
	// r opens the run dialog on the cursor's unit; right moves to Run.
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed
	for unitStatus() != state.Running {
		if time.Now().After(deadline) {
			t.Fatal("the run never started its unit")
		}
		_, _ = io.WriteString(in, "r")
		time.Sleep(200 * time.Millisecond)
		_, _ = io.WriteString(in, "\x1b[C")
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(in, "\r")
		time.Sleep(300 * time.Millisecond)
	}
	quit := time.Now()
	_, _ = io.WriteString(in, "q")
	time.Sleep(200 * time.Millisecond)
	_, _ = io.WriteString(in, "q")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the UI did not end after q q")
	}
	_ = in.Close()
	if took := time.Since(quit); took > 20*time.Second {
		t.Errorf("quitting took %s: the run waited for its command instead of stopping it", took)
	}
	if st := unitStatus(); st != state.Pending {
		t.Errorf("the unit is %s after quitting, want pending", st)
	}
	runs, err := s.Runs(context.Background(), "", 10)
	if err != nil || len(runs) != 1 || runs[0].Status != state.RunCancelled {
		t.Fatalf("runs %+v, %v: want the one run cancelled", runs, err)
	}
	log, _ := s.TaskLog(context.Background(), runs[0].ID)
	for _, entry := range log {
		if entry.Status == "IN_PROGRESS" {
			t.Errorf("task %d still IN_PROGRESS after the UI quit", entry.TaskID)
		}
	}
}
