package tui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/charmbracelet/x/ansi"
)

// incidentsView is what the person paged at 03:00 sees first: one card
// per root cause (`bollhav incidents`), failures first, then by what they
// hold, the selected card with its whole error. The UI opens on it when
// anything is failed, blocked or stale (landing); with nothing wrong it
// steps aside for the pipelines view.
type incidentsView struct {
	viewBase
	rep *gate.IncidentReport
	cur cursor
	// landing is the view the UI opened on by default: when its first load
	// finds nothing wrong it asks the app to show the pipelines instead.
	landing bool
	// firstLook is a glance read before the program (Options.FirstLook),
	// the first load's answer; nil once taken.
	firstLook *gate.IncidentReport
	// pinned is the root the operator is on: the card selected when a
	// traced report last found it, or the one the cursor was last moved
	// to. A reload looks for it, not for what sits at the cursor: while a
	// rerun goes on its root turns pending, "not loaded", even leaves the
	// report for a frame, and comes back failed, and the cursor must not
	// pass to whichever card took its place meanwhile.
	pinned *gate.Incident
}

func newIncidents(c *common) *incidentsView {
	return &incidentsView{viewBase: newBase(c)}
}

// viewIncidents is the root causes, key i.
const viewIncidents viewKind = "incidents"

// allClearMsg is the landing incidents view's first load finding nothing
// wrong: the app pops it and says so.
type allClearMsg struct{ view int }

func (v *incidentsView) kind() viewKind { return viewIncidents }
func (v *incidentsView) title() string  { return "Incidents" }

// load reads the report. The first load is a glance (engine.Glance): the
// failed roots and how many blocked units wait, in what the failures
// cost to read, so the screen has its errors in a fraction of a second on
// any platform; its answer asks at once for the traced report, which
// replaces it. Every later load is the traced report.
func (v *incidentsView) load(gen uint64, _ []string) tea.Cmd {
	if v.rep == nil {
		if fl := v.firstLook; fl != nil {
			v.firstLook = nil // read once, before the program: a reload reads anew
			return loadCmd(v.c, v.id, gen, func(context.Context) (*gate.IncidentReport, error) { return fl, nil })
		}
		return loadCmd(v.c, v.id, gen, v.c.eng.Glance)
	}
	return loadCmdWithin(v.c, v.id, gen, wholeLoadTimeout, v.c.eng.Incidents)
}

func (v *incidentsView) update(msg viewMsg) tea.Cmd {
	m, ok := msg.(loaded[*gate.IncidentReport])
	if !ok {
		return nil
	}
	wasGlance := v.rep != nil && v.rep.Glance
	sel := v.pinned
	if sel == nil || wasGlance || m.data.Glance {
		// A first look has no pin: its cursor is the selection.
		sel, v.pinned = v.selectedCopy(), nil
	}
	v.rep = m.data
	v.cur.setLen(len(v.rep.Incidents))
	switch at := v.find(sel, wasGlance); {
	case at >= 0:
		v.cur.moveTo(at)
		if !v.rep.Glance {
			v.pinned = v.selectedCopy()
		}
	case wasGlance:
		// The trace reorders everything and may have no card for the
		// root the first look had selected: its first card, not
		// whichever now sits at the old position.
		v.cur.moveTo(0)
		v.pinned = v.selectedCopy()
	case sel == nil && !v.rep.Glance:
		v.pinned = v.selectedCopy()
	}
	// Not found: the pin stays, and the cursor goes back to its root when
	// a later report has it again.
	if v.rep.Glance {
		// A first look only: trace now. Landing waits for the traced
		// report; a glance cannot tell all clear (retries, stale roots).
		v.ask(nil)
		return nil
	}
	if v.landing {
		v.landing = false
		if v.rep.AllClear() {
			v.c.send(allClearMsg{view: v.id})
		}
	}
	return nil
}

// find is where sel's root is in the report (-1: nowhere). Across a
// reload the selection stays on its root — its model and window —
// whatever its kind became: a failed hour rerun is "not loaded" while it
// runs and failed again after, and a released day is blocked again when
// its upstream fails once more. Of a model's cards, the one whose span
// overlaps sel's wins (the same kind first), then one of the same kind.
// From a first look it follows its model to the failed or gate-error
// card the trace makes of it, and only when the cursor was moved: the
// traced report opens on its own first card, the incident with holding
// the most.
func (v *incidentsView) find(sel *gate.Incident, fromGlance bool) int {
	if sel == nil || fromGlance && v.cur.pos == 0 {
		return -1
	}
	best, bestScore := -1, 0
	for i, inc := range v.rep.Incidents {
		if inc.Model != sel.Model {
			continue
		}
		if fromGlance {
			if inc.Kind == gate.IncidentFailed || inc.Kind == gate.IncidentGateError {
				return i
			}
			continue
		}
		score := 0
		if sameRootWindow(inc.Span, sel.Span) {
			score += 2
		}
		if inc.Kind == sel.Kind {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// sameRootWindow is whether two incidents' spans are of one root: they
// overlap, or both are a timeless model's (zero).
func sameRootWindow(a, b state.Window) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() && b.IsZero()
	}
	return a.Overlaps(b)
}

// selectedCopy is a copy of the selected incident, nil with none.
func (v *incidentsView) selectedCopy() *gate.Incident {
	if s := v.selected(); s != nil {
		c := *s
		return &c
	}
	return nil
}

// pin makes the selected card the root reloads keep the cursor on: the
// operator moved to it.
func (v *incidentsView) pin() {
	if v.rep != nil && !v.rep.Glance {
		v.pinned = v.selectedCopy()
	}
}

func (v *incidentsView) affected(changes []state.Change) (bool, []string) {
	return len(changedModels(v.c.eng.Env().Suffix, changes)) > 0, nil
}

func (v *incidentsView) selected() *gate.Incident {
	if v.rep != nil && v.cur.pos < len(v.rep.Incidents) {
		return &v.rep.Incidents[v.cur.pos]
	}
	return nil
}

func (v *incidentsView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		v.pin()
		return nil
	}
	inc := v.selected()
	if inc == nil {
		return nil
	}
	switch {
	case key.Matches(msg, v.c.keys.Enter) && inc.Focus.Model == "":
		// A glance's root past its detailed ones: no unit read yet to
		// explain, so its model.
		v.c.openModel(inc.Model)
	case key.Matches(msg, v.c.keys.Enter):
		v.c.openWhy(inc.Focus.Model, inc.Focus.Window.Since)
	case key.Matches(msg, v.c.keys.Model):
		v.c.openModel(inc.Model)
	case key.Matches(msg, v.c.keys.Detail):
		if inc.Units == 1 && inc.Focus.Model != "" {
			v.c.openUnit(inc.Model, inc.Span)
		} else {
			v.c.openModel(inc.Model)
		}
	case key.Matches(msg, v.c.keys.Yank) && inc.Focus.Model == "":
		// No unit read yet: a command without --at would name a timeless
		// model's unit.
		v.c.flash("its failed units are not read yet: wait for the trace", true)
	case key.Matches(msg, v.c.keys.Yank):
		return v.c.yank("the why command", v.c.whyCommand(inc.Focus.Model, inc.Focus.Window))
	case key.Matches(msg, v.c.keys.YankError):
		return v.c.yank("the error", inc.Detail)
	case key.Matches(msg, v.c.keys.RunWindow) && inc.Focus.Model == "":
		// Its span is not read yet: a run now would cover the whole model.
		v.c.flash("its failed units are not read yet: wait for the trace", true)
	case key.Matches(msg, v.c.keys.RunWindow):
		// The root's own units, in the mode that fixes its kind
		// (IncidentKind.Fix): a discover over its span re-runs the failed
		// (and blocked, pending) ones there and leaves the applied alone;
		// stale rows load again under a bulldozer of their span; outdated
		// ones are rebuilt.
		mode, outdated := inc.Kind.Fix()
		act := action{kind: actionRun, model: inc.Model, mode: mode, outdated: outdated}
		if !inc.Span.IsZero() && !outdated {
			act.window = windowPtr(inc.Span)
		}
		v.c.openAction(act)
	}
	return nil
}

func (v *incidentsView) wheel(msg tea.MouseWheelMsg) {
	if v.cur.handleWheel(msg) {
		v.pin()
	}
}

func (v *incidentsView) bindings() []key.Binding {
	k := v.c.keys
	return []key.Binding{saying(k.Enter, "why"), k.Detail, saying(k.Model, "open root model"), saying(k.RunWindow, "run root"), v.c.keys.Yank, v.c.keys.YankError, v.c.keys.NextProblem}
}

// incidentGlyph is the status glyph an incident kind is drawn with.
func incidentGlyph(k gate.IncidentKind) themes.Status {
	switch k {
	case gate.IncidentFailed, gate.IncidentGateError:
		return themes.Failed
	case gate.IncidentStale:
		return themes.Stale
	case gate.IncidentOutdated:
		return themes.Outdated
	case gate.IncidentMissing:
		return themes.Missing
	case gate.IncidentReleased:
		return themes.Pending
	}
	return themes.Blocked
}

// detailLines is how many lines the selected card's detail may wrap to;
// the others get one.
const detailLines = 4

// card draws one incident: its title, its detail (wrapped when selected),
// its retry, and what waits on it.
func (v *incidentsView) card(inc gate.Incident, selected bool, w int) []string {
	t := v.c.theme
	now := v.rep.Now
	title := t.Glyph(incidentGlyph(inc.Kind)) + " " + t.Accent.Render(untrusted.Line(inc.Model)) + " " +
		t.Status(incidentGlyph(inc.Kind)).Render(inc.Kind.Word())
	if !inc.Span.IsZero() {
		title += " " + v.c.window(inc.Span)
	}
	if inc.Units > 1 {
		title += t.Muted.Render(fmt.Sprintf(" (%d units)", inc.Units))
	}
	var right string
	switch {
	case inc.Since.IsZero():
	case v.c.times.absolute:
		// Under t, when it began: every time on screen is absolute.
		right = " " + t.Muted.Render("since "+absText(inc.Since, v.c.instantLoc()))
	default:
		right = " " + t.Muted.Render("for "+state.RoughDuration(now.Sub(inc.Since)))
	}
	lines := []string{spread(title, right, w-1)}
	indent := "    "
	if inc.Detail != "" {
		d := untrusted.Text(inc.Detail) // before it is styled: an SGR of its own would survive safeFrame
		if selected {
			wrapped := strings.Split(ansi.Wrap(d, w-1-len(indent), " /&?=:,"), "\n")
			if len(wrapped) > detailLines {
				wrapped = wrapped[:detailLines]
				wrapped[detailLines-1] = clip(wrapped[detailLines-1]+" …", w-1-len(indent))
			}
			for _, l := range wrapped {
				lines = append(lines, indent+t.Error.Render(l))
			}
		} else {
			lines = append(lines, indent+t.Muted.Render(clip(gate.FirstLine(d), w-1-len(indent))))
		}
	}
	var behind string
	switch {
	case v.rep.Glance:
		behind = "what waits on it: tracing…"
	default:
		behind = untrusted.Line(inc.HoldsText())
	}
	if inc.Retry != nil {
		// A line of its own: beside the blocked models it is cut first.
		retry := inc.Retry.Line(v.c.clockShort) + " (" + durationText(inc.Retry.At.Sub(now)) + ")"
		lines = append(lines, indent+t.Status(themes.Pending).Render(clip(retry, w-1-len(indent))))
	}
	lines = append(lines, indent+t.Muted.Render(clip(behind, w-1-len(indent))))
	return lines
}

func (v *incidentsView) render(w, h int) []string {
	if !v.loaded || v.rep == nil {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	if len(v.rep.Incidents) == 0 && v.rep.Glance {
		msg := " " + glanceText(v.rep)
		if v.err != nil {
			msg = " first look · the trace failed: " + oneLine(v.err.Error())
		}
		return pad([]string{msg}, w, h)
	}
	if len(v.rep.Incidents) == 0 {
		msg := " " + t.Glyph(themes.Applied) + " all clear: nothing failed, blocked or stale"
		switch {
		case v.rep.Untraced > 0:
			msg = fmt.Sprintf(" %s blocked units not traced: see the blocked view (2)", count(v.rep.Untraced))
		case !v.rep.AllClear() && v.rep.Recheck != nil:
			// Held with no incident to name: an alert that did not fire,
			// units re-queued behind an upstream not loaded.
			msg = " no incident, but " + plural(v.rep.Recheck.Held(), "unit is", "units are") + " held (not applied, and would not run if asked now): bollhav blocked --recheck"
		}
		return pad([]string{msg}, w, h)
	}
	// Cards have different heights: draw from the first card that keeps
	// the selected one on screen. Only the cards on screen are drawn: a
	// platform with thousands of failed roots would otherwise style every
	// card on every frame (140 ms at ten million units).
	cards := make([][]string, len(v.rep.Incidents))
	card := func(i int) []string {
		if cards[i] == nil {
			cards[i] = v.card(v.rep.Incidents[i], i == v.cur.pos, w)
		}
		return cards[i]
	}
	body := max(1, h-1)
	v.cur.setHeight(max(1, body/3))
	from, used := v.cur.pos, len(card(v.cur.pos))
	for from > 0 && used+len(card(from-1)) <= body {
		from--
		used += len(cards[from])
	}
	var lines []string
	for i := from; i < len(cards) && len(lines) < body; i++ {
		for j, l := range card(i) {
			mark := " "
			if i == v.cur.pos && j == 0 {
				mark = t.Selected.Render("›")
			}
			lines = append(lines, fit(mark+l, w))
		}
	}
	lines = pad(lines, w, body)
	foot := fmt.Sprintf(" %s · failures first, then by what they hold", plural(len(v.rep.Incidents), "incident", "incidents"))
	if v.rep.Glance {
		foot = " " + glanceText(v.rep)
		if v.err != nil {
			// The trace failed with the store answering: say so, under
			// the first look, until the next change tries again.
			foot = " first look · the trace failed: " + oneLine(v.err.Error())
		}
	}
	if v.rep.Untraced > 0 {
		foot += fmt.Sprintf(" · %s blocked units not traced", count(v.rep.Untraced))
	}
	if from > 0 {
		foot += fmt.Sprintf(" · %d above", from)
	}
	return append(lines, t.Muted.Render(foot))
}

// glanceText is what a glance says it is: a first look, its failed roots,
// and what the trace still owes.
func glanceText(rep *gate.IncidentReport) string {
	text := "first look: " + plural(len(rep.Incidents), "failed root", "failed roots")
	if rep.Tracing > 0 {
		return text + fmt.Sprintf(" · tracing %s in %s…", plural(rep.Tracing, "blocked unit", "blocked units"),
			plural(rep.TracingModels, "model", "models"))
	}
	return text + " · checking retries and gates…"
}
