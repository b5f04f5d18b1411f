package tui

import (
	"context"
	"fmt"
	"time"
)

// RunDrainTimeout bounds how long the owner of a UI waits, after cancelling
// it, for the runs it started to record their end.
const RunDrainTimeout = 30 * time.Second

// WaitRuns waits until every run this UI started has ended, or ctx ends.
// The UI's context (the one NewModel was given) must be cancelled first:
// that is what stops the runs — the engine stops their units, returns them
// to pending and records each run cancelled — so a UI that quits, a
// process that gets SIGTERM and an SSH session that disconnects leave no
// unit running under a lease nobody renews and no run "running" forever.
func (a *App) WaitRuns(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		a.owned.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runs started from the UI did not end in time: %w", ctx.Err())
	}
}
