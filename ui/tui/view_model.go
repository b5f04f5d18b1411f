package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// modelView is one model: its shape and counts, its contracts with each
// gated upstream, its downstreams, the coverage timeline (from ui/timeline
// through the timeline renderer of its common, a one-line strip without
// one; view_model_timeline.go) and its units, loaded a page at a time as
// the cursor goes down.
type modelView struct {
	viewBase
	name  string
	data  modelData
	limit int

	idx []int // units shown (filtered), as indices into data.units
	cur cursor
	listQuery
	placed bool // the cursor has been placed on the first load
	// startAt, when set, is where the first load puts the cursor: the
	// unit whose window holds it (u from a downstream's model view).
	startAt *time.Time
	zoom    int // timeline zoom: steps out from the model's grain; negative: fitted (zoomBy)

	// The timeline: its axis between frames; the time the next load asks
	// for (tlAsk, zero for "around the cursor") and the time the data on
	// screen was loaded for (tlWant), a reload being due when the axis
	// shows time outside it.
	tl     timelineState
	tlAsk  state.Window
	tlWant state.Window
	// The engine's gate of the unit at gateFor (hasGate), and the one asked
	// for after the cursor came to rest on gateWant (gateAsked), with the
	// generation of that request.
	gate      *gate.UnitGate
	gateFor   state.Window
	hasGate   bool
	gateWant  state.Window
	gateAsked bool
	gateSeq   uint64
}

func newModel(c *common, name string) *modelView {
	return &modelView{viewBase: newBase(c), name: name, limit: unitsPage, zoom: -1}
}

// viewModel is one model, opened from a list, the palette or Options.View.
const viewModel viewKind = "model"

func (v *modelView) kind() viewKind { return viewModel }
func (v *modelView) title() string  { return v.name }

func (v *modelView) load(gen uint64, _ []string) tea.Cmd {
	tl := timelineLoad{on: v.c.render.timeline != nil, want: v.tlAsk, width: v.c.width}
	if u := v.selected(); u != nil {
		at := u.Window.Since
		tl.at = &at
	} else if !v.placed && v.startAt != nil {
		tl.at = v.startAt
	}
	return loadCmd(v.c, v.id, gen, loadModel(v.c.eng, v.name, v.limit, tl))
}

// update takes the view's data, and the engine's gate of the cursor's
// unit: the tick of the cursor at rest asks for it, the answer brings it.
func (v *modelView) update(msg viewMsg) tea.Cmd {
	switch msg := msg.(type) {
	case loaded[modelData]:
		v.apply(msg.data)
	case gateTickMsg:
		return v.gateTick(msg)
	case gateMsg:
		v.applyGate(msg)
	}
	return nil
}

// apply takes loaded data, keeping the cursor on its unit.
func (v *modelView) apply(d modelData) {
	var sel time.Time
	hadSel := false
	if u := v.selected(); u != nil {
		sel, hadSel = u.Window.Since, true
	}
	v.data = d
	v.tlWant = v.data.want
	v.tl.tracks = nil // prepared again from the new spans
	v.gate, v.gateFor, v.hasGate = v.data.gate, v.data.gateFor, v.data.gate != nil
	v.gateAsked = false
	v.gateSeq++ // a gate asked for before this load is older than it
	v.refilter()
	switch {
	case hadSel:
		v.cur.moveToFirst(len(v.idx), func(i int) bool { return v.data.units[v.idx[i]].Window.Since.Equal(sel) })
	case !v.placed && v.startAt != nil && v.startIndex() >= 0:
		v.cur.jumpTo(v.startIndex())
	case !v.placed:
		// The cursor starts on the first unit that is not applied: where
		// an on-call engineer looks first.
		if i := firstNotApplied(v.data.units); i >= 0 && v.query == "" {
			v.cur.jumpTo(i)
		}
	}
	v.placed = true
}

// startIndex is the row of the unit whose window holds startAt; -1 when
// none is loaded (it is past the first page, or not there).
func (v *modelView) startIndex() int {
	for i, ix := range v.idx {
		if w := v.data.units[ix].Window; w.Since.Equal(*v.startAt) || w.Contains(*v.startAt) {
			return i
		}
	}
	return -1
}

// upstreamTarget is where u goes from the cursor's window: the first gated
// upstream whose contract the engine's gate finds unsatisfied, at the first
// window it needs that is not applied; ok is false when the gate is not
// known yet or nothing upstream holds the window back.
func (v *modelView) upstreamTarget() (model string, at time.Time, ok bool, why string) {
	u := v.selected()
	switch {
	case len(v.data.upstreams) == 0:
		return "", time.Time{}, false, v.name + " has no gated upstream"
	case u == nil && !v.data.status.Timeless():
		return "", time.Time{}, false, "no unit under the cursor"
	case !v.hasGate || u != nil && !u.Window.Equal(v.gateFor):
		return "", time.Time{}, false, "the gate of this window is still loading"
	}
	for _, vd := range v.gate.Verdicts {
		if vd.Satisfied || vd.Skipped {
			continue
		}
		if len(vd.Missing) > 0 {
			return vd.Upstream, vd.Missing[0].Since, true, ""
		}
		if len(vd.Outdated) > 0 {
			return vd.Upstream, vd.Outdated[0].Since, true, ""
		}
		// Stale or a hard error: the upstream's model, on its first unit
		// that is not applied.
		return vd.Upstream, time.Time{}, true, ""
	}
	return "", time.Time{}, false, "nothing upstream holds this window back"
}

func (v *modelView) affected(changes []state.Change) (bool, []string) {
	mine := map[string]bool{v.name: true}
	for _, u := range v.data.upstreams {
		mine[u.src.Name] = true
	}
	for _, m := range changedModels(v.c.eng.Env().Suffix, changes) {
		if mine[m] {
			return true, nil
		}
	}
	return false, nil
}

func (v *modelView) setFilter(s string) tea.Cmd {
	v.query = s
	v.refilter()
	return nil
}

// refilter keeps the units whose status or window text contains the
// filter.
func (v *modelView) refilter() {
	v.idx = matching(v.idx, len(v.data.units), v.query, func(i int, q string) bool {
		u := v.data.units[i]
		return strings.Contains(string(u.Status), q) || strings.Contains(strings.ToLower(windowText(u.Window)), q)
	})
	v.cur.setLen(len(v.idx))
}

func (v *modelView) selected() *state.Unit {
	if v.cur.pos < len(v.idx) {
		return &v.data.units[v.idx[v.cur.pos]]
	}
	return nil
}

func (v *modelView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		return tea.Batch(v.more(), v.settle())
	}
	u := v.selected()
	switch {
	case key.Matches(msg, v.c.keys.ZoomOut):
		return v.zoomBy(+1)
	case key.Matches(msg, v.c.keys.ZoomIn):
		return v.zoomBy(-1)
	case key.Matches(msg, v.c.keys.Upstream):
		model, at, ok, why := v.upstreamTarget()
		if !ok {
			v.c.flash(why, false)
			return nil
		}
		up := newModel(v.c, model)
		if !at.IsZero() {
			up.startAt = &at
		}
		v.c.send(pushMsg{up})
		return nil
	case key.Matches(msg, v.c.keys.Enter):
		if u != nil {
			v.c.openWhy(v.name, u.Window.Since)
			return nil
		}
		if v.data.status.Timeless() {
			v.c.openWhy(v.name, time.Time{})
			return nil
		}
	case key.Matches(msg, v.c.keys.Detail):
		if u != nil {
			v.c.openUnit(v.name, u.Window)
			return nil
		}
	case key.Matches(msg, v.c.keys.Yank):
		if u != nil {
			return v.c.yank("the why command", v.c.whyCommand(v.name, u.Window))
		}
	case key.Matches(msg, v.c.keys.YankError):
		if u != nil {
			return v.c.yank("the error", u.Error)
		}
	case key.Matches(msg, v.c.keys.RunModel):
		v.c.openAction(action{kind: actionRun, model: v.name, mode: spec.Discover})
		return nil
	case key.Matches(msg, v.c.keys.Rebuild) && v.data.status.Outdated > 0:
		v.c.openAction(action{kind: actionRun, model: v.name, mode: spec.Bulldozer, outdated: true})
		return nil
	case key.Matches(msg, v.c.keys.unitKeys()...):
		if u != nil {
			v.c.openAction(v.c.keys.unitAction(msg, v.name, u.Window))
			return nil
		}
	}
	return nil
}

// windowPtr is w as a run window: nil for a timeless model's zero window.
func windowPtr(w state.Window) *state.Window {
	if w.IsZero() {
		return nil
	}
	return &w
}

// more asks for the next page of units when the cursor nears the end of
// those loaded.
func (v *modelView) more() tea.Cmd {
	if v.data.more && v.query == "" && v.cur.pos >= len(v.idx)-v.cur.height && v.limit <= len(v.data.units) {
		v.limit += unitsPage
		v.c.send(reloadMsg{v.id})
		return nil
	}
	return nil
}

func (v *modelView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *modelView) bindings() []key.Binding {
	enter := saying(v.c.keys.Enter, "why")
	up := v.c.keys.Upstream
	if v.loaded && len(v.data.upstreams) == 0 {
		up.SetEnabled(false)
	}
	// Offered while the model has outdated windows: there is nothing to
	// rebuild otherwise, and the key would only crowd the help.
	rebuild := v.c.keys.Rebuild
	if v.data.status.Outdated == 0 {
		rebuild.SetEnabled(false)
	}
	return []key.Binding{enter, v.c.keys.Detail, up, v.c.keys.RunWindow, v.c.keys.RunModel, v.c.keys.MarkApplied, v.c.keys.MarkPending, v.c.keys.ZoomIn, v.c.keys.ZoomOut, v.c.keys.Yank, v.c.keys.YankError, v.c.keys.NextProblem, v.c.keys.PrevProblem, rebuild}
}

func (v *modelView) render(w, h int) []string {
	if !v.loaded {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	st := v.data.status
	var lines []string

	// Title and shape.
	shape := st.Shape()
	reg := ""
	if !st.Registered {
		reg = t.Error.Render("  not registered yet (bollhav apply)")
	}
	home := ""
	if v.data.home.EnvVar != "" {
		// A model on a connection: where its data is, never who logs in.
		home = " · data in " + v.data.home.String()
	}
	lines = append(lines, " "+t.Glyph(health(st.Counts))+" "+t.Accent.Render(v.name)+t.Muted.Render("  pipeline "+st.Pipeline+" · "+shape+home)+reg)

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
	lines = append(lines, "   "+freshnessText(t, v.name, st, v.data.fresh, v.c.now(), v.c.when)+t.Muted.Render(" · coverage "+v.c.coverageText(st)))

	// The timeline.
	tl, allLanes := v.timeline(w, h)
	lines = append(lines, tl...)

	// Contracts: on a small terminal, only when the timeline could not
	// show every upstream's lane (each lane names its contract and
	// verdict).
	maxUp := len(v.data.upstreams)
	if h < 30 {
		maxUp = min(maxUp, 3)
	}
	switch {
	case len(v.data.upstreams) > 0 && allLanes && h < 30:
		// The lanes say it.
	case len(v.data.upstreams) == 0:
		lines = append(lines, " "+t.Title.Render("Contracts")+t.Muted.Render("  no gated upstream: nothing gates it"))
	default:
		lines = append(lines, " "+t.Title.Render("Contracts"))
		cols := []column{{w: 3}, {w: min(28, max(12, w/4))}, {w: 12}, {w: 16}, {w: 0}}
		for i, u := range v.data.upstreams {
			if i == maxUp {
				lines = append(lines, t.Muted.Render(fmt.Sprintf("   … and %d more", len(v.data.upstreams)-maxUp)))
				break
			}
			fresh := ""
			if f := u.src.Freshness; f != nil {
				fresh = "fresh " + gate.FormatWithin(f.Within) + " " + f.Scope.String()
			}
			state := t.Error.Render("unknown: " + errText(u.err))
			glyph := t.Glyph(themes.Missing)
			if u.status != nil {
				glyph = t.Glyph(health(u.status.Counts))
				state = t.Muted.Render(shapeText(*u.status) + " · " + v.c.coverageText(*u.status))
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
	v.cur.setHeight(max(1, h-len(lines)-1))
	from, to := v.cur.visible()
	// 24 fits a window in UTC; under T a window that is not a local date
	// ("2025-12-31 18:00 – 2026-01-01 18:00") widens the column.
	windowW := 24
	for i := from; i < to; i++ {
		windowW = max(windowW, width(v.c.windowBare(v.data.units[v.idx[i]].Window))+1)
	}
	cols := []column{{w: 1}, {w: min(windowW, max(24, w/2))}, {w: 10}, {w: v.c.instantWidth()}}
	head := []string{"", "WINDOW", "STATUS", "APPLIED"}
	if zone := v.c.windowZone(); zone != "" {
		head[1] = "WINDOW (" + zone + ")"
	}
	if wide {
		cols = append(cols, column{w: 4, right: true})
		head = append(head, "ATT")
	}
	cols = append(cols, column{w: 0})
	head = append(head, "DETAIL")
	lines = append(lines, t.Muted.Render(" "+row(w-1, cols, head...)))
	for i := from; i < to; i++ {
		u := v.data.units[v.idx[i]]
		detail := u.BlockedReason
		switch {
		case u.Status == state.Failed:
			detail = u.Error
		case u.NotBefore != nil:
			detail = retryDetail(u, v.data.failures[u.ID], v.c.absAt)
		case engine.UnitDefinition(u, st.Fingerprint) == engine.DefinitionOutdated:
			detail = themes.Glyph(themes.Outdated) + " outdated" // why says what changed
		}
		cells := []string{t.Glyph(unitStatus(u.Status)), v.c.windowBare(u.Window), statusLabel(t, u.Status), t.Muted.Render(v.c.when(u.AppliedAt))}
		if wide {
			cells = append(cells, t.Muted.Render(fmt.Sprint(u.Attempts)))
		}
		cells = append(cells, t.Muted.Render(oneLine(detail)))
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	return pad(lines, w, h)
}

// retryDetail is the detail of a unit waiting for its retry: "retry 2/5 at
// 2026-01-03 14:05Z · try 1 failed: <error>", in state.RetryLine's words,
// its time printed by at.
func retryDetail(u state.Unit, f engine.UnitFailures, at func(time.Time) string) string {
	line := "retry at " + at(*u.NotBefore) // the history was not read: the try is not known
	if f.Retry != nil {
		line = f.Retry.Line(at)
	}
	label := "failed"
	if len(f.Failures) > 0 && f.Failures[0].Error == u.Error {
		label = f.Failures[0].Label() + " failed"
	}
	return line + " · " + label + ": " + oneLine(u.Error)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return oneLine(err.Error())
}
