package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/state"
)

// yank copies text to the terminal's clipboard with OSC 52, which the
// terminal itself handles, so it works over SSH as it does locally, and
// says what was copied in the footer. A terminal without OSC 52 ignores
// it; the footer names what was meant, so nothing is silently lost.
func (c *common) yank(what, text string) tea.Cmd {
	if text == "" {
		c.flash("nothing to copy: "+what+" is empty", false)
		return nil
	}
	c.flash("copied "+what+" (OSC 52): "+oneLine(text), false)
	return tea.SetClipboard(text)
}

// unitID is how a unit is named to paste into a command or a ticket: the
// model and its window as the command line prints windows,
// "raw.orders [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)"; a timeless
// model's one unit is the model alone.
func unitID(model string, w state.Window) string {
	if w.IsZero() {
		return model
	}
	return model + " " + w.String()
}
