package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/danger"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/charmbracelet/x/ansi"
)

// dialog confirms an action. It shows what the engine says the action
// would do first (the plan of a run, the units a mark moves), and confirms
// like it means it: the focus starts on Cancel, Enter presses the focused
// button, an action that destroys state (a torch: its danger level) needs
// the model's name typed, and nothing can be confirmed before the plan is
// in.
type dialog struct {
	id       int
	gen      uint64
	action   action
	plan     *engine.Plan
	preview  *markPreview
	releases int
	err      error
	loading  bool
	// confirm is true when the confirm button has the focus.
	confirm bool
	input   lineInput
	notice  string
}

func newDialog(a *App, act action) *dialog {
	return &dialog{id: a.newID(), action: act, input: lineInput{prompt: "> "}}
}

// typed reports whether the action is confirmed by typing the model's
// name (a torch run), as its danger level has it.
func (d *dialog) typed() bool { return d.action.danger().Typed() }

// replan asks the engine for the action's plan.
func (d *dialog) replan(a *App) tea.Cmd {
	d.gen++
	d.loading, d.plan, d.preview, d.err, d.notice, d.releases = true, nil, nil, nil, "", 0
	d.input.SetValue("")
	return loadPlan(a.ctx, a.eng, d.id, d.gen, d.action)
}

func (d *dialog) applyPlan(msg planMsg) {
	if msg.dialog != d.id || msg.gen != d.gen {
		return
	}
	d.loading = false
	d.plan, d.preview, d.err, d.releases = msg.plan, msg.preview, msg.err, msg.releases
}

func (d *dialog) ready() bool { return !d.loading && d.err == nil }

// nothing is why the plan runs no unit (engine.Plan.NothingToRun), "" when
// it runs some or is not in: such a plan is shown, and nothing offered to
// confirm.
func (d *dialog) nothing() string {
	if d.loading || d.plan == nil {
		return ""
	}
	return d.plan.NothingToRun()
}

// runnable reports whether the action can be confirmed now: its plan is in
// and does something.
func (d *dialog) runnable() bool { return d.ready() && d.nothing() == "" }

func (d *dialog) key(a *App, msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, keyCancel):
		return a.closeDialog()
	case d.choosable() && !d.action.outdated && (key.Matches(msg, keyNextMode) || key.Matches(msg, keyPrevMode)):
		step := 1
		if key.Matches(msg, keyPrevMode) {
			step = len(modes) - 1
		}
		for i, m := range modes {
			if m == d.action.mode {
				// The mode alone: "with downstream" is a choice of its own.
				d.action.mode = modes[(i+step)%len(modes)]
				break
			}
		}
		d.confirm = false
		return d.replan(a)
	case d.downstreamable() && key.Matches(msg, keyDownstream):
		d.action.downstream = !d.action.downstream
		d.confirm = false
		return d.replan(a)
	}
	if d.typed() {
		if key.Matches(msg, keyConfirm) {
			switch typed := strings.TrimSpace(d.input.Value()); {
			case !d.ready():
				d.notice = "wait for the plan"
			case typed == "":
				d.notice = "type " + d.action.name() + " to confirm the torch, esc to cancel"
			case typed != d.action.name():
				d.notice = fmt.Sprintf("%q is not %s: nothing was done", typed, d.action.name())
			default:
				return a.confirmAction(d.action)
			}
			return nil
		}
		if d.input.update(msg) {
			d.notice = ""
		}
		return nil
	}
	switch {
	case key.Matches(msg, keyYes):
		switch {
		case d.runnable():
			return a.confirmAction(d.action)
		case d.ready():
			d.notice = "nothing to run" + d.otherMode()
		default:
			d.notice = "wait for the plan"
		}
	case key.Matches(msg, keyNo):
		return a.closeDialog()
	case key.Matches(msg, keyButtonLeft):
		d.confirm = false
	case key.Matches(msg, keyButtonRight):
		d.confirm = d.runnable()
	case key.Matches(msg, keyConfirm):
		if !d.confirm {
			return a.closeDialog()
		}
		if d.runnable() {
			return a.confirmAction(d.action)
		}
	}
	return nil
}

func (d *dialog) updateInput(msg tea.Msg) tea.Cmd {
	if d.typed() {
		d.input.update(msg)
	}
	return nil
}

// choosable reports whether the dialog offers "with downstream" and (but
// for a rebuild of outdated windows, always a bulldozer) a STATE_MODE: a
// run of a model or a pipeline, not the batch of ready units, which is a
// discover of exactly their windows.
func (d *dialog) choosable() bool { return d.action.kind == actionRun && len(d.action.batch) == 0 }

// downstreamable reports whether d toggles "with downstream": a run of a
// model or a pipeline but a torch, and the batch of ready units, whose
// runs then go on to what they release.
func (d *dialog) downstreamable() bool {
	return d.choosable() && !d.typed() || d.action.kind == actionRun && len(d.action.batch) > 0
}

func (d *dialog) help() helpKeys {
	var ks []key.Binding
	if d.choosable() && !d.action.outdated {
		ks = append(ks, keyNextMode)
	}
	if d.downstreamable() {
		ks = append(ks, keyDownstream)
	}
	if d.typed() {
		confirm := keyConfirm
		confirm.SetHelp("enter", "torch (name typed)")
		ks = append(ks, confirm)
	} else {
		ks = append(ks, keyYes, keyButtonLeft, keyConfirm)
	}
	return helpKeys{short: append(ks, keyCancel)}
}

// otherMode is what a plan with nothing to run may try instead: another
// mode, when the dialog offers one.
func (d *dialog) otherMode() string {
	if d.choosable() && !d.action.outdated {
		return ": tab for another mode, esc to cancel"
	}
	return ": esc to cancel"
}

// verb is the confirm button's word.
func (d *dialog) verb() string {
	if d.action.kind == actionMark {
		return "Mark " + string(d.action.status)
	}
	if d.action.mode == spec.Torch {
		return "Torch"
	}
	return "Run"
}

// render draws the dialog over behind, the view it acts on, which stays
// on screen dimmed (its styles removed, drawn muted) so the rows the
// action is about are still there to read.
func (d *dialog) render(a *App, w, h int, behind []string) []string {
	t := a.theme
	// Up to 96 columns wide, centred; on a terminal too narrow for that
	// and a margin each side, the whole width: a margin of one column
	// would leave the view behind showing through at the edges.
	boxW := min(w, 96)
	if w-2 >= 96 {
		boxW = 96
	}
	inner := boxW - 4
	var lines []string
	add := func(s string) { lines = append(lines, fit(s, inner)) }
	// wrap adds s over as many lines as it needs, its continuations
	// indented: a title or a plan row is read whole, never cut.
	wrap := func(s string, indent int) {
		first := strings.Split(ansi.Wrap(s, inner, " "), "\n")
		add(first[0])
		if rest := strings.Join(first[1:], " "); rest != "" {
			for _, l := range strings.Split(ansi.Wrap(rest, inner-indent, " "), "\n") {
				add(strings.Repeat(" ", indent) + l)
			}
		}
	}
	act := d.action
	env := a.eng.Env().String()
	switch {
	case act.kind == actionRun && len(act.batch) > 0:
		wrap(t.Accent.Render("Run "+act.target(a.window))+" in"+envLabel(a), 2)
		add("STATE_MODE " + t.Selected.Render("[discover]") + t.Muted.Render(" of each ready unit's window: "+plural(len(act.batch), "run", "runs")))
		add(t.Muted.Render("their gate passes now; each run claims exactly those windows"))
		if act.downstream {
			add(t.Selected.Render("[d] and downstream: on") + t.Muted.Render(" · then what each run releases, in turn"))
		} else {
			add(t.Muted.Render("[d] and downstream: off · what they release waits for the next R"))
		}
	case act.kind == actionRun && act.outdated:
		wrap(t.Accent.Render("Rebuild "+act.target(a.window))+" in"+envLabel(a), 2)
		down := t.Muted.Render("[d] with the windows built on them: off")
		if act.downstream {
			down = t.Selected.Render("[d] with the windows built on them: on")
		}
		add("STATE_MODE " + t.Selected.Render("[bulldozer]") + " " + down)
		add(t.Muted.Render("bulldozer of the applied windows built under an earlier definition"))
	case act.kind == actionRun:
		wrap(t.Accent.Render("Run "+act.target(a.window))+" in"+envLabel(a), 2)
		var ms []string
		for _, m := range modes {
			if m == act.mode {
				ms = append(ms, t.Selected.Render("["+string(m)+"]"))
			} else {
				ms = append(ms, t.Muted.Render(" "+string(m)+" "))
			}
		}
		down := t.Muted.Render(" [d] with downstream: off")
		switch {
		case d.typed() && act.downstream:
			// d is a letter of the name typed here: the choice shows,
			// and changes in another mode.
			down = " " + t.Selected.Render("with downstream: on")
		case d.typed():
			down = ""
		case act.downstream:
			down = " " + t.Selected.Render("[d] with downstream: on")
		}
		add("STATE_MODE " + strings.Join(ms, " ") + down)
		switch {
		case act.closure():
			add(t.Muted.Render("discover of it and all downstream: failed, blocked and pending units"))
		case act.downstream:
			wrap(t.Muted.Render(modeHelp(act.mode, act.window != nil)), 2)
			add(t.Muted.Render("then what it releases downstream runs, in turn (discover)"))
		default:
			wrap(t.Muted.Render(modeHelp(act.mode, act.window != nil)), 2)
		}
	case act.kind == actionMark:
		wrap(t.Accent.Render("Mark "+act.target(a.window)+" "+string(act.status))+" in"+envLabel(a), 2)
		add(t.Muted.Render("operator repair, recorded in the audit log; running units are left alone"))
	}
	add("")
	switch {
	case d.loading:
		add(t.Muted.Render("working out the plan…"))
	case d.err != nil:
		add(t.Error.Render("refused: "))
		for _, l := range strings.Split(untrusted.Text(d.err.Error()), "\n") {
			add("  " + l)
		}
	case d.preview != nil:
		p := d.preview
		if p.total == 0 {
			add(t.Muted.Render("no unit in the window would change"))
		} else {
			var parts []string
			for _, s := range markFrom(act.status) {
				if n := p.counts[s]; n > 0 {
					parts = append(parts, statusLabel(t, s)+fmt.Sprintf(" %d", n))
				}
			}
			add(fmt.Sprintf("%s of %s would become %s: ", plural(p.total, "unit", "units"), act.model, act.status) + strings.Join(parts, ", "))
		}
		if n := p.counts[state.Failed]; n > 0 && act.status == state.Applied {
			its := "its"
			if n > 1 {
				its = "their"
			}
			add(t.Error.Render("warning: ") + fmt.Sprintf("%s failed: %s data may be missing or partial,", plural(n, "unit", "units"), its))
			add("  and downstream will read it as complete")
		}
	case d.plan != nil:
		for _, l := range planLines(t, d.plan, a.window) {
			wrap(l, 4)
		}
		if why := d.nothing(); why != "" && !slices.ContainsFunc(d.plan.Warnings(), func(w string) bool { return strings.HasSuffix(w, why) }) {
			const label = "nothing to run: "
			wrap(t.Status(themes.Blocked).Render(label)+untrusted.Line(why), len(label))
		}
		if d.releases > 0 {
			add(t.Status(themes.Applied).Render("releases ") + plural(d.releases, "held unit", "held units") + " downstream")
		}
	}
	add("")
	if d.typed() {
		subject := act.model
		if act.pipeline != "" {
			subject = "every model of pipeline " + act.pipeline
		}
		warn, ask := t.Error.Render(fmt.Sprintf("Torch deletes the state of %s in %s.", subject, env)), "Type its name to confirm:"
		if width(warn)+1+width(ask) <= inner {
			add(warn + " " + ask)
		} else {
			// A long name: what to type goes on a line of its own rather
			// than off the edge, and says the name.
			add(warn)
			add("Type its name (" + act.name() + ") to confirm:")
		}
		add("  " + d.input.view(t, inner-4))
		if d.notice != "" {
			add(t.Error.Render(d.notice))
		}
	} else {
		// The focused button is bracketed (and styled), so focus shows
		// without colour.
		cancel, confirm := t.Muted.Render("  Cancel  "), t.Muted.Render("  "+d.verb()+"  ")
		if d.confirm {
			confirm = t.Selected.Render("[ " + d.verb() + " ]")
		} else {
			cancel = t.Selected.Render("[ Cancel ]")
		}
		if !d.ready() {
			confirm = t.Muted.Render("  " + strings.Repeat("·", width(d.verb())) + "  ")
		}
		q, buttons := question(d, a), cancel+"  "+confirm
		if d.ready() && d.nothing() != "" {
			// Nothing to confirm: no button for it, and the question
			// says why there is none.
			q, buttons = "Nothing to run"+d.otherMode()+".", t.Selected.Render("[ Cancel ]")
		}
		if width(q)+2+width(buttons) <= inner {
			add(q + "  " + buttons)
		} else {
			// A long name: the buttons go on a line of their own rather
			// than off the edge.
			add(q)
			add(buttons)
		}
		if d.notice != "" {
			add(t.Error.Render(d.notice))
		}
	}
	// Keep the box inside the body: the plan is cut first.
	if maxLines := h - 2; len(lines) > maxLines && maxLines > 4 {
		keep := lines[len(lines)-3:]
		lines = append(lines[:maxLines-4], fit(t.Muted.Render("…"), inner))
		lines = append(lines, keep...)
	}
	border := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if t.BorderColor != nil {
		border = border.BorderForeground(t.BorderColor)
	}
	if act.danger() == danger.Destroys {
		border = border.BorderStyle(lipgloss.ThickBorder())
	}
	box := strings.Split(border.Render(strings.Join(lines, "\n")), "\n")
	return overlay(t, pad(behind, w, h), box, w, h)
}

// overlay draws box centred over bg (exactly h lines of w cells), with bg
// dimmed around it.
func overlay(t themes.Theme, bg, box []string, w, h int) []string {
	bw := 0
	for _, l := range box {
		bw = max(bw, width(l))
	}
	x, y := max(0, (w-bw)/2), max(0, (h-len(box))/2)
	out := make([]string, len(bg))
	for i, l := range bg {
		plain := fit(ansiStrip(l), w)
		if i < y || i >= y+len(box) {
			out[i] = t.Muted.Render(plain)
			continue
		}
		left := ansi.Truncate(plain, x, "")
		right := ansi.TruncateLeft(plain, min(w, x+bw), "")
		out[i] = fit(t.Muted.Render(left)+fit(box[i-y], bw)+t.Muted.Render(right), w)
	}
	return out
}

// envLabel is the environment, loud for prod.
func envLabel(a *App) string {
	if !a.eng.Env().Suffixed() {
		return a.theme.Prod.Render(" prod ")
	}
	return a.theme.Dev.Render(" " + a.eng.Env().String() + " ")
}

// question names the target and the count: "Run 3 units of raw.orders in
// prod?"
func question(d *dialog, a *App) string {
	env := a.eng.Env().String()
	switch {
	case d.preview != nil:
		return fmt.Sprintf("Mark %s of %s %s in %s?", plural(d.preview.total, "unit", "units"), d.action.model, d.action.status, env)
	case d.plan != nil:
		n := 0
		for _, m := range d.plan.Models {
			n += m.Run.Len()
		}
		if len(d.plan.Models) > 1 {
			return fmt.Sprintf("Run %s of %s models in %s?", plural(n, "unit", "units"), count(len(d.plan.Models)), env)
		}
		name := d.action.model
		if len(d.plan.Models) == 1 {
			name = d.plan.Models[0].Model
		}
		if d.action.downstream && !d.action.outdated {
			// What it releases runs after it: counted under the plan
			// ("releases …"), not in it.
			name += " and downstream"
		}
		return fmt.Sprintf("Run %s of %s in %s?", plural(n, "unit", "units"), name, env)
	}
	return ""
}

// modeHelp says what a STATE_MODE does, in one line.
func modeHelp(m spec.StateMode, window bool) string {
	switch m {
	case spec.Discover:
		return "discover: keep applied units, re-check the rest"
	case spec.Torch:
		return "torch: delete every unit, re-prefill, run the window (none: the contract range)"
	}
	if window {
		return "bulldozer: set the window's units to pending and run exactly them"
	}
	return "bulldozer without a window runs as discover on a temporal model"
}

// planLines prints a plan: per model, what is created, reset, deleted,
// uncovered and run, with spans, then the warnings.
//
// Windows are printed by window (common.window: the header's zone).
func planLines(t themes.Theme, p *engine.Plan, window func(state.Window) string) []string {
	if len(p.Models) > 1 {
		return planByModel(t, p, window)
	}
	var out []string
	for _, m := range p.Models {
		head := t.Accent.Render(m.Model) + t.Muted.Render(" ("+string(m.Mode)+")")
		if m.Register {
			head += t.Muted.Render(" · registers")
		}
		if m.Migrate != nil {
			head += t.Error.Render(" · migrates the grain")
		}
		out = append(out, head)
		item := func(label string, n int, span string, danger bool) {
			s := fmt.Sprintf("  %-9s %s", label, plural(n, "unit", "units"))
			if span != "" {
				s += "  " + t.Muted.Render(span)
			}
			if danger && n > 0 {
				s = t.Error.Render(ansiStrip(s))
			}
			out = append(out, s)
		}
		if m.Delete != nil {
			item("delete", m.Delete.Count, hullText(m.Delete.Hull, window), true)
		}
		if m.Uncovered != nil {
			item("uncover", m.Uncovered.Count, hullText(m.Uncovered.Hull, window), true)
		}
		if m.Outdated {
			item("outdated", m.OutdatedUnits, "", false)
			if m.BuiltOnOutdated > 0 {
				item("built on", m.BuiltOnOutdated, "(outdated upstream windows)", false)
			}
		}
		item("reset", m.Reset.Len(), spanText(m.Reset, window), false)
		item("create", m.Create.Len(), spanText(m.Create, window), false)
		item("run", m.Run.Len(), spanText(m.Run, window), false)
	}
	for _, warn := range p.Warnings() {
		out = append(out, t.Status(themes.Blocked).Render("warning: ")+oneLine(warn))
	}
	return out
}

// spanText is the hull of windows, "" when there are none.
func spanText(ws engine.Windows, window func(state.Window) string) string {
	if ws.Len() == 0 {
		return ""
	}
	return hullText(ws.Bounds(), window)
}

func hullText(w state.Window, window func(state.Window) string) string {
	if w.IsZero() {
		return ""
	}
	return window(w)
}

// planByModel prints a plan of several models (a run with downstream) a
// line each, so what runs in which model fits a dialog at 80×24: "core.x
// run 2 units  2026-01-01–03 · reset 2". A model's mode is named only
// where it is not the run's (a bulldozer without a window runs as
// discover): the STATE_MODE line above says it once for the others.
func planByModel(t themes.Theme, p *engine.Plan, window func(state.Window) string) []string {
	var out []string
	for _, m := range p.Models {
		line := t.Accent.Render(m.Model)
		if m.Mode != p.Mode {
			line += t.Muted.Render(" (" + string(m.Mode) + ")")
		}
		if m.Run.Len() == 0 {
			line += t.Muted.Render("  nothing to run")
		} else {
			line += "  run " + plural(m.Run.Len(), "unit", "units") + "  " + t.Muted.Render(spanText(m.Run, window))
		}
		var more []string
		if m.Outdated {
			more = append(more, fmt.Sprintf("outdated %d", m.OutdatedUnits))
			if m.BuiltOnOutdated > 0 {
				more = append(more, fmt.Sprintf("built on outdated %d", m.BuiltOnOutdated))
			}
		}
		if n := m.Reset.Len(); n > 0 {
			more = append(more, fmt.Sprintf("reset %d", n))
		}
		if n := m.Create.Len(); n > 0 {
			more = append(more, fmt.Sprintf("create %d", n))
		}
		if m.Delete != nil && m.Delete.Count > 0 {
			more = append(more, t.Error.Render(fmt.Sprintf("delete %d", m.Delete.Count)))
		}
		if len(more) > 0 {
			line += t.Muted.Render(" · ") + strings.Join(more, t.Muted.Render(" · "))
		}
		out = append(out, "  "+line)
	}
	for _, warn := range p.Warnings() {
		out = append(out, t.Status(themes.Blocked).Render("warning: ")+oneLine(warn))
	}
	return out
}
