package tui

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/themes"
)

// The app's frame: the header, the banner, the body (the view on top, or
// the help, the dialog, the palette over it) and the footer.

// View draws the frame: header, banner, body (or an overlay), footer.
func (a *App) View() tea.View {
	content := safeFrame(a.render())
	if a.frames != nil {
		a.frames.record(content, a)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	if a.mouse {
		// Opt-in (BOLLHAV_MOUSE=wheel): reporting the mouse takes the
		// terminal's own text selection away, and copying an error
		// matters more than scrolling with the wheel.
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "bollhav — " + a.eng.Env().String()
	return v
}

func (a *App) render() string {
	w, h := max(a.width, 20), max(a.height, 5)
	lines := []string{a.header(w)}
	if b := a.banner(w); b != "" {
		lines = append(lines, b)
	}
	bodyH := h - len(lines) - 1
	var body []string
	switch {
	case a.showHelp:
		body = a.helpBody(w, bodyH)
	case a.dialog != nil:
		body = a.dialog.render(a, w, bodyH, a.top().render(w, bodyH))
	default:
		body = a.top().render(w, bodyH)
		if a.palette != nil {
			body = a.palette.overlay(a, body, w)
		}
	}
	lines = append(lines, pad(body, w, bodyH)...)
	lines = append(lines, a.footer(w))
	return strings.Join(lines, "\n")
}

// crumber is a view whose breadcrumb depends on the view below it.
type crumber interface{ crumb(below view) string }

// header: app, environment (loud for prod), store backend, breadcrumb,
// live indicator.
func (a *App) header(w int) string {
	t := a.theme
	env := t.Dev.Render(" " + a.eng.Env().String() + " ")
	if !a.eng.Env().Suffixed() {
		env = t.Prod.Render(" prod ")
	}
	ro := ""
	if a.opts.User != "" {
		who := a.opts.User
		if a.opts.Role != "" {
			who += " (" + a.opts.Role + ")"
		}
		ro = " " + t.Accent.Render(who)
	}
	if a.readOnly && a.opts.Role != "viewer" {
		// A viewer is read-only by its role; anyone else is told.
		ro += " " + t.Muted.Render("read-only")
	}
	left := t.Accent.Render(" bollhav ") + env + " " + t.Muted.Render(a.eng.Backend()) + ro + "  "
	var crumbs []string
	for i, v := range a.stack {
		title := v.title()
		if c, ok := v.(crumber); ok && i > 0 {
			title = c.crumb(a.stack[i-1])
		}
		crumbs = append(crumbs, title)
	}
	trail := strings.Join(crumbs, " › ")
	right := t.Muted.Render(a.timesLabel()) + "  "
	if n := a.activeRuns(); n > 0 {
		right += t.Status(themes.Running).Render(themes.Glyph(themes.Running)+" "+plural(n, "run", "runs")) + "  "
	}
	switch {
	case a.live:
		live := "● live"
		if !a.lastChange.IsZero() {
			live += " " + a.clockText(a.lastChange)
		}
		right += t.Status(themes.Applied).Render(live) + " "
	case a.feedErr != nil:
		right += t.Error.Render("○ offline") + " "
	default:
		right += t.Muted.Render("○ connecting") + " "
	}
	room := w - width(left) - width(right) - 1
	return spread(left+t.Base.Render(clipLeft(trail, max(room, 0))), " "+right, w)
}

// banner reports a lost store connection, or that the idle timeout is
// about to close the session; empty when all is well.
func (a *App) banner(w int) string {
	if a.idleWarning != "" {
		return a.theme.Banner.Render(fit(" ⏱ "+a.idleWarning, w))
	}
	err := a.loadErr
	what := "store unreachable"
	if err == nil && a.feedErr != nil {
		err, what = a.feedErr, "change feed lost"
	}
	// The cause is the innermost error: "connection refused", not the
	// chain of what was being read.
	for errors.Unwrap(err) != nil {
		err = errors.Unwrap(err)
	}
	if err == nil {
		return ""
	}
	msg := fmt.Sprintf(" ⚠ %s, retrying by itself: %s", what, oneLine(err.Error()))
	return a.theme.Banner.Render(fit(msg, w))
}

// footer: a message when there is one, else the key hints of what has
// focus.
func (a *App) footer(w int) string {
	if a.flash != "" {
		st := a.theme.Accent
		if a.flashErr {
			st = a.theme.Error
		}
		return fit(" "+st.Render(a.flash), w)
	}
	if a.filterIn != nil {
		return fit(a.filterIn.line(a, w), w)
	}
	h := a.help
	keys := a.currentHelp().ShortHelp()
	if !a.showHelp && a.dialog == nil && a.palette == nil {
		_, filterable := a.top().(filterable)
		keys = a.keys.footerKeys(h, a.top().bindings(), filterable, len(a.stack) > 1, w-1)
	}
	h.SetWidth(w - 1)
	return fit(" "+h.ShortHelpView(keys), w)
}

// currentHelp is the key help of what has focus.
func (a *App) currentHelp() helpKeys {
	switch {
	case a.showHelp:
		return helpKeys{short: []key.Binding{keyCloseHelp}}
	case a.dialog != nil:
		return a.dialog.help()
	case a.palette != nil:
		return helpKeys{short: []key.Binding{keyRunCommand, keyComplete, keyCancel}}
	case a.filterIn != nil:
		return helpKeys{short: []key.Binding{keyKeepFilter, keyClearFilter}}
	}
	_, filterable := a.top().(filterable)
	return a.keys.screenHelp(a.top().bindings(), filterable, len(a.stack) > 1)
}

// helpBody is the full help of the screen below, and the status legend.
// On a terminal too short for it all, the blank lines between its parts go
// first.
func (a *App) helpBody(w, h int) []string {
	t := a.theme
	_, filterable := a.top().(filterable)
	below := a.keys.screenHelp(a.top().bindings(), filterable, len(a.stack) > 1)
	hm := a.help
	hm.SetWidth(w - 2)
	const gap = "\x00" // a blank line that may go
	lines := []string{t.Title.Render(fit(" Keys — "+a.top().title(), w)), gap}
	for _, l := range strings.Split(hm.FullHelpView(below.FullHelp()), "\n") {
		lines = append(lines, " "+l)
	}
	lines = append(lines, gap, " "+t.Accent.Render("Statuses"))
	var legend []string
	for _, s := range themes.Statuses {
		legend = append(legend, t.Label(s))
	}
	// Two spaces between entries when they fit, one when that is what
	// keeps every status on the line at 80 columns.
	sep := "  "
	if width(" "+strings.Join(legend, sep)) > w {
		sep = " "
	}
	lines = append(lines, " "+strings.Join(legend, sep))
	lines = append(lines, gap, " "+t.Accent.Render("Commands")+t.Muted.Render("  (: then enter; tab completes)"))
	// The screens' commands share a line: each is a screen the keys
	// above name, and one line each pushed the rest off a 24-line help.
	var screens, keys []string
	for _, tv := range topViews {
		screens, keys = append(screens, string(tv.kind)), append(keys, tv.key)
	}
	for _, c := range paletteCommands {
		if _, isScreen := topViewNamed(c.name); isScreen {
			if c.name == screens[0] {
				lines = append(lines, "   "+t.Accent.Render(strings.Join(screens, " "))+"  the screens of the keys "+strings.Join(keys, " "))
			}
			continue
		}
		name, help := c.name, c.help
		switch c.name {
		case "lineage": // on why's line: the same arguments, and a line less
			continue
		case "why":
			name, help = "why|lineage", "explain MODEL at TIME, or draw its lineage"
		}
		lines = append(lines, "   "+t.Accent.Render(name)+" "+t.Muted.Render(c.args)+strings.Repeat(" ", max(1, 22-width(name+" "+c.args)))+help)
	}
	tight := len(lines) > h
	out := lines[:0]
	for _, l := range lines {
		switch {
		case l != gap:
			out = append(out, l)
		case !tight:
			out = append(out, "")
		}
	}
	return pad(out, w, h)
}
