package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"
)

// historyMax bounds the back stack of - (App.history).
const historyMax = 20

// remember keeps the stack shown before a jump, for -.
func (a *App) remember() {
	a.history = append(a.history, slices.Clone(a.stack))
	if len(a.history) > historyMax {
		a.history = slices.Delete(a.history, 0, len(a.history)-historyMax)
	}
}

// jump shows the stack next instead of the one shown, which - returns to.
// A palette jump opens its view over the pipelines, not over whatever was
// on top, so jumping from model to model does not grow the breadcrumb.
func (a *App) jump(next []view) tea.Cmd {
	a.remember()
	a.stack = next
	return a.reload(a.top(), nil)
}

// overview is the stack's bottom, the pipelines view, followed by vs:
// where a jump lands.
func (a *App) overview(vs ...view) []view {
	return append([]view{a.stack[0]}, vs...)
}

// previous goes back to the stack the last jump left.
func (a *App) previous() tea.Cmd {
	if len(a.history) == 0 {
		return a.setFlash("no previous screen: - goes back after 1–4, i or a : jump", false)
	}
	a.stack = a.history[len(a.history)-1]
	a.history = a.history[:len(a.history)-1]
	for _, v := range a.stack {
		// An answer to a load started before the jump was dropped while
		// the view was off the stack, or is still to come, cancelled: its
		// load is owed again, and a late answer is for an older request.
		v.base().loading = false
		v.base().gen++
	}
	return a.reload(a.top(), nil)
}
