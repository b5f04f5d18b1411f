package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// The dialog's load: what the engine says an action would do, shown before
// it can be confirmed.

// planMsg is the plan (or mark preview) an action dialog shows first.
type planMsg struct {
	dialog  int
	gen     uint64
	plan    *engine.Plan
	preview *markPreview
	err     error
}

// markPreview is what a mark would move: the units of the model in the
// window whose status the mark changes, by status.
type markPreview struct {
	counts map[state.UnitStatus]int
	total  int
}

// markFrom are the statuses a mark to status moves, as engine.Mark has them.
func markFrom(status state.UnitStatus) []state.UnitStatus {
	if status == state.Applied {
		return []state.UnitStatus{state.Pending, state.Blocked, state.Failed}
	}
	return []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
}

// loadPlan asks the engine what an action would do, changing nothing: the
// plan of a run, or the units a mark would move.
func loadPlan(ctx context.Context, e *engine.Engine, dialog int, gen uint64, a action) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		msg := planMsg{dialog: dialog, gen: gen}
		if a.kind == actionMark {
			p := &markPreview{counts: map[state.UnitStatus]int{}}
			var w state.Window
			if a.window != nil {
				w = *a.window
			}
			msg.err = e.ScanUnits(ctx, a.model, w, markFrom(a.status), func(u state.Unit) error {
				if a.window == nil || a.window.Contains(u.Window.Since) && !u.Window.Until.After(a.window.Until) {
					p.counts[u.Status]++
					p.total++
				}
				return nil
			})
			msg.preview = p
			return msg
		}
		msg.plan, msg.err = e.Plan(ctx, a.request())
		return msg
	}
}
