package serve

import (
	"context"
	"log/slog"
	"time"

	tea "charm.land/bubbletea/v2"
)

// runDrainTimeout bounds how long a session that ends waits for the runs
// its UI started to record their end.
const runDrainTimeout = 30 * time.Second

// runWaiter is a UI that starts runs and can wait for them to end once its
// context is cancelled (tui.App).
type runWaiter interface {
	WaitRuns(ctx context.Context) error
}

// sessionUI is one session's UI: what ends it and what to wait for.
type sessionUI struct {
	model  tea.Model
	cancel context.CancelFunc
}

// ender is a UI that can end by itself (tui.App's idle timeout) and says
// why, for the session to print once the screen is restored.
type ender interface{ EndReason() string }

// reason is why the UI ended by itself; empty when the user quit.
func (u *sessionUI) reason() string {
	if u == nil {
		return ""
	}
	if e, ok := u.model.(ender); ok {
		return e.EndReason()
	}
	return ""
}

// end stops the session's UI and the runs it started — a run started over
// SSH does not outlive the session that started it (a disconnect, a quit or
// the server's Shutdown): its units go back to pending and it is recorded
// cancelled — and waits for them, at most runDrainTimeout.
func (u *sessionUI) end(log *slog.Logger) {
	if u == nil || u.cancel == nil {
		return
	}
	u.cancel()
	if w, ok := u.model.(runWaiter); ok {
		ctx, cancel := context.WithTimeout(context.Background(), runDrainTimeout)
		defer cancel()
		if err := w.WaitRuns(ctx); err != nil {
			log.Warn("a session's runs did not end in time", "err", err)
		}
	}
}
