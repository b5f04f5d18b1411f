package tui

import (
	"time"

	"github.com/bollhav/bollhav/state"
)

// Navigation: a view never changes the stack or opens a dialog itself; it
// sends the app one of these messages (common.send), and the app, which
// owns the stack, acts on it.

// pushMsg opens a view on top of the stack and loads it.
type pushMsg struct{ view view }

// actionMsg opens the confirmation dialog of an action.
type actionMsg struct{ action action }

// flashMsg shows a message in the footer for a while.
type flashMsg struct {
	text string
	err  bool
}

// reloadMsg asks for a reload of the view with this id: it moved to time
// or units it has not loaded, or its timer asks.
type reloadMsg struct{ view int }

// openModel opens a model's view.
func (c *common) openModel(name string) { c.send(pushMsg{newModel(c, name)}) }

// openUnit opens the detail of model's unit at w.
func (c *common) openUnit(model string, w state.Window) {
	c.send(pushMsg{newUnitView(c, model, w)})
}

// openWhy opens the explanation of model's unit at at.
func (c *common) openWhy(model string, at time.Time) { c.send(pushMsg{newWhy(c, model, at)}) }

// openAction opens an action's dialog.
func (c *common) openAction(act action) { c.send(actionMsg{act}) }

// flash shows s in the footer.
func (c *common) flash(s string, isErr bool) { c.send(flashMsg{text: s, err: isErr}) }
