package ui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
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
	in := timelineInput{Model: v.data.status, Def: v.data.def, Cursor: v.selected(), Zoom: v.zoom, Span: v.data.span,
		Now: v.c.now(), Theme: v.c.theme, State: &v.tl}
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
