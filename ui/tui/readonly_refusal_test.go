package tui

import (
	"context"
	"testing"
	"time"
)

// TestViewerActionIsRefusedOnScreenAndAudited: in a read-only UI (an SSH
// viewer, --read-only) the action keys are not bound, yet pressing one is
// not silent: the viewer reads that it is read-only, and the engine's audit
// log records the refused attempt with the actor.
func TestViewerActionIsRefusedOnScreenAndAudited(t *testing.T) {
	w := newWorld(t)
	before, err := w.s.AuditLog(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	r := startUI(t, w.e, 80, 24, Options{View: "model", Model: "raw.orders", ReadOnly: true})
	r.waitSettled(t, viewModel)
	r.keys("R")
	r.waitText(t, "read-only: run refused")
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed
	for {
		log, err := w.s.AuditLog(context.Background(), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) == len(before)+1 {
			got := log[0]
			if got.Action != "run" || got.Outcome != "refused: read-only" || got.Actor != "test" {
				t.Errorf("audit entry %+v, want the refused run by test", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit entry for the refused key press (%d entries before, %d after)", len(before), len(log))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Pressed again within the minute: told, not audited again.
	r.keys("R", "R")
	r.waitText(t, "read-only: run refused")
	time.Sleep(300 * time.Millisecond)
	if log, _ := w.s.AuditLog(context.Background(), 100); len(log) != len(before)+1 {
		t.Errorf("repeated presses added %d audit entries, want none", len(log)-len(before)-1)
	}
}
