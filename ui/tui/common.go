package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// common is all a view may reach of the program: the context its I/O lives
// on, the engine, the keymap, the theme, the terminal's size, the renderers
// it draws with, the runs started here, and a way to send the app a
// message. Views hold a pointer to the app's one common, so a theme, size
// or environment change reaches every view at once, and no view can touch
// the stack, the dialog or another view.
type common struct {
	ctx   context.Context
	eng   *engine.Engine
	keys  keyMap
	theme themes.Theme
	// width and height are the terminal's size.
	width, height int
	// times is how times read (t, T; times.go); loc is the viewer's
	// time zone, which T shows instants in.
	times timeMode
	loc   *time.Location
	// render draws the pipelines' graphs and the model view's timeline;
	// a renderer left nil falls back to a simple form (hooks.go).
	render renderers
	// feedPoll is the change feed's longest wait, which the audit view's
	// reload timer is a multiple of.
	feedPoll time.Duration
	// gate is the live gate index: the verdicts the Blocked view shows
	// (shared with every UI of a shared Feed).
	gate *liveGate
	// runs are the runs this UI started, newest last: the runs and run
	// views show their live progress.
	runs []*liveRun

	nextID int
	// loads are the contexts of the views' newest loads (load_cancel.go).
	loads map[int]viewLoad
	// topID is the id of the view on top of the stack.
	topID func() int
	// outbox holds what views sent the app, handled before the next
	// message from outside (send).
	outbox []tea.Msg
}

// newID is a fresh id for a view or a dialog, which routes its messages.
func (c *common) newID() int {
	c.nextID++
	return c.nextID
}

// send hands the app a message from a view: open a view, an action's
// dialog, a footer message, a reload. The app handles it as soon as the
// view returns, before the next key, so a key typed after enter reaches the
// view enter opened — as a tea.Cmd's message, which arrives some time
// later, would not.
func (c *common) send(msg tea.Msg) { c.outbox = append(c.outbox, msg) }

// onTop reports whether the view with this id is the one shown.
func (c *common) onTop(id int) bool { return c.topID != nil && c.topID() == id }

// now is the engine's clock, for ages.
func (c *common) now() time.Time { return c.eng.Clock() }

// envChanges keeps the changes of the app's environment.
func (c *common) envChanges(changes []state.Change) []state.Change {
	var out []state.Change
	for _, ch := range changes {
		if ch.Env == c.eng.Env().Suffix {
			out = append(out, ch)
		}
	}
	return out
}
