package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/state"
)

// problemJumper is a list with failed or blocked rows that n and N jump
// between (keyMap.NextProblem): what an on-call engineer looks for first,
// without walking the list row by row.
type problemJumper interface {
	// jumpProblem moves the cursor to the next failed or blocked row in
	// direction dir (1 or -1), round the end, and reports whether there
	// was one.
	jumpProblem(dir int) bool
}

// jumpProblem is n or N on a list: the cursor goes to the next failed or
// blocked row, or the footer says there is none.
func (a *App) jumpProblem(j problemJumper, msg tea.KeyPressMsg) tea.Cmd {
	dir := 1
	if key.Matches(msg, a.keys.PrevProblem) {
		dir = -1
	}
	if !j.jumpProblem(dir) {
		if r, ok := j.(interface{ noJumpReason() string }); ok && r.noJumpReason() != "" {
			return a.setFlash(r.noJumpReason(), false)
		}
		return a.setFlash("nothing failed or blocked here", false)
	}
	return a.settle(a.top())
}

// jumpProblem moves the model view's cursor to the next loaded unit (dir
// 1, or the previous: -1) that is failed or blocked, round the end.
func (v *modelView) jumpProblem(dir int) bool {
	n := len(v.idx)
	for step := 1; step <= n; step++ {
		i := ((v.cur.pos+dir*step)%n + n) % n
		if st := v.data.units[v.idx[i]].Status; st == state.Failed || st == state.Blocked {
			v.cur.jumpTo(i)
			return true
		}
	}
	return false
}

// jumpProblem moves to the next incident card (every card is a problem),
// round the end.
func (v *incidentsView) jumpProblem(dir int) bool {
	if v.rep == nil || len(v.rep.Incidents) == 0 {
		return false
	}
	n := len(v.rep.Incidents)
	v.cur.moveTo(((v.cur.pos+dir)%n + n) % n)
	v.pin()
	return true
}
