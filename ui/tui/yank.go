package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine/gate"
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

// whyCommand is how a unit is named to paste: the command line that
// explains it, "bollhav why raw.orders --at 2026-01-01T05:00:00Z" (with
// --env in a dev environment), which pastes into a shell as it is into a
// ticket (gate.UnitRef.WhyCommand, the "explain:" line of `incidents`).
func (c *common) whyCommand(model string, w state.Window) string {
	return gate.UnitRef{Model: model, Window: w}.WhyCommand(c.eng.Env().Suffix)
}
