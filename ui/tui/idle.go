package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/state"
)

// The idle timeout (Options.IdleTimeout, an SSH server's --idle-timeout)
// closes a session nobody types in, so a forgotten terminal does not hold
// an operator's session open for ever. It is the UI's, not the
// connection's, for two reasons: it warns first — a banner a minute ahead
// (half the timeout when that is shorter) says when the session closes and
// that a key keeps it — and it knows what the session is doing. A session
// that is only watching — the change feed live, no dialog, palette or
// filter open — is a wallboard, not a forgotten terminal, and is kept
// unless Options.IdleClosesWatchers says otherwise.

// idleCheckMsg is the idle timer's tick.
type idleCheckMsg struct{}

// idleWarnAhead is how long before the close the banner warns.
func (a *App) idleWarnAhead() time.Duration { return min(time.Minute, a.opts.IdleTimeout/2) }

// idleEvery is how often the timer looks.
func (a *App) idleEvery() time.Duration {
	return min(max(a.opts.IdleTimeout/60, 50*time.Millisecond), 5*time.Second)
}

// startIdle starts the idle timer, when there is a timeout.
func (a *App) startIdle() tea.Cmd {
	if a.opts.IdleTimeout <= 0 {
		return nil
	}
	a.lastKey = time.Now()
	return tick(a.ctx, a.idleEvery(), func(time.Time) tea.Msg { return idleCheckMsg{} })
}

// watching is a session that is only watching a live view.
func (a *App) watching() bool {
	return a.live && a.dialog == nil && a.palette == nil && a.filterIn == nil
}

// idleCheck warns, or closes the session, as the time since the last key
// press says; the next check follows.
func (a *App) idleCheck() tea.Cmd {
	idle := time.Since(a.lastKey)
	kept := a.watching() && !a.opts.IdleClosesWatchers
	switch {
	case kept:
		a.idleWarning = ""
	case idle >= a.opts.IdleTimeout:
		a.endReason = fmt.Sprintf("the session closed after %s without a key press (--idle-timeout)", state.RoughDuration(a.opts.IdleTimeout))
		return tea.Quit
	case idle >= a.opts.IdleTimeout-a.idleWarnAhead():
		left := (a.opts.IdleTimeout - idle).Round(time.Second)
		a.idleWarning = fmt.Sprintf("no key pressed for %s: this session closes in %s; press any key to stay",
			state.RoughDuration(idle), state.RoughDuration(max(left, time.Second)))
	default:
		a.idleWarning = ""
	}
	return tick(a.ctx, a.idleEvery(), func(time.Time) tea.Msg { return idleCheckMsg{} })
}

// EndReason is why the UI ended by itself (the idle timeout), for the
// session to print once the screen is restored; empty when the user quit.
func (a *App) EndReason() string { return a.endReason }
