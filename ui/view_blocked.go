package ui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// blockedView is the triage queue of `bollhav blocked`: every blocked unit,
// most downstream impact first, filterable by model, pipeline or reason.
type blockedView struct {
	viewBase
	units []gate.BlockedUnit
	idx   []int
	cur   cursor
	query string
}

func newBlocked(c *common) *blockedView {
	return &blockedView{viewBase: newBase(c)}
}

// viewBlocked is the triage queue, key 2.
const viewBlocked viewKind = "blocked"

func (v *blockedView) kind() viewKind { return viewBlocked }
func (v *blockedView) title() string  { return "Blocked" }

func (v *blockedView) load(gen uint64, _ []string) tea.Cmd {
	return loadCmd(v.c, v.id, gen, func(ctx context.Context) ([]gate.BlockedUnit, error) {
		return v.c.blockedNow(ctx, gate.BlockedFilter{})
	})
}

func (v *blockedView) update(msg viewMsg) tea.Cmd {
	if m, ok := msg.(loaded[[]gate.BlockedUnit]); ok {
		v.apply(m.data)
	}
	return nil
}

// apply takes the blocked units, keeping the cursor on its unit.
func (v *blockedView) apply(units []gate.BlockedUnit) {
	var sel *gate.BlockedUnit
	if s := v.selected(); s != nil {
		c := *s
		sel = &c
	}
	v.units = units
	v.refilter()
	if sel != nil {
		for i, ix := range v.idx {
			if u := v.units[ix]; u.Model == sel.Model && u.Window.Equal(sel.Window) {
				v.cur.moveTo(i)
				break
			}
		}
	}
}

func (v *blockedView) affected(changes []state.Change) (bool, []string) {
	return len(changedModels(v.c.eng.Env.Suffix, changes)) > 0, nil
}

func (v *blockedView) filter() string { return v.query }

func (v *blockedView) setFilter(s string) {
	v.query = s
	v.refilter()
}

func (v *blockedView) refilter() {
	q := strings.ToLower(v.query)
	v.idx = v.idx[:0]
	for i, u := range v.units {
		if q == "" || strings.Contains(strings.ToLower(u.Model), q) || strings.Contains(strings.ToLower(u.Pipeline), q) ||
			strings.Contains(strings.ToLower(u.Reason), q) {
			v.idx = append(v.idx, i)
		}
	}
	v.cur.setLen(len(v.idx))
}

func (v *blockedView) selected() *gate.BlockedUnit {
	if v.cur.pos < len(v.idx) {
		return &v.units[v.idx[v.cur.pos]]
	}
	return nil
}

func (v *blockedView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		return nil
	}
	u := v.selected()
	if u == nil {
		return nil
	}
	switch {
	case key.Matches(msg, v.c.keys.Enter):
		v.c.openWhy(u.Model, u.Window.Since)
		return nil
	case key.Matches(msg, v.c.keys.Model):
		v.c.openModel(u.Model)
		return nil
	case key.Matches(msg, v.c.keys.RunWindow):
		v.c.openAction(action{kind: actionRun, model: u.Model, window: windowPtr(u.Window), mode: spec.Bulldozer})
		return nil
	case key.Matches(msg, v.c.keys.MarkApplied):
		v.c.openAction(action{kind: actionMark, model: u.Model, window: windowPtr(u.Window), status: state.Applied})
		return nil
	}
	return nil
}

func (v *blockedView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *blockedView) bindings() []key.Binding {
	enter := v.c.keys.Enter
	enter.SetHelp("enter", "why")
	return []key.Binding{enter, v.c.keys.Model, v.c.keys.RunWindow, v.c.keys.MarkApplied}
}

func (v *blockedView) render(w, h int) []string {
	if !v.loaded {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	nameW := min(28, max(14, w/5))
	cols := []column{{w: 1}, {w: 6, right: true}, {w: nameW}, {w: 24}}
	head := []string{"", "IMPACT", "MODEL", "WINDOW"}
	wide := w >= 120
	if wide {
		cols = append(cols, column{w: 10}, column{w: 10})
		head = append(head, "PIPELINE", "SINCE")
	}
	cols = append(cols, column{w: 0})
	head = append(head, "REASON")
	lines := []string{t.Muted.Render(" " + row(w-1, cols, head...))}
	v.cur.setHeight(max(1, h-2))
	if len(v.idx) == 0 {
		msg := "   nothing is blocked"
		if v.query != "" {
			msg = fmt.Sprintf("   no blocked unit matches %q (esc clears the filter)", v.query)
		}
		lines = append(lines, t.Muted.Render(msg))
	}
	from, to := v.cur.visible()
	now := v.c.now()
	for i := from; i < to; i++ {
		u := v.units[v.idx[i]]
		cells := []string{t.Glyph(themes.Blocked), count(u.Impact), u.Model, windowText(u.Window)}
		if wide {
			at := u.UpdatedAt
			cells = append(cells, t.Muted.Render(u.Pipeline), t.Muted.Render(ageText(now, &at)))
		}
		cells = append(cells, t.Muted.Render(oneLine(u.Reason)))
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	lines = pad(lines, w, h-1)
	foot := " " + plural(len(v.units), "blocked unit", "blocked units")
	if v.query != "" {
		foot += fmt.Sprintf(" · %d match %q", len(v.idx), v.query)
	}
	if hint := v.cur.scrollHint(); hint != "" {
		foot += " · " + hint
	}
	return append(lines, t.Muted.Render(foot))
}
