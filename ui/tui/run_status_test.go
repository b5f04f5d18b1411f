package tui

import (
	"testing"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// TestRunStatusAbandonedIsNotRunning: an abandoned run (its process
// stopped without closing it) reads ✗ like a failed one, and only a run
// that is running reads ↻.
func TestRunStatusAbandonedIsNotRunning(t *testing.T) {
	if got := runStatus(state.RunAbandoned); got != themes.Failed {
		t.Errorf("abandoned run drawn as %s, want %s", got, themes.Failed)
	}
	for _, s := range state.RunStatuses {
		if got := runStatus(s); (got == themes.Running) != (s == state.RunRunning) {
			t.Errorf("run status %s drawn as %s", s, got)
		}
	}
}
