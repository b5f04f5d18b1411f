package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/tui/timeline"
)

// The model view's coverage timeline, drawn by ui/timeline: the standard
// renderers' timeline and visible.

// timelineGlyphs are ui/timeline's glyphs with the themes' running and
// blocked glyphs, the two an on-call engineer looks for, so they read the
// same in the strip as in every list. Applied and pending stay blocks, so
// the strip reads as a bar with holes where something is wrong.
var timelineGlyphs = func() timeline.Glyphs {
	g := timeline.Unicode
	g.Running = []rune(themes.Glyph(themes.Running))[0]
	g.Blocked = []rune(themes.Glyph(themes.Blocked))[0]
	return g
}()

// timelineStyles are the theme's status styles on the timeline's statuses
// (the same spellings), the cursor in the theme's Selected style like a
// list's cursor row, and the verdicts in the colour of what they mean.
func timelineStyles(th themes.Theme) timeline.Styles {
	st := timeline.Styles{
		Glyphs: timelineGlyphs,
		Status: make(map[timeline.Status]lipgloss.Style, len(timeline.Statuses)),
		Cursor: th.Selected,
		Ruler:  th.Muted,
		Verdict: map[timeline.Verdict]lipgloss.Style{
			timeline.VerdictUnknown: th.Muted,
			timeline.VerdictOK:      th.Status(themes.Applied),
			timeline.VerdictUnmet:   th.Status(themes.Blocked),
			timeline.VerdictStale:   th.Status(themes.Stale),
			timeline.VerdictError:   th.Status(themes.Failed),
		},
	}
	for _, s := range timeline.Statuses {
		st.Status[s] = th.Status(themes.Status(s))
	}
	return st
}

// gridOf is a temporal model's grid (a flexible model's slicing grid).
func gridOf(m *spec.Model) (state.Grid, bool) {
	if m == nil || m.Chunking == nil {
		return state.Grid{}, false
	}
	c := m.Chunking
	g, err := state.NewGrid(c.Start, c.Interval, c.Location)
	return g, err == nil
}

// rangeOf is a temporal model's contract range at now: from its start to
// its last complete window (or its fixed end); zero when it has none yet.
func rangeOf(m *spec.Model, now time.Time) state.Window {
	g, ok := gridOf(m)
	if !ok {
		return state.Window{}
	}
	r, _ := g.ContractRange(now, m.Chunking.End)
	return r
}

// timelineGrid is the grid the axis counts in: the model's, or for a
// timeless model its first temporal upstream's.
func timelineGrid(in timelineInput) (state.Grid, bool) {
	if g, ok := gridOf(in.Def); ok {
		return g, true
	}
	for _, u := range in.Upstreams {
		if g, ok := gridOf(u.Def); ok {
			return g, true
		}
	}
	return state.Grid{}, false
}

// timelineAxis is the axis of a frame width cells wide. A range that fits
// at the zoom (the finest that fits while the view's zoom is negative) is
// drawn whole, each cell as many columns wide as fills the width; one that
// does not is drawn a column per cell where the view's state left it,
// re-zoomed around the cursor when the zoom changed, and scrolled so the
// cursor shows. It records itself in the state.
func timelineAxis(in timelineInput, width int) (timeline.Axis, []timeline.Zoom, bool) {
	grid, ok := timelineGrid(in)
	if !ok || width <= 0 {
		return timeline.Axis{}, nil, false
	}
	zooms := timeline.Zooms(grid.Interval)
	st := in.State
	if st == nil {
		st = &timelineState{}
	}
	st.Levels = len(zooms)
	var a timeline.Axis
	var fitted bool
	if in.Zoom < 0 {
		a, fitted = timeline.Fit(grid, zooms, in.Range, width)
	} else {
		a, fitted = timeline.FitAt(grid, zooms[min(in.Zoom, len(zooms)-1)], in.Range, width)
	}
	zi := max(0, slices.Index(zooms, a.Zoom()))
	cur := state.Window{}
	if in.Cursor != nil {
		cur = in.Cursor.Window
	}
	switch {
	case fitted:
		// The whole range shows; a cursor outside it (a unit past the
		// range's end) still must.
		if !cur.Empty() {
			if c := a.Column(cur.Since); c < 0 || c >= a.Width() {
				a = a.Follow(cur.Since, 0)
			}
		}
	default:
		switch {
		case st.set && st.scale == 1 && st.zoom == zi:
			a = timeline.NewAxis(grid, zooms[zi], st.start, width)
		case st.set && st.scale == 1:
			old := max(0, min(st.zoom, len(zooms)-1))
			a = timeline.NewAxis(grid, zooms[old], st.start, width).WithZoom(zooms[zi], timelineAnchor(in, grid))
		default:
			a = initialAxis(in, grid, zooms[zi], width)
		}
		if !cur.Empty() {
			a = a.Follow(cur.Since, min(4, width/8))
			// The margin Follow keeps is no use before the model starts,
			// where nothing is ever drawn.
			if lead := a.Column(grid.Start); lead > 0 {
				a = a.Scroll(min(lead, a.Column(cur.Since)))
			}
		}
	}
	st.set, st.start, st.zoom, st.scale, st.width = true, a.Visible().Since, zi, a.Scale(), width
	return a, zooms, true
}

// timelineAnchor is the instant the axis keeps in place: the cursor's
// window, else now.
func timelineAnchor(in timelineInput, grid state.Grid) time.Time {
	if in.Cursor != nil && !in.Cursor.Window.Empty() {
		return in.Cursor.Window.Since
	}
	return grid.WindowContaining(in.Now).Since
}

// initialAxis puts the cursor two thirds across, the history before it
// being what explains it, without blank columns before the model's start
// when the cursor can stay in view.
func initialAxis(in timelineInput, grid state.Grid, z timeline.Zoom, width int) timeline.Axis {
	anchor := timelineAnchor(in, grid)
	a := timeline.NewAxis(grid, z, anchor, width).Scroll(-(width * 2 / 3))
	if lead := a.Column(grid.Start); lead > 0 {
		a = a.Scroll(min(lead, a.Column(anchor)))
	}
	return a
}

// visibleTimeline is the time a frame width cells wide shows.
func visibleTimeline(in timelineInput, width int) state.Window {
	a, _, ok := timelineAxis(in, width-1)
	if !ok {
		return state.Window{}
	}
	return a.Visible()
}

// spanTrack prepares a span for drawing: its applied islands and other
// units merged in time order, over the model's range — cut where a partial
// span ends, so what was not read shows blank rather than missing.
func spanTrack(sp timelineSpan, extent state.Window) timeline.Track {
	if sp.Partial && sp.Loaded.Until.Before(extent.Until) {
		extent.Until = state.Later(extent.Since, sp.Loaded.Until)
	}
	segs := make([]timeline.Segment, 0, len(sp.Applied)+len(sp.Other)+len(sp.Stale)+len(sp.Outdated))
	i, j := 0, 0
	for i < len(sp.Applied) || j < len(sp.Other) {
		if j == len(sp.Other) || i < len(sp.Applied) && sp.Applied[i].Since.Before(sp.Other[j].Window.Since) {
			segs = append(segs, timeline.Segment{Window: sp.Applied[i], Status: timeline.Applied})
			i++
			continue
		}
		u := sp.Other[j]
		segs = append(segs, timeline.Segment{Window: u.Window, Status: timeline.StatusOf(u.Status)})
		j++
	}
	// Stale and outdated windows lie on applied islands; where they
	// overlap, the track keeps the worse status (stale over outdated over
	// applied).
	for _, w := range sp.Outdated {
		segs = append(segs, timeline.Segment{Window: w, Status: timeline.Outdated})
	}
	for _, w := range sp.Stale {
		segs = append(segs, timeline.Segment{Window: w, Status: timeline.Stale})
	}
	return timeline.NewTrack(segs, extent)
}

// trackCache is the tracks prepared from one load's spans, kept in the
// view's timelineState until the next load: a frame then costs the
// columns drawn, not the units loaded. The ranges they were prepared over
// move with the clock, so they are part of the key.
type trackCache struct {
	extents []state.Window
	model   timeline.Track
	ups     []timeline.Track
}

func prepared(in timelineInput) *trackCache {
	extents := make([]state.Window, 0, 1+len(in.Upstreams))
	extents = append(extents, rangeOf(in.Def, in.Now))
	for _, u := range in.Upstreams {
		extents = append(extents, rangeOf(u.Def, in.Now))
	}
	if in.State != nil {
		if c, ok := in.State.tracks.(*trackCache); ok && slices.EqualFunc(c.extents, extents, state.Window.Equal) {
			return c
		}
	}
	c := &trackCache{extents: extents, model: spanTrack(in.Span, extents[0])}
	for _, u := range in.Upstreams {
		c.ups = append(c.ups, upstreamTrack(u, in.Now))
	}
	if in.State != nil {
		in.State.tracks = c
	}
	return c
}

// upstreamTrack is an upstream's strip: its span over its range, or for a
// timeless upstream its one row's status across the loaded time.
func upstreamTrack(u timelineUpstream, now time.Time) timeline.Track {
	if u.Status != nil && u.Status.Timeless() {
		if len(u.Span.Other) == 0 || u.Span.Loaded.Empty() {
			return timeline.Track{}
		}
		seg := timeline.Segment{Window: u.Span.Loaded, Status: timeline.StatusOf(u.Span.Other[0].Status)}
		return timeline.NewTrack([]timeline.Segment{seg}, u.Span.Loaded)
	}
	return spanTrack(u.Span, rangeOf(u.Def, now))
}

// laneContract is what the timeline marks of an upstream's contract for
// the cursor's window: the level, the freshness limit, and the gate's own
// verdict with the age of the rows it judged when the view has it.
func laneContract(u timelineUpstream, cursor state.Window, now time.Time) timeline.Contract {
	lvl, err := timeline.ParseLevel(u.Source.Contract.String())
	if err != nil {
		lvl = timeline.LevelExists
	}
	c := timeline.Contract{Level: lvl, Window: cursor}
	f := u.Source.Freshness
	if f != nil {
		c.Within, c.Scope = f.Within, f.Scope.String()
	}
	v := u.Verdict
	if v == nil {
		return c
	}
	switch {
	case v.Err != nil:
		c.Verdict, c.Err = timeline.VerdictError, oneLine(v.Err.Error())
	case v.Skipped, v.Satisfied:
		c.Verdict = timeline.VerdictOK
	case v.Stale:
		c.Verdict = timeline.VerdictStale
	default:
		c.Verdict = timeline.VerdictUnmet
	}
	if f != nil {
		at := v.Newest
		if f.Scope == spec.All {
			at = v.Oldest
		}
		if at != nil {
			c.Age = now.Sub(*at)
		}
	}
	return c
}

// cursorLabel is written beside the cursor: the window, its status, and
// when it was applied (and under an earlier definition, when it was) or
// why it is not; the model view prints the window and the time as the time
// toggle says. current is the model's current definition fingerprint.
func cursorLabel(u *state.Unit, current string, window func(state.Window) string, when func(*time.Time) string) string {
	if u == nil {
		return ""
	}
	s := window(u.Window) + " " + themes.Glyph(unitStatus(u.Status)) + " " + string(u.Status)
	switch {
	case u.Status == state.Applied && u.AppliedAt != nil:
		s += " " + when(u.AppliedAt)
		if engine.UnitDefinition(*u, current) == engine.DefinitionOutdated {
			s += " · " + themes.Glyph(themes.Outdated) + " outdated"
		}
	case u.Status == state.Failed && u.Error != "":
		s += " · " + oneLine(u.Error)
	case u.BlockedReason != "":
		s += " · " + oneLine(u.BlockedReason)
	}
	return s
}

// renderTimeline draws the model view's timeline: a heading with the zoom
// levels, then ui/timeline's ruler, the model's strip, the cursor, and a
// lane per gated upstream with the contract's marks; every line exactly
// w cells.
func renderTimeline(in timelineInput, w, height int) []string {
	t := in.Theme
	title := " " + t.Title.Render("Timeline") + " "
	if height <= 0 || w <= 0 {
		return nil
	}
	a, zooms, ok := timelineAxis(in, w-1)
	if !ok {
		msg := "no time axis: the model's definition cannot be read"
		if in.Model.Timeless() {
			msg = "timeless: one existence row, no windows"
			if u := in.Cursor; u != nil {
				msg += " · " + themes.Glyph(unitStatus(u.Status)) + " " + string(u.Status)
			}
		}
		return []string{fit(title+t.Muted.Render(msg), w)}
	}
	st := timelineStyles(t)

	// The heading: the zoom levels with the current one in brackets, and
	// the legend where it fits.
	grid, _ := timelineGrid(in)
	var levels []string
	for _, z := range zooms {
		name := z.String()
		if z == timeline.ZoomGrain {
			name = grid.Interval.String()
		}
		if z == a.Zoom() {
			name = "[" + name + "]"
		}
		levels = append(levels, name)
	}
	head := title
	timeless := in.Def == nil || in.Def.Chunking == nil
	if timeless {
		// A timeless model has no axis of its own: its upstreams are
		// drawn on the first temporal one's.
		head += t.Muted.Render("timeless: one existence row") + " " + statusText(t, in.Cursor) + t.Muted.Render(" · ")
	}
	head += t.Muted.Render("zoom " + strings.Join(levels, " ") + "  +/_")
	partial := in.Span.Partial || in.Span.StalePartial
	for _, u := range in.Upstreams {
		partial = partial || u.Span.Partial || u.Span.StalePartial
	}
	if partial {
		head += t.Error.Render("  partial: too many units to show them all")
	}
	// The legend explains what is on screen first: a stale or failed
	// cell is explained even where every entry does not fit.
	tracks := prepared(in)
	if room := w - width(head) - 2; room >= 9 {
		head += "  " + timeline.LegendFor(st, room, timeline.Present(a, append([]timeline.Track{tracks.model}, tracks.ups...)...))
	}
	out := []string{fit(head, w)}
	if height == 1 {
		return out
	}

	var cur state.Window
	if in.Cursor != nil {
		cur = in.Cursor.Window
	}
	v := timeline.View{Axis: a, Cursor: cur, CursorLabel: in.CursorLabel, Styles: st, Model: tracks.model}
	for i, u := range in.Upstreams {
		v.Lanes = append(v.Lanes, timeline.Lane{Name: u.Source.Name, Track: tracks.ups[i], Contract: laneContract(u, cur, in.Now)})
	}
	if fixed := 3; timeless && 1+3*len(v.Lanes) > height-1 || !timeless && fixed+3*len(v.Lanes) > height-1 {
		// Not every lane fits: the upstreams that hold the cursor's window
		// back come first.
		held := func(ln timeline.Lane) bool {
			c := ln.Contract
			if c.Window.Empty() {
				c.Window = cur
			}
			return timeline.Assess(c, ln.Track).Verdict != timeline.VerdictOK
		}
		slices.SortStableFunc(v.Lanes, func(x, y timeline.Lane) int {
			hx, hy := held(x), held(y)
			switch {
			case hx && !hy:
				return -1
			case hy && !hx:
				return 1
			}
			return 0
		})
	}
	var body []string
	if timeless {
		body = timelessLanes(v, height-1)
	} else {
		body = timeline.Render(v, height-1)
	}
	for _, l := range body {
		out = append(out, " "+l)
	}
	return out
}

// timelessLanes is a timeless model's timeline: the ruler and its
// upstreams' lanes, with no strip or cursor of its own (what it needs of
// each upstream does not depend on a window), in at most height lines.
func timelessLanes(v timeline.View, height int) []string {
	a, st := v.Axis, v.Styles
	out := []string{timeline.Ruler(a, st)}
	for i, ln := range v.Lanes {
		if len(out)+3 > height {
			if len(out) < height {
				out = append(out, fit(fmt.Sprintf("… %d more upstreams", len(v.Lanes)-i), a.Width()))
			}
			break
		}
		out = append(out, fit(ln.Name+" ("+ln.Contract.Level.String()+")", a.Width()),
			timeline.Strip(a, ln.Track, state.Window{}, st), timeline.Marks(a, ln.Track, ln.Contract, st))
	}
	return out
}

// statusText is a unit's status, glyph and word, in its style.
func statusText(t themes.Theme, u *state.Unit) string {
	if u == nil {
		return t.Muted.Render("(no row yet)")
	}
	return statusLabel(t, u.Status)
}
