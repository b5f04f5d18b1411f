package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// The model view's timeline: what it loads as the axis moves, the engine's
// gate of the cursor's unit once the cursor rests, and the drawing (the
// renderer of the view's common, or a one-line strip without one).

// gateDelay is how long the cursor rests on a window before the model view
// asks the engine for its gate: holding j down asks once, at the end.
const gateDelay = 150 * time.Millisecond

// settle runs after the data arrives, the terminal is resized or the
// wheel moves the cursor: it loads what the timeline now shows when that is
// outside what was loaded, and otherwise asks for the cursor's gate.
func (v *modelView) settle() tea.Cmd {
	if v.c.render.timeline == nil || v.c.render.visible == nil || !v.loaded {
		return nil
	}
	vis := v.c.render.visible(v.timelineInput(), max(v.c.width, 20))
	if !vis.Empty() && !v.tlWant.Covers(vis) {
		// A screen's worth either side, so scrolling on loads rarely.
		d := vis.Duration()
		v.tlAsk = state.Window{Since: vis.Since.Add(-d), Until: vis.Until.Add(d)}
		v.c.send(reloadMsg{v.id})
		return nil
	}
	return v.askGate()
}

// askGate asks, once the cursor has rested, for the engine's gate of the
// cursor's unit, unless the view has it or has asked for it.
func (v *modelView) askGate() tea.Cmd {
	u := v.selected()
	if u == nil || v.data.def == nil || len(v.data.upstreams) == 0 {
		return nil
	}
	if v.hasGate && v.gateFor.Equal(u.Window) || v.gateAsked && v.gateWant.Equal(u.Window) {
		return nil
	}
	v.gateWant, v.gateAsked = u.Window, true
	v.gateSeq++
	id, seq := v.id, v.gateSeq
	return tick(v.c.ctx, gateDelay, func(time.Time) tea.Msg { return gateTickMsg{view: id, seq: seq} })
}

// gateTick asks the engine for the gate when the cursor is still where it
// rested.
func (v *modelView) gateTick(msg gateTickMsg) tea.Cmd {
	if msg.seq != v.gateSeq || !v.gateAsked {
		return nil
	}
	return loadGate(v.c, v.id, v.gateSeq, v.data.def, v.gateWant, v.data.status.Timeless())
}

// applyGate takes the engine's gate of the window asked for.
func (v *modelView) applyGate(msg gateMsg) {
	if msg.seq != v.gateSeq {
		return
	}
	v.gateAsked = false
	if msg.err != nil {
		return // the timeline derives what it can from the coverage
	}
	g := msg.gate
	v.gate, v.gateFor, v.hasGate = &g, msg.window, true
}

// timelineInput is the timeline's data for the frame.
func (v *modelView) timelineInput() timelineInput {
	now := v.c.now()
	in := timelineInput{Model: v.data.status, Def: v.data.def, Cursor: v.selected(), Zoom: v.zoom, Span: v.data.span,
		Range: v.data.fit, Now: now, Theme: v.c.theme, State: &v.tl}
	in.CursorLabel = cursorLabel(in.Cursor, in.Model.Fingerprint, func(w state.Window) string { return v.c.window(w) }, v.c.when)
	gated := v.hasGate && in.Cursor != nil && in.Cursor.Window.Equal(v.gateFor)
	for _, u := range v.data.upstreams {
		tu := timelineUpstream{Source: u.src, Status: u.status, Def: u.def, Span: u.span}
		if gated {
			for i := range v.gate.Verdicts {
				if vd := &v.gate.Verdicts[i]; vd.Upstream == u.src.Name {
					tu.Verdict = vd
				}
			}
		}
		in.Upstreams = append(in.Upstreams, tu)
	}
	return in
}

// timeline is the coverage timeline: ui/timeline's when it is wired in,
// else one line of the loaded units' glyphs, the cursor's unit bracketed.
func (v *modelView) timeline(w, h int) (lines []string, allLanes bool) {
	t := v.c.theme
	if v.c.render.timeline != nil {
		// A heading, the ruler, the strip and the cursor, then three lines
		// per upstream, in what leaves room for a few units (ten lines of
		// 24), or half a large terminal; lanes that do not fit are counted.
		want := 4 + 3*len(v.data.upstreams)
		if v.data.status.Timeless() {
			want = 2 + 3*len(v.data.upstreams) // no strip or cursor of its own
		}
		room := max(7, h-12)
		if h >= 30 {
			room = max(10, h/2)
		}
		lines := v.c.render.timeline(v.timelineInput(), w, min(want, room))
		return lines, len(lines) == want // fewer: lanes left out, or no axis to draw them on
	}
	label := " " + t.Title.Render("Timeline") + " "
	room := w - width(label) - 1
	if len(v.data.units) == 0 || room < 4 {
		return []string{label + t.Muted.Render("no units")}, false
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
	return []string{label + strip}, false
}

// fitRange is the time the timeline fits: from the model's
// first unit to the later of its last unit and its last complete window,
// so windows that never ran up to now show as missing rather than off
// screen. The units load a page at a time, so past the first page the
// applied coverage stands in for the last unit. A timeless model's is its
// temporal upstreams' (its axis is theirs).
func fitRange(d modelData, now time.Time) state.Window {
	var r state.Window
	add := func(w state.Window) {
		switch {
		case w.Empty():
		case r.Empty():
			r = w
		default:
			r = state.Window{Since: state.Earlier(r.Since, w.Since), Until: state.Later(r.Until, w.Until)}
		}
	}
	span := func(st *engine.ModelStatus, def *spec.Model, units []state.Unit, more bool) {
		if st == nil || st.Timeless() {
			return
		}
		if len(units) > 0 {
			add(state.Window{Since: units[0].Window.Since, Until: units[len(units)-1].Window.Until})
		}
		if ws := st.Coverage.Windows(); len(ws) > 0 && (more || len(units) == 0) {
			add(state.Window{Since: ws[0].Since, Until: ws[len(ws)-1].Until})
		}
		if c := rangeOf(def, now); !c.Empty() && !r.Empty() {
			add(state.Window{Since: state.Earlier(r.Until, c.Until), Until: c.Until})
		}
	}
	if !d.status.Timeless() {
		span(&d.status, d.def, d.units, d.more)
		if r.Empty() {
			add(rangeOf(d.def, now)) // no units yet: the range they will have
		}
		return r
	}
	for _, u := range d.upstreams {
		span(u.status, u.def, nil, true)
	}
	for _, u := range d.upstreams {
		if r.Empty() && (u.status == nil || !u.status.Timeless()) {
			add(rangeOf(u.def, now)) // nothing applied upstream yet
		}
	}
	return r
}

// zoomBy steps the timeline's zoom out (+1) or in (-1) from the level on
// screen, which while the zoom is fitted is the one the fit chose; the
// level then stays the user's, fitted to the width only where the range
// fits at it.
func (v *modelView) zoomBy(step int) tea.Cmd {
	if v.zoom < 0 {
		v.zoom = v.tl.zoom // zero before the first frame: the grain
	}
	v.zoom += step
	if v.tl.Levels > 0 {
		v.zoom = min(v.zoom, v.tl.Levels-1)
	}
	v.zoom = max(0, v.zoom)
	return v.settle()
}
