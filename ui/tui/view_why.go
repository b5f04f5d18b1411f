package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// whyView explains one unit as `bollhav why` does: each gated upstream's
// verdict with its missing ranges and ages, the root-cause chain and the
// unblock frontier. The cursor moves over the units it names; enter explains
// the one under it, b jumps straight to the blocking upstream's window.
type whyView struct {
	viewBase
	model string
	at    time.Time
	r     *gate.WhyReport

	items  []whyItem
	sel    []int // indices of items with a target
	cur    cursor
	offset int // first item line on screen
	placed bool
	// builtW is the width the items were wrapped to: the errors are
	// wrapped whole, so a resize builds them again.
	builtW int
	// builtTimes is the time toggle the items were written with.
	builtTimes timeMode
}

// whyItem is one line of the report; target is the unit it names, if any.
type whyItem struct {
	kind   whyItemKind
	text   string // heading, text
	up     *gate.UpstreamReport
	link   *gate.ChainLink
	root   bool
	wrap   bool // the link's detail is on the lines under it
	front  *frontierGroup
	target *whyTarget
}

type whyItemKind int

const (
	whyText whyItemKind = iota
	whyHeading
	whyUpHeader
	whyUpstream
	whyLink
	whyFrontHeader
	whyFrontier
)

// whyTarget is a unit a line of the report points at.
type whyTarget struct {
	model  string
	window state.Window
}

// frontierGroup is consecutive frontier windows of one upstream alike in
// status and releases: a WHOLE gap can be hundreds of windows.
type frontierGroup struct {
	f      gate.FrontierWindow
	window state.Window
	n      int
}

func newWhy(c *common, model string, at time.Time) *whyView {
	return &whyView{viewBase: newBase(c), model: model, at: at}
}

// viewWhy explains one unit.
const viewWhy viewKind = "why"

func (v *whyView) kind() viewKind { return viewWhy }

func (v *whyView) title() string {
	if v.r != nil {
		if v.r.Temporality == spec.Timeless {
			return "why " + v.model
		}
		return "why " + v.model + " " + v.c.window(v.r.Window)
	}
	if v.at.IsZero() {
		return "why " + v.model
	}
	return "why " + v.model + " @" + zoned(v.at, v.c.instantLoc(), "2006-01-02 15:04")
}

// crumb is the title under the view below: "why 2026-01-01" under its
// own model, not the model again.
func (v *whyView) crumb(below view) string {
	title := v.title()
	if mv, ok := below.(*modelView); ok && mv.name == v.model {
		title = strings.Replace(title, "why "+v.model+" ", "why ", 1)
	}
	return title
}

// load explains the unit at v.at; with no time (:why MODEL), the model's
// failed or blocked unit that holds the most (worstUnitAt), which the view
// then keeps to (apply).
func (v *whyView) load(gen uint64, _ []string) tea.Cmd {
	e, model, at := v.c.eng, v.model, v.at
	return loadCmd(v.c, v.id, gen, func(ctx context.Context) (*gate.WhyReport, error) {
		if at.IsZero() {
			picked, err := worstUnitAt(ctx, e, model)
			if err != nil {
				return nil, err
			}
			at = picked
		}
		return e.Why(ctx, model, at)
	})
}

// affected: a unit's explanation can change with any model upstream of it,
// so any change in the environment reloads it (Why reads only what the
// lineage needs).
func (v *whyView) affected(changes []state.Change) (bool, []string) {
	return len(changedModels(v.c.eng.Env().Suffix, changes)) > 0, nil
}

func (v *whyView) update(msg viewMsg) tea.Cmd {
	if m, ok := msg.(loaded[*gate.WhyReport]); ok {
		v.apply(m.data)
	}
	return nil
}

// apply takes the report, keeping the cursor on the unit it was on.
func (v *whyView) apply(r *gate.WhyReport) {
	var keep *whyTarget
	if v.placed && v.cur.pos < len(v.sel) {
		keep = v.items[v.sel[v.cur.pos]].target
	}
	v.r = r
	if v.at.IsZero() && r.Temporality == spec.Temporal {
		v.at = r.Window.Since // the unit picked stays explained on reloads
	}
	v.build(v.c.width)
	v.cur.setLen(len(v.sel))
	switch {
	case keep != nil:
		for i, ix := range v.sel {
			if t := v.items[ix].target; t.model == keep.model && t.window.Equal(keep.window) {
				v.cur.moveTo(i)
				break
			}
		}
	case !v.placed:
		// Start on the blocking upstream: the next link of the chain.
		for i, ix := range v.sel {
			if v.items[ix].kind == whyLink {
				v.cur.moveTo(i)
				break
			}
		}
	}
	v.placed = true
}

func (v *whyView) build(cells int) {
	r := v.r
	v.items, v.sel, v.builtW, v.builtTimes = nil, nil, cells, v.c.times
	// wrapped adds s in full, wrapped under indent: an error is read whole.
	wrapped := func(indent, s string) {
		for _, l := range wrapLines(s, cells-len(indent)-1) {
			v.items = append(v.items, whyItem{kind: whyText, text: indent + l})
		}
	}
	add := func(it whyItem) {
		if it.target != nil {
			v.sel = append(v.sel, len(v.items))
		}
		v.items = append(v.items, it)
	}
	text := func(s string) { add(whyItem{kind: whyText, text: s}) }
	t := v.c.theme

	shape := spec.ShapeText(r.Temporality, r.Flexibility, r.Interval.String())
	text(" " + t.Glyph(unitStatus(r.Status)) + " " + t.Accent.Render(r.Model) + " " + v.c.window(r.Window) + "  " + statusLabel(t, r.Status))
	meta := fmt.Sprintf("pipeline %s · %s · evaluated at %s", r.Pipeline, shape, v.c.absAt(r.Now))
	if r.Attempts > 0 {
		meta += fmt.Sprintf(" · attempts %d", r.Attempts)
	}
	text("   " + t.Muted.Render(meta))
	if !r.Registered {
		text("   " + t.Error.Render("not registered yet (bollhav apply)"))
	}
	if r.AppliedAt != nil {
		text("   applied " + v.c.when(r.AppliedAt))
	}
	if r.Retry != nil {
		text("   " + t.Accent.Render(r.Retry.Line(v.c.absAt)) +
			t.Muted.Render(" ("+ageText(r.Now, &r.Retry.At)+")"))
	}
	if r.Error != "" {
		if line := "   " + t.Error.Render("error: ") + untrusted.Line(r.Error); !strings.Contains(r.Error, "\n") && width(line) < cells {
			text(line)
		} else {
			text("   " + t.Error.Render("error:"))
			wrapped("     ", r.Error)
		}
	}
	v.earlierFailures(text)
	if r.BlockedReason != "" {
		text("   " + t.Muted.Render("blocked_reason: ") + oneLine(r.BlockedReason))
	}
	switch line := r.GateLine(); {
	case line == "":
	case r.Satisfied:
		text("   " + t.Status(themes.Applied).Render(line))
	default:
		text("   " + t.Muted.Render(line))
	}
	if len(r.After) > 0 {
		add(whyItem{kind: whyHeading, text: "After"})
		for _, a := range r.After {
			verdict := t.Status(themes.Blocked).Render("held")
			if a.Satisfied {
				verdict = t.Status(themes.Applied).Render("satisfied")
			}
			text("   " + untrusted.Line(a.Upstream) + " " + t.Muted.Render("after "+a.Edge.String()) + "  " + verdict + "  " + t.Muted.Render(oneLine(a.Detail())))
		}
	}

	if len(r.Upstreams) > 0 {
		add(whyItem{kind: whyHeading, text: "Upstreams"})
		add(whyItem{kind: whyUpHeader})
		for i := range r.Upstreams {
			u := &r.Upstreams[i]
			it := whyItem{kind: whyUpstream, up: u}
			if !u.Satisfied && !u.Skipped && u.Err == nil {
				w := r.Window
				if len(u.Missing) > 0 {
					w = u.Missing[0]
				} else if len(u.Outdated) > 0 {
					w = u.Outdated[0]
				}
				it.target = &whyTarget{model: u.Upstream, window: w}
			}
			add(it)
		}
	}

	add(whyItem{kind: whyHeading, text: "Root cause"})
	for i := range r.RootCause {
		l := &r.RootCause[i]
		it := whyItem{kind: whyLink, link: l, root: i == len(r.RootCause)-1 && i > 0}
		if i > 0 {
			it.target = &whyTarget{model: l.Model, window: l.Window}
			if it.root && l.Detail != "" && (strings.Contains(l.Detail, "\n") || width(v.linkLine(l, true))+2+width(l.Detail) >= cells) {
				it.wrap = true
				// The root cause's error, whole: it is what the engineer
				// came for ("… the payment provider is down").
				add(it)
				wrapped("       ", l.Detail)
				continue
			}
		} else {
			it.kind = whyText
			it.text = "   " + t.Accent.Render(l.Model) + " " + v.c.window(l.Window) + "  " + statusLabel(t, l.Status)
			if i == len(r.RootCause)-1 && r.Status != state.Applied && len(r.Upstreams) > 0 && !r.Satisfied {
				it.text += t.Muted.Render("  (nothing upstream to name)")
			}
		}
		add(it)
	}

	if len(r.Roots) > 1 {
		add(whyItem{kind: whyHeading, text: fmt.Sprintf("Held by %d roots", len(r.Roots))})
		for i := range r.Roots {
			l := &r.Roots[i]
			add(whyItem{kind: whyLink, link: l, target: &whyTarget{model: l.Model, window: l.Window}})
		}
	}

	add(whyItem{kind: whyHeading, text: "Unblock frontier"})
	if len(r.Frontier) == 0 {
		text("   " + t.Muted.Render("nothing upstream to apply"))
		return
	}
	add(whyItem{kind: whyFrontHeader})
	var groups []*frontierGroup
	for _, f := range r.Frontier {
		if n := len(groups); n > 0 {
			g := groups[n-1]
			if g.f.Model == f.Model && g.f.Status == f.Status && g.f.Stale == f.Stale && g.f.Releases == f.Releases &&
				!g.window.Until.IsZero() && g.window.Until.Equal(f.Window.Since) {
				g.window.Until = f.Window.Until
				g.n++
				continue
			}
		}
		groups = append(groups, &frontierGroup{f: f, window: f.Window, n: 1})
	}
	for _, g := range groups {
		add(whyItem{kind: whyFrontier, front: g, target: &whyTarget{model: g.f.Model, window: g.f.Window}})
	}
	if r.FrontierMore > 0 {
		text(t.Muted.Render(fmt.Sprintf("   … and about %d more", r.FrontierMore)))
	}
}

// whyEarlierShown bounds the earlier attempts the view lists; `bollhav why`
// lists every one the store keeps.
const whyEarlierShown = 5

// earlierFailures lists the unit's earlier failed attempts, newest first,
// each with its time and run: the ones before the failure whose error the
// view already shows.
func (v *whyView) earlierFailures(text func(string)) {
	r, t := v.r, v.c.theme
	earlier := state.EarlierFailures(state.Unit{Status: r.Status, Error: r.Error, NotBefore: r.NotBefore}, r.Failures)
	if len(earlier) == 0 {
		return
	}
	text("   " + t.Muted.Render("earlier attempts, newest first:"))
	for i, a := range earlier {
		if i == whyEarlierShown {
			text("     " + t.Muted.Render(fmt.Sprintf("… %d more (bollhav why)", len(earlier)-i)))
			break
		}
		run := ""
		if a.RunID != 0 {
			run = fmt.Sprintf(" run %d", a.RunID)
		}
		text("     " + t.Muted.Render(a.Label()+" · "+v.c.whenAt(a.At)+run+": ") + oneLine(a.Error))
	}
}

func (v *whyView) selectedTarget() *whyTarget {
	if v.cur.pos < len(v.sel) {
		return v.items[v.sel[v.cur.pos]].target
	}
	return nil
}

// at is the time to explain a target's unit at: its window's start (zero
// for a timeless model, which Why ignores).
func (t *whyTarget) at() time.Time { return t.window.Since }

func (v *whyView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		return nil
	}
	tgt := v.selectedTarget()
	switch {
	case key.Matches(msg, v.c.keys.Enter):
		if tgt != nil {
			v.c.openWhy(tgt.model, tgt.at())
			return nil
		}
	case key.Matches(msg, v.c.keys.Blocking):
		if v.r != nil && len(v.r.RootCause) > 1 {
			l := v.r.RootCause[1]
			v.c.openWhy(l.Model, l.Window.Since)
			return nil
		}
		v.c.flash("nothing upstream holds this unit back", false)
		return nil
	case key.Matches(msg, v.c.keys.Model):
		if tgt != nil {
			v.c.openModel(tgt.model)
			return nil
		}
		v.c.openModel(v.model)
		return nil
	case key.Matches(msg, v.c.keys.Detail):
		if t := v.actionTarget(); t != nil {
			v.c.openUnit(t.model, t.window)
			return nil
		}
	case key.Matches(msg, v.c.keys.Yank):
		if t := v.actionTarget(); t != nil {
			return v.c.yank("the why command", v.c.whyCommand(t.model, t.window))
		}
	case key.Matches(msg, v.c.keys.YankError):
		// The error the screen is about: the root cause's, else the
		// explained unit's own.
		if v.r != nil {
			if n := len(v.r.RootCause); n > 1 && v.r.RootCause[n-1].Detail != "" {
				return v.c.yank("the root cause's error", v.r.RootCause[n-1].Detail)
			}
			return v.c.yank("the error", v.r.Error)
		}
	case key.Matches(msg, v.c.keys.unitKeys()...):
		if t := v.actionTarget(); t != nil {
			v.c.openAction(v.c.keys.unitAction(msg, t.model, t.window))
			return nil
		}
	}
	return nil
}

// actionTarget is what r, a and p act on: the unit under the cursor, else
// the explained unit itself.
func (v *whyView) actionTarget() *whyTarget {
	if t := v.selectedTarget(); t != nil {
		return t
	}
	if v.r != nil {
		return &whyTarget{model: v.r.Model, window: v.r.Window}
	}
	return nil
}

func (v *whyView) wheel(msg tea.MouseWheelMsg) {
	v.offset = wheelOffset(msg, v.offset, max(0, len(v.items)-1))
}

func (v *whyView) bindings() []key.Binding {
	k := v.c.keys
	return []key.Binding{saying(k.Enter, "why of selected"), k.Detail, k.Blocking, k.Model, saying(k.RunWindow, "run selected window"),
		k.MarkApplied, k.MarkPending, k.Yank, k.YankError}
}

func (v *whyView) render(w, h int) []string {
	if !v.loaded || v.r == nil {
		return loadingLines(&v.viewBase, w, h)
	}
	if w != v.builtW || v.c.times != v.builtTimes {
		// The selectable items do not change with the width or the
		// time toggle, so the cursor keeps its place.
		v.build(w)
	}
	t := v.c.theme
	ageW := 9 // NEWEST, OLDEST: an age ("2d1h ago"), or under t the time
	if v.c.times.absolute {
		ageW = v.c.instantWidth()
	}
	upCols := []column{{w: 2}, {w: min(28, max(12, w/4))}, {w: 12}, {w: 10}, {w: ageW}, {w: ageW}, {w: 0}}
	frCols := []column{{w: 2}, {w: min(28, max(12, w/4))}, {w: 26}, {w: 20}, {w: 0}}
	narrow := w < 100
	if narrow {
		// The detail goes on a line of its own under the verdict.
		upCols = []column{{w: 2}, {w: min(24, max(12, w/4))}, {w: 12}, {w: 10}, {w: 0}}
	}
	selLine := -1
	if v.cur.pos < len(v.sel) {
		selLine = v.sel[v.cur.pos]
	}
	// Keep the selected line on screen (narrow, each upstream takes two).
	page := h
	if narrow {
		page = max(1, h-len(v.r.Upstreams))
	}
	if selLine >= 0 {
		if selLine < v.offset {
			v.offset = max(0, selLine-1)
		}
		if selLine >= v.offset+page {
			v.offset = selLine - page + 1
		}
	}
	v.offset = min(v.offset, max(0, len(v.items)-page))
	lines := make([]string, 0, h)
	for i := v.offset; i < len(v.items) && len(lines) < h; i++ {
		it := v.items[i]
		var line string
		switch it.kind {
		case whyText:
			line = it.text
		case whyHeading:
			line = " " + t.Title.Render(it.text)
		case whyUpHeader:
			if narrow {
				line = t.Muted.Render(row(w, upCols, "", "UPSTREAM", "CONTRACT", "VERDICT", "NEWEST"))
			} else {
				line = t.Muted.Render(row(w, upCols, "", "UPSTREAM", "CONTRACT", "VERDICT", "NEWEST", "OLDEST", "MISSING / DETAIL"))
			}
		case whyUpstream:
			u := it.up
			verdict, detail := upstreamVerdict(u, v.c.windows)
			cells := []string{"", u.Upstream, u.Level.String(), t.Label(verdict), t.Muted.Render(v.ageCell(u.NewestAge))}
			if narrow {
				line = row(w, upCols, cells...)
				if i == selLine {
					line = listLine(t, true, ansiCut(line, 1), w)
				}
				lines = append(lines, fit(line, w))
				if len(lines) < h {
					lines = append(lines, fit("     "+t.Muted.Render(detail), w))
				}
				continue
			}
			cells = append(cells, t.Muted.Render(v.ageCell(u.OldestAge)), detail)
			line = row(w, upCols, cells...)
		case whyLink:
			line = v.linkLine(it.link, false)
			if it.link.Detail != "" && !it.wrap {
				line += t.Muted.Render(": " + oneLine(it.link.Detail))
			}
			if it.root {
				line += "  " + t.Error.Render("← root cause")
			}
		case whyFrontHeader:
			line = t.Muted.Render(row(w, frCols, "", "MODEL", "WINDOW", "STATUS", "RELEASES"))
		case whyFrontier:
			g := it.front
			status := statusLabel(t, g.f.Status)
			if g.f.Stale {
				status = t.Label(themes.Stale) + t.Muted.Render(" re-apply")
			}
			rel := count(g.f.Releases)
			if g.n > 1 {
				rel += fmt.Sprintf(" each (%d windows)", g.n)
			}
			line = row(w, frCols, "", untrusted.Line(g.f.Model), v.c.window(g.window), status, rel)
		}
		if i == selLine {
			line = listLine(t, true, ansiCut(line, 1), w)
		}
		lines = append(lines, fit(line, w))
	}
	return pad(lines, w, h)
}

// linkLine is a link of the root-cause chain without its detail.
func (v *whyView) linkLine(l *gate.ChainLink, root bool) string {
	t := v.c.theme
	status := statusLabel(t, l.Status)
	if l.Stale {
		status = t.Label(themes.Stale)
	}
	line := "   → " + t.Accent.Render(untrusted.Line(l.Model)) + " " + v.c.window(l.Window) + "  " + status
	if root {
		line += "  ← root cause"
	}
	return line
}

// upstreamVerdict is an upstream's verdict as a status, and the detail to
// show: its missing ranges (printed by windows), its freshness, its hard
// error.
func upstreamVerdict(u *gate.UpstreamReport, windows func(ws []state.Window) string) (themes.Status, string) {
	switch {
	case u.Skipped:
		return themes.Applied, "deactivate_for_dev: trusted, not gated"
	case u.Err != nil:
		return themes.Failed, "gate error: " + oneLine(u.Err.Error())
	case u.Satisfied:
		return themes.Applied, "satisfied"
	case u.Stale:
		d := "stale"
		if u.Freshness != nil {
			d += ": older than " + gate.FormatWithin(u.Freshness.Within) + " (" + u.Freshness.Scope.String() + ")"
		}
		return themes.Stale, d
	}
	switch {
	case len(u.Missing) > 0:
		return themes.Blocked, "missing " + windows(u.Missing)
	case len(u.Outdated) > 0:
		return themes.Outdated, gate.OutdatedText + ": " + windows(u.Outdated)
	}
	return themes.Blocked, oneLine(u.Reason)
}

// ageCell is an age at the report's clock as the time toggle says: "2d1h
// ago", or under t the time it was ("2026-01-01 05:00Z"); "-" for none.
func (v *whyView) ageCell(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	if !v.c.times.absolute {
		return durationText(*d)
	}
	return absText(v.r.Now.Add(-*d), v.c.instantLoc())
}
