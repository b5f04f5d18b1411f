package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
)

// tick is tea.Tick that gives up when ctx (the program's) ends: a timer
// the UI set — a footer message's six seconds, a retry's backoff, the audit
// view's reload — must not outlive the program, which tea.Tick's goroutine
// does until its timer fires. Like tea.Tick, the timer starts now.
func tick(ctx context.Context, d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	t := time.NewTimer(d)
	return func() tea.Msg {
		defer t.Stop()
		select {
		case at := <-t.C:
			return fn(at)
		case <-ctx.Done():
			return nil
		}
	}
}
