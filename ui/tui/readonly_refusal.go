package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/bollhav/bollhav/engine"
)

// readOnlyActionKeys are the keys of the actions a read-only UI does not
// bind (run window, run model, mark applied, mark pending, rebuild
// outdated), by the engine action each would ask for. A viewer who presses one is told it is
// read-only, and the engine audits the attempt: "a viewer tried to run
// this" is something an operator wants to know.
var readOnlyActionKeys = map[string]string{"r": "run", "R": "run", "a": "mark", "p": "mark", "O": "run"}

// refuseCmd has the engine refuse (and audit) action, asked for on the
// screen named where, and tells the viewer.
func refuseCmd(ctx context.Context, e *engine.Engine, action, where string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		err := e.RefuseReadOnly(ctx, action, map[string]string{"screen": where, "from": "ui"})
		if err == nil {
			return nil
		}
		return flashMsg{text: "read-only: " + action + " refused (the attempt is in the audit log)", err: true}
	}
}
