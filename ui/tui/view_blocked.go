package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/charmbracelet/x/ansi"
)

// blockedView is the triage queue: every failed and blocked unit
// (engine.Triage) with what it holds downstream, grouped by root cause — the
// failed or missing upstream window its reason names (blocked_groups.go) —
// failures first, then the units whose gate passes now ("ready", from the
// live gate index: what `blocked --recheck` judges), then the rest by
// holds. The selected unit's whole reason or error is under the list.
type blockedView struct {
	viewBase
	units []gate.BlockedUnit
	// ready marks the blocked units whose gate passes now (by unitRef
	// key); recheckErr is why that could not be judged.
	ready      map[unitKey]bool
	recheckErr error
	// roots says which incidents hold each unit: the queue is grouped by
	// them, so it names the roots the Incidents screen names.
	roots *gate.IncidentReport

	queueLayout
	cur   cursor // over lines; it never rests on a heading
	query string
	// relayout is the filter's layout worked out off the event loop
	// (view_blocked_filter.go); queueLayout.query says which filter the
	// lines show meanwhile.
	relayout relayout
	// limit is how many units of the queue a load reads (the first
	// pages, in Triage's order); the cursor reaching the last of them
	// reads blockedPage more. stuck and failedAll count the whole queue
	// (the grouped read's counts), of which units holds the first limit.
	limit            int
	stuck, failedAll int
}

// blockedPage is how many units of the queue a load reads at first, and
// how many more each time the cursor reaches the end of those read: a
// few screenfuls, so a queue of a million units costs what its first
// page costs (issue 33). A variable, so a test can page a small queue.
var blockedPage = 2000

// queueLayout is the queue as shown: the units a filter matches, grouped
// by cause and laid out in lines, and its counts. It is worked out when
// the queue or the filter changes, not on every frame — and for a new
// queue in its load, off the UI's goroutine: grouping 1.16M units takes
// about half a second at ten million units.
type queueLayout struct {
	query  string  // the filter it was laid out for
	idx    []int   // units shown (filtered), as indices into units
	groups []cause // idx by cause
	lines  []blockedLine
	// failed and blocked count units, readyShown the shown units
	// readyUnits lists.
	failed, blocked, readyShown int
}

// blockedLine is a row of the list: a cause's heading (unit < 0) or one
// of its units.
type blockedLine struct {
	group, unit int
}

func newBlocked(c *common) *blockedView {
	return &blockedView{viewBase: newBase(c), limit: blockedPage}
}

// viewBlocked is the triage queue, key 2.
const viewBlocked viewKind = "blocked"

func (v *blockedView) kind() viewKind { return viewBlocked }
func (v *blockedView) title() string  { return "Blocked" }

// blockedData is the queue and the recheck of its blocked units, and the
// queue laid out for the filter the view had when it asked (layout.query).
type blockedData struct {
	units      []gate.BlockedUnit
	ready      map[unitKey]bool
	roots      *gate.IncidentReport
	recheckErr error
	layout     queueLayout
	// stuck and failedAll count the whole queue, of which units are the
	// first pages.
	stuck, failedAll int
}

func (v *blockedView) load(gen uint64, _ []string) tea.Cmd {
	return loadCmdWithin(v.c, v.id, gen, wholeLoadTimeout, loadBlocked(v.c, v.query, v.limit))
}

// loadBlocked reads the first limit failed and blocked units of the
// queue, in Triage's order, from the store's grouped, paged read (never
// every stuck unit), the incidents that hold them (the same grouped read
// the Incidents screen makes), then what the gate says of each now,
// changing nothing: a blocked unit whose gate passes now is ready.
func loadBlocked(c *common, query string, limit int) func(ctx context.Context) (blockedData, error) {
	return func(ctx context.Context) (blockedData, error) {
		d := blockedData{ready: map[unitKey]bool{}}
		// The first pages and the roots that hold each unit, as Incidents
		// traces them (the failed units are roots of their own), from
		// one grouped read.
		page, roots, err := c.eng.TriageFirst(ctx, limit)
		if err != nil {
			return blockedData{}, err
		}
		d.units, d.roots = page.Units, roots
		for _, m := range page.Models {
			d.stuck += m.Units
			d.failedAll += m.Failed
		}
		d.recheckErr = recheck(ctx, c, &d)
		d.layout = layoutQueue(d.units, d.ready, d.roots, query)
		return d, nil
	}
}

// recheck marks the blocked units of d whose gate passes now; its error is
// why it could not. The verdicts come from the live gate index
// (gate_live.go), which the first load builds — one full read, as
// `blocked --recheck` sweeps — and the change feed keeps current after
// it, so no later load sweeps again. An environment too large to keep the
// index of (engine.LiveGateMaxUnits) has the models of the units shown
// judged on each load instead (Engine.Judge): the same verdicts, from a
// read of those models and their upstreams.
func recheck(ctx context.Context, c *common, d *blockedData) error {
	var models []string
	for _, u := range d.units {
		if u.Status == state.Blocked && !slices.Contains(models, u.Model) {
			models = append(models, u.Model)
		}
	}
	if len(models) == 0 {
		return nil
	}
	readiness, err := c.gate.judge(ctx, models)
	if err != nil {
		return err
	}
	for i, u := range d.units {
		d.units[i].Readiness = readiness(u.Model, u.Window)
		if u.Status == state.Blocked && d.units[i].Readiness == gate.Ready {
			d.ready[unitRef{u.Model, u.Window}.key()] = true
		}
	}
	return nil
}

func (v *blockedView) update(msg viewMsg) tea.Cmd {
	switch m := msg.(type) {
	case loaded[blockedData]:
		return v.apply(m.data)
	case laidOut:
		return v.laidOut(m)
	}
	return nil
}

// apply takes the queue and its layout, keeping the cursor on its unit;
// when the filter changed while the load ran, the queue shows the load's
// filter until the current one is laid out.
func (v *blockedView) apply(d blockedData) tea.Cmd {
	sel := v.selectedRef()
	v.units, v.ready, v.roots, v.recheckErr = d.units, d.ready, d.roots, d.recheckErr
	v.stuck, v.failedAll = d.stuck, d.failedAll
	v.relayout.queue++
	// A layout still out is of the old queue and will be dropped — or was
	// dropped already, sent while the view was off the stack: either way
	// none is owed for this queue.
	v.relayout.running = false
	v.queueLayout = d.layout
	v.place(sel)
	return v.layOut()
}

// selectedRef is the selected unit, nil on none.
func (v *blockedView) selectedRef() *unitRef {
	if u := v.selected(); u != nil {
		return &unitRef{u.Model, u.Window}
	}
	return nil
}

func (v *blockedView) affected(changes []state.Change) (bool, []string) {
	return len(changedModels(v.c.eng.Env().Suffix, changes)) > 0, nil
}

func (v *blockedView) filter() string { return v.query }

func (v *blockedView) setFilter(s string) tea.Cmd {
	v.query = s
	return v.layOut()
}

// refilter selects the units the filter matches, groups them and lays out
// the lines here, the cursor on sel when it is still listed, else on the
// first unit.
func (v *blockedView) refilter(sel *unitRef) {
	v.queueLayout = layoutQueue(v.units, v.ready, v.roots, v.query)
	v.place(sel)
}

// place puts the cursor on sel when it is listed, else on the first unit,
// under the first heading.
func (v *blockedView) place(sel *unitRef) {
	v.cur.setLen(len(v.lines))
	pos := -1
	for i, l := range v.lines {
		if l.unit >= 0 && sel != nil && v.units[l.unit].Model == sel.model && v.units[l.unit].Window.Equal(sel.window) {
			pos = i
			break
		}
	}
	if pos < 0 {
		pos = min(1, len(v.lines)-1)
	}
	v.cur.moveTo(pos)
}

// layoutQueue lays out the units the query matches (model, pipeline,
// reason, error; "" matches all) by cause, and counts them. It reads only
// its arguments, so a load can run it off the UI's goroutine.
func layoutQueue(units []gate.BlockedUnit, ready map[unitKey]bool, roots *gate.IncidentReport, query string) queueLayout {
	l := queueLayout{query: query}
	q := strings.ToLower(query)
	l.idx = []int{}
	for i, u := range units {
		if q == "" || strings.Contains(strings.ToLower(u.Model), q) || strings.Contains(strings.ToLower(u.Pipeline), q) ||
			strings.Contains(strings.ToLower(u.Reason), q) || strings.Contains(strings.ToLower(u.Error), q) {
			l.idx = append(l.idx, i)
		}
		if u.Status == state.Failed {
			l.failed++
		} else {
			l.blocked++
		}
	}
	l.readyShown = len(readyUnits(units, l.idx, ready))
	l.groups = groupCauses(units, l.idx, ready, roots)
	l.lines = []blockedLine{}
	for g, c := range l.groups {
		l.lines = append(l.lines, blockedLine{group: g, unit: -1})
		for _, i := range c.units {
			l.lines = append(l.lines, blockedLine{group: g, unit: i})
		}
	}
	return l
}

func (v *blockedView) selected() *gate.BlockedUnit {
	if v.cur.pos < len(v.lines) {
		if l := v.lines[v.cur.pos]; l.unit >= 0 {
			return &v.units[l.unit]
		}
	}
	return nil
}

// offHeading moves the cursor off a heading, in the direction it was going
// (dir), or the other way at the end of the list.
func (v *blockedView) offHeading(dir int) {
	for _, d := range []int{dir, -dir} {
		for p := v.cur.pos; p >= 0 && p < len(v.lines); p += d {
			if v.lines[p].unit >= 0 {
				v.cur.moveTo(p)
				return
			}
		}
	}
}

// readyUnits are the shown units the recheck found ready, in queue order.
func (v *blockedView) readyUnits() []unitRef { return readyUnits(v.units, v.idx, v.ready) }

func readyUnits(units []gate.BlockedUnit, idx []int, ready map[unitKey]bool) []unitRef {
	var out []unitRef
	for _, i := range idx {
		u := units[i]
		if r := (unitRef{u.Model, u.Window}); u.Status == state.Blocked && ready[r.key()] {
			out = append(out, r)
		}
	}
	return out
}

func (v *blockedView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		dir := 1
		if key.Matches(msg, v.c.keys.Up) || key.Matches(msg, v.c.keys.PageUp) {
			dir = -1
		}
		v.offHeading(dir)
		v.readMore()
		return nil
	}
	if key.Matches(msg, v.c.keys.RunReady) {
		ready := v.readyUnits()
		if len(ready) == 0 {
			v.c.flash("no unit is ready: a blocked unit is ready once the gate passes (after its upstream is fixed)", false)
			return nil
		}
		v.c.openAction(action{kind: actionRun, model: ready[0].model, mode: spec.Discover, batch: readyRequests(ready)})
		return nil
	}
	u := v.selected()
	if u == nil {
		return nil
	}
	switch {
	case key.Matches(msg, v.c.keys.Enter):
		v.c.openWhy(u.Model, u.Window.Since)
	case key.Matches(msg, v.c.keys.Model):
		v.c.openModel(u.Model)
	case key.Matches(msg, v.c.keys.Detail):
		v.c.openUnit(u.Model, u.Window)
	case key.Matches(msg, v.c.keys.unitKeys()...):
		v.c.openAction(v.c.keys.unitAction(msg, u.Model, u.Window))
	case key.Matches(msg, v.c.keys.Yank):
		return v.c.yank("the why command", v.c.whyCommand(u.Model, u.Window))
	case key.Matches(msg, v.c.keys.YankError):
		if u.Status == state.Failed {
			return v.c.yank("the error", u.Error)
		}
		return v.c.yank("the reason", u.Reason)
	}
	return nil
}

// jumpProblem moves to the first unit of the next cause (dir 1) or the
// previous one (-1), round the end: every row here is failed or blocked,
// so the next one worth a look is the next cause.
func (v *blockedView) jumpProblem(dir int) bool {
	if len(v.groups) == 0 {
		return false
	}
	g := 0
	if v.cur.pos < len(v.lines) {
		g = (v.lines[v.cur.pos].group + dir + len(v.groups)) % len(v.groups)
	}
	for i, l := range v.lines {
		if l.group == g && l.unit >= 0 {
			v.cur.jumpTo(i)
			return true
		}
	}
	return false
}

func (v *blockedView) wheel(msg tea.MouseWheelMsg) {
	if v.cur.handleWheel(msg) {
		v.offHeading(1)
		v.readMore()
	}
}

// more is whether the queue has units past those read.
func (v *blockedView) more() bool { return len(v.units) < v.stuck && len(v.units) >= v.limit }

// readMore reads blockedPage more units of the queue when the cursor is on
// the last line of those read and there are more: the view reloads with
// a larger limit, keeping the cursor on its unit.
func (v *blockedView) readMore() {
	if !v.more() || v.cur.pos < len(v.lines)-1 || v.loading {
		return
	}
	v.limit = len(v.units) + blockedPage
	v.c.send(reloadMsg{v.id})
}

func (v *blockedView) bindings() []key.Binding {
	// Short words, so that at 80 columns the footer shows the four keys
	// of triage (the summary line offers R when units are ready); ? has
	// them all.
	k := v.c.keys
	enter, run, applied, pending := saying(k.Enter, "why"), saying(k.RunWindow, "run"), saying(k.MarkApplied, "mark applied"), saying(k.MarkPending, "pending")
	next, prev := saying(k.NextProblem, "next cause"), saying(k.PrevProblem, "previous cause")
	return []key.Binding{enter, run, applied, pending, k.RunReady, next, k.Detail, k.Model,
		k.Yank, k.YankError, prev}
}

// blockedDetailLines is how many lines the selected unit's reason or error
// may wrap to under the list.
const blockedDetailLines = 3

func (v *blockedView) render(w, h int) []string {
	if !v.loaded {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	nameW := min(28, max(14, w/4))
	detail := v.detail(w)
	v.cur.setHeight(max(1, h-2-len(detail)))
	from, to := v.cur.visible()
	// A month's window, "2026-10-01 – 2026-11-01", is the widest in UTC;
	// under T wider when a window on screen needs it (a day that is not a
	// local date, "2026-12-03 01:00 – 2026-12-04 01:00 CET").
	windowW := 23
	for i := from; i < to; i++ {
		if l := v.lines[i]; l.unit >= 0 {
			windowW = max(windowW, width(v.c.window(v.units[l.unit].Window)))
		}
	}
	cols := []column{{w: 1}, {w: 6, right: true}, {w: nameW}, {w: min(windowW, max(23, w/2))}}
	head := []string{"", "HOLDS", "MODEL", "WINDOW"}
	wide := w >= 120
	if wide {
		// CHANGED is when the unit last changed: an age, or under t the
		// time, as wide as the toggle prints it.
		cols = append(cols, column{w: 10}, column{w: v.c.instantWidth()})
		head = append(head, "PIPELINE", "CHANGED")
	}
	cols = append(cols, column{w: 0})
	head = append(head, "DETAIL")
	lines := []string{t.Muted.Render(" " + row(w-1, cols, head...))}
	if len(v.idx) == 0 {
		lines = append(lines, t.Muted.Render("   "+emptyList("nothing is failed or blocked", "failed or blocked unit", v.queueLayout.query)))
	}
	for i := from; i < to; i++ {
		l := v.lines[i]
		c := v.groups[l.group]
		if l.unit < 0 {
			n := plural(len(c.units), "unit", "units")
			if c.total > len(c.units) && v.more() {
				// The queue's first pages hold only some of them.
				n = fmt.Sprintf("%d of %s", len(c.units), plural(c.total, "unit", "units"))
			}
			if c.holds > 0 {
				n += fmt.Sprintf(" · holds %d", c.holds)
			}
			lines = append(lines, " "+spread(t.Glyph(c.glyph())+" "+t.Title.Render(untrusted.Line(c.label(v.c.windows))), t.Muted.Render(" · "+n), w-1))
			continue
		}
		u := v.units[l.unit]
		glyph, note := themes.Blocked, ""
		switch {
		case u.Status == state.Failed:
			glyph, note = themes.Failed, t.Error.Render(untrusted.Line(gate.FirstLine(u.Error)))
		case c.kind == causeReady && gate.IsReleased(u.Reason):
			// A run re-judged it already: its stored reason says so.
			glyph, note = themes.Pending, t.Status(themes.Pending).Render("ready")+t.Muted.Render(" ("+untrusted.Line(gate.FirstLine(u.Reason))+")")
		case c.kind == causeReady && v.ready[unitRef{u.Model, u.Window}.key()]:
			// The live gate passes it. (A released root's group also lists
			// the units held behind the released ones, which are not.)
			glyph, note = themes.Pending, t.Status(themes.Pending).Render("ready")+t.Muted.Render(" (was: "+untrusted.Line(gate.FirstLine(u.Reason))+")")
		default:
			note = t.Muted.Render(untrusted.Line(v.otherReasons(u.Reason, c)))
		}
		cells := []string{t.Glyph(glyph), count(u.Holds), untrusted.Line(u.Model), v.c.window(u.Window)}
		if wide {
			cells = append(cells, t.Muted.Render(untrusted.Line(u.Pipeline)), t.Muted.Render(v.c.whenAt(u.UpdatedAt)))
		}
		cells = append(cells, note)
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	lines = pad(lines, w, h-1-len(detail))
	lines = append(lines, detail...)
	return append(lines, t.Muted.Render(v.foot()))
}

// otherReasons is what holds u back besides its group's cause: the other
// upstreams its reason names, "" when there are none.
func (v *blockedView) otherReasons(reason string, c cause) string {
	parts := gate.ReasonParts(reason)
	var others []string
	for i, p := range parts {
		if i == 0 && c.kind != causeOther {
			continue
		}
		if p.Upstream != "" {
			others = append(others, p.Upstream)
		}
	}
	if len(others) == 0 || c.kind == causeOther {
		return ""
	}
	return "also waits on " + strings.Join(others, ", ")
}

// detail is the selected unit's whole error or reason, wrapped under the
// list, with what its keys do to it.
func (v *blockedView) detail(w int) []string {
	u := v.selected()
	if u == nil {
		return nil
	}
	t := v.c.theme
	text, style := u.Reason, t.Muted
	label := "reason: "
	if u.Status == state.Failed {
		text, style, label = u.Error, t.Error, "error: "
	}
	if v.ready[unitRef{u.Model, u.Window}.key()] && u.Status == state.Blocked {
		label = "ready now · stored reason: "
	}
	text = label + untrusted.Text(strings.TrimSpace(text)) // before it is styled
	wrapped := strings.Split(ansi.Wrap(text, w-2, " /&?=:,;"), "\n")
	if len(wrapped) > blockedDetailLines {
		wrapped = wrapped[:blockedDetailLines]
		wrapped[blockedDetailLines-1] = clip(wrapped[blockedDetailLines-1]+" …", w-2)
	}
	out := []string{t.Border.Render(strings.Repeat("─", w))}
	for _, l := range wrapped {
		out = append(out, " "+style.Render(l))
	}
	return out
}

// foot counts the queue: "1 failed · 9 blocked (2 ready: R runs them) in 3
// causes".
func (v *blockedView) foot() string {
	failed, blocked := v.failed, v.blocked
	if v.stuck > 0 { // the whole queue's counts, not only the units read
		failed, blocked = v.failedAll, v.stuck-v.failedAll
	}
	foot := fmt.Sprintf(" %d failed · %d blocked", failed, blocked)
	if n := v.readyShown; n > 0 {
		foot += fmt.Sprintf(" (%d ready: R runs them)", n)
	}
	foot += " · " + plural(len(v.groups), "cause", "causes")
	if v.more() {
		foot += fmt.Sprintf(" · first %d read (the end reads more)", len(v.units))
	}
	if v.queueLayout.query != "" {
		foot += fmt.Sprintf(" · %d match %q", len(v.idx), v.queueLayout.query)
		if v.more() {
			foot += " among them"
		}
	}
	if v.queueLayout.query != v.query {
		foot += fmt.Sprintf(" · filtering %d units for %q…", len(v.units), v.query)
	}
	if v.recheckErr != nil {
		foot += " · recheck failed: " + oneLine(v.recheckErr.Error())
	}
	if hint := v.cur.scrollHint(); hint != "" {
		foot += " · " + hint
	}
	return foot
}
