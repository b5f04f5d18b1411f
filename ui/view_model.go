package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// modelView is one model: its shape and counts, its contracts with each
// gated upstream, its downstreams, the coverage timeline (from ui/timeline
// through coverageTimelineRenderer; a one-line strip until then) and its
// units, loaded a page at a time as the cursor goes down.
type modelView struct {
	viewBase
	name  string
	data  modelData
	limit int

	idx    []int // units shown (filtered), as indices into data.units
	cur    cursor
	query  string
	placed bool // the cursor has been placed on the first load
	zoom   int  // timeline zoom: steps out from the model's grain
}

func (a *App) newModel(name string) *modelView {
	return &modelView{viewBase: viewBase{id: a.id()}, name: name, limit: unitsPage}
}

func (v *modelView) kind() viewKind { return viewModel }
func (v *modelView) title() string  { return v.name }

func (v *modelView) load(a *App, gen uint64, _ []string) tea.Cmd {
	return loadCmd(a.ctx, a.eng, v.id, gen, loadModel(a.eng, v.name, v.limit, coverageTimelineRenderer != nil))
}

func (v *modelView) apply(a *App, data any) {
	var sel time.Time
	hadSel := false
	if u := v.selected(); u != nil {
		sel, hadSel = u.Window.Since, true
	}
	v.data = data.(modelData)
	v.refilter()
	switch {
	case hadSel:
		for i, ix := range v.idx {
			if v.data.units[ix].Window.Since.Equal(sel) {
				v.cur.moveTo(i)
				break
			}
		}
	case !v.placed:
		// The cursor starts on the first unit that is not applied: where
		// an on-call engineer looks first.
		for i, ix := range v.idx {
			if v.data.units[ix].Status != state.Applied {
				v.cur.jumpTo(i)
				break
			}
		}
	}
	v.placed = true
}

func (v *modelView) affected(a *App, changes []state.Change) (bool, []string) {
	mine := map[string]bool{v.name: true}
	for _, u := range v.data.upstreams {
		mine[u.src.Name] = true
	}
	for _, m := range changedModels(a.eng.Env.Suffix, changes) {
		if mine[m] {
			return true, nil
		}
	}
	return false, nil
}

func (v *modelView) filter() string { return v.query }

func (v *modelView) setFilter(s string) {
	v.query = s
	v.refilter()
}

// refilter keeps the units whose status or window text contains the
// filter.
func (v *modelView) refilter() {
	q := strings.ToLower(v.query)
	v.idx = v.idx[:0]
	for i, u := range v.data.units {
		if q == "" || strings.Contains(string(u.Status), q) || strings.Contains(strings.ToLower(windowText(u.Window)), q) {
			v.idx = append(v.idx, i)
		}
	}
	v.cur.setLen(len(v.idx))
}

func (v *modelView) selected() *state.Unit {
	if v.cur.pos < len(v.idx) {
		return &v.data.units[v.idx[v.cur.pos]]
	}
	return nil
}

func (v *modelView) key(a *App, msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(a.keys, msg) {
		return v.more(a)
	}
	u := v.selected()
	switch {
	case key.Matches(msg, a.keys.ZoomOut):
		v.zoom++
	case key.Matches(msg, a.keys.ZoomIn):
		v.zoom = max(0, v.zoom-1)
	case key.Matches(msg, a.keys.Enter):
		if u != nil {
			return a.openWhy(v.name, u.Window.Since)
		}
		if v.data.status.Timeless() {
			return a.openWhy(v.name, time.Time{})
		}
	case key.Matches(msg, a.keys.RunWindow):
		if u != nil {
			w := u.Window
			return a.openAction(action{kind: actionRun, model: v.name, window: windowPtr(w), mode: engine.Bulldozer})
		}
	case key.Matches(msg, a.keys.RunModel):
		return a.openAction(action{kind: actionRun, model: v.name, mode: engine.Discover})
	case key.Matches(msg, a.keys.MarkApplied), key.Matches(msg, a.keys.MarkPending):
		if u != nil {
			st := state.Applied
			if key.Matches(msg, a.keys.MarkPending) {
				st = state.Pending
			}
			return a.openAction(action{kind: actionMark, model: v.name, window: windowPtr(u.Window), status: st})
		}
	}
	return nil
}

// windowPtr is w as a run window: nil for a timeless model's zero window.
func windowPtr(w state.Window) *state.Window {
	if w.Since.IsZero() && w.Until.IsZero() {
		return nil
	}
	return &w
}

// more asks for the next page of units when the cursor nears the end of
// those loaded.
func (v *modelView) more(a *App) tea.Cmd {
	if v.data.more && v.query == "" && v.cur.pos >= len(v.idx)-v.cur.height && v.limit <= len(v.data.units) {
		v.limit += unitsPage
		return a.reload(v, nil)
	}
	return nil
}

func (v *modelView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *modelView) bindings(a *App) []key.Binding {
	enter := a.keys.Enter
	enter.SetHelp("enter", "why")
	return []key.Binding{enter, a.keys.RunWindow, a.keys.RunModel, a.keys.MarkApplied, a.keys.MarkPending, a.keys.ZoomIn, a.keys.ZoomOut}
}

func (v *modelView) render(a *App, w, h int) []string {
	if !v.loaded {
		return loadingLines(a, &v.viewBase, w, h)
	}
	t := a.theme
	st := v.data.status
	var lines []string

	// Title and shape.
	shape := "timeless"
	if !st.Timeless() {
		shape = st.Flexibility + " " + st.Interval
		if st.Flexibility == "flex" {
			shape = "flexible, " + st.Interval + " chunks"
		} else {
			shape = "fixed " + st.Interval + " grid"
		}
	}
	reg := ""
	if !st.Registered {
		reg = t.Error.Render("  not registered yet (bollhav apply)")
	}
	lines = append(lines, " "+t.Glyph(health(st.Counts))+" "+t.Accent.Render(v.name)+t.Muted.Render("  pipeline "+st.Pipeline+" · "+shape)+reg)

	// Counts, newest applied_at, coverage.
	var counts []string
	for _, s := range countColumns {
		n := st.Counts[s]
		c := t.Muted.Render("0 " + string(s))
		if n > 0 {
			c = t.Status(unitStatus(s)).Render(themes.Glyph(unitStatus(s)) + " " + count(n) + " " + string(s))
		}
		counts = append(counts, c)
	}
	lines = append(lines, "   "+strings.Join(counts, "  "))
	lines = append(lines, "   "+t.Muted.Render("last applied "+timeText(st.LastAppliedAt)+" · coverage "+coverageText(st)))

	// The timeline.
	lines = append(lines, v.timeline(a, w)...)

	// Contracts.
	maxUp := len(v.data.upstreams)
	if h < 30 {
		maxUp = min(maxUp, 3)
	}
	if len(v.data.upstreams) == 0 {
		lines = append(lines, " "+t.Title.Render("Contracts")+t.Muted.Render("  no gated upstream: nothing gates it"))
	} else {
		lines = append(lines, " "+t.Title.Render("Contracts"))
		cols := []column{{w: 3}, {w: min(28, max(12, w/4))}, {w: 12}, {w: 16}, {w: 0}}
		for i, u := range v.data.upstreams {
			if i == maxUp {
				lines = append(lines, t.Muted.Render(fmt.Sprintf("   … and %d more", len(v.data.upstreams)-maxUp)))
				break
			}
			fresh := ""
			if f := u.src.Freshness; f != nil {
				fresh = "fresh " + engine.FormatWithin(f.Within) + " " + f.Scope.String()
			}
			state := t.Error.Render("unknown: " + errText(u.err))
			glyph := t.Glyph(themes.Missing)
			if u.status != nil {
				glyph = t.Glyph(health(u.status.Counts))
				state = t.Muted.Render(shapeText(*u.status) + " · " + coverageText(*u.status))
			}
			lines = append(lines, row(w, cols, "  "+glyph, u.src.Name, u.src.Contract.String(), t.Muted.Render(fresh), state))
		}
	}
	if len(v.data.downstream) > 0 {
		lines = append(lines, " "+t.Title.Render("Downstream")+" "+t.Muted.Render(strings.Join(v.data.downstream, ", ")))
	}

	// Units.
	more := ""
	if v.data.more {
		more = "+ (scroll for more)"
	}
	heading := fmt.Sprintf("Units  %s of %s%s", count(len(v.idx)), count(st.Units()), more)
	if v.query != "" {
		heading += "  filter: " + v.query
	}
	lines = append(lines, " "+t.Title.Render("Units")+t.Muted.Render(strings.TrimPrefix(heading, "Units")))
	if len(v.data.units) == 0 {
		lines = append(lines, t.Muted.Render("   no units"))
		return pad(lines, w, h)
	}
	wide := w >= 120
	cols := []column{{w: 1}, {w: 24}, {w: 10}, {w: 17}}
	head := []string{"", "WINDOW", "STATUS", "APPLIED AT"}
	if wide {
		cols = append(cols, column{w: 4, right: true})
		head = append(head, "ATT")
	}
	cols = append(cols, column{w: 0})
	head = append(head, "DETAIL")
	lines = append(lines, t.Muted.Render(" "+row(w-1, cols, head...)))
	listH := max(1, h-len(lines))
	v.cur.setHeight(listH)
	from, to := v.cur.visible()
	for i := from; i < to; i++ {
		u := v.data.units[v.idx[i]]
		detail := u.BlockedReason
		if u.Status == state.Failed {
			detail = u.Error
		}
		cells := []string{t.Glyph(unitStatus(u.Status)), windowText(u.Window), statusLabel(t, u.Status), t.Muted.Render(timeText(u.AppliedAt))}
		if wide {
			cells = append(cells, t.Muted.Render(fmt.Sprint(u.Attempts)))
		}
		cells = append(cells, t.Muted.Render(oneLine(detail)))
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	return pad(lines, w, h)
}

// timeline is the coverage timeline: ui/timeline's when it is wired in,
// else one line of the loaded units' glyphs, the cursor's unit bracketed.
func (v *modelView) timeline(a *App, w int) []string {
	t := a.theme
	if coverageTimelineRenderer != nil {
		in := timelineInput{Model: v.data.status, Def: v.data.def, Units: v.data.units, Cursor: -1, Zoom: v.zoom, Theme: t}
		if v.cur.pos < len(v.idx) {
			in.Cursor = v.idx[v.cur.pos]
		}
		for _, u := range v.data.upstreams {
			in.Upstreams = append(in.Upstreams, timelineUpstream{Source: u.src, Status: u.status, Units: u.units})
		}
		return coverageTimelineRenderer(in, w, timelineHeight)
	}
	label := " " + t.Title.Render("Timeline") + " "
	room := w - width(label) - 1
	if len(v.data.units) == 0 || room < 4 {
		return []string{label + t.Muted.Render("no units")}
	}
	// Show the stretch of units around the cursor that fits.
	at := 0
	if v.cur.pos < len(v.idx) {
		at = v.idx[v.cur.pos]
	}
	from := max(0, min(at-room/2, len(v.data.units)-room))
	to := min(len(v.data.units), from+room)
	var b strings.Builder
	for i := from; i < to; i++ {
		s := unitStatus(v.data.units[i].Status)
		g := t.Glyph(s)
		if i == at {
			g = t.Selected.Render(themes.Glyph(s))
		}
		b.WriteString(g)
	}
	strip := b.String()
	if from > 0 {
		strip = t.Muted.Render("…") + ansiCut(strip, 1)
	}
	if to < len(v.data.units) || v.data.more {
		strip = ansiTrimLast(strip) + t.Muted.Render("…")
	}
	return []string{label + strip}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return oneLine(err.Error())
}
