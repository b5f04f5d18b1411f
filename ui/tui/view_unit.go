package tui

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// unitView is one unit in full, for the engineer who has to understand a
// failure: its whole error wrapped (never cut to a line), each failed
// attempt's error with its time and run, and what ran — the command or
// SQL of the spec and the BOLLHAV_* variables the executor gave it, with
// secrets redacted. d opens it from the model, why and incidents views.
type unitView struct {
	viewBase
	model  string
	window state.Window
	data   *unitData
	offset int
}

// unitData is the unit as the store has it, with its failed attempts.
type unitData struct {
	unit     *state.Unit
	failures engine.UnitFailures
}

// viewUnit is one unit's detail.
const viewUnit viewKind = "unit"

func newUnitView(c *common, model string, w state.Window) *unitView {
	return &unitView{viewBase: newBase(c), model: model, window: w}
}

func (v *unitView) kind() viewKind { return viewUnit }

func (v *unitView) title() string {
	if v.window.IsZero() {
		return "unit " + v.model
	}
	return "unit " + v.model + " " + v.c.window(v.window)
}

func (v *unitView) load(gen uint64, _ []string) tea.Cmd {
	e, model, w := v.c.eng, v.model, v.window
	return loadCmd(v.c, v.id, gen, func(ctx context.Context) (*unitData, error) {
		d := &unitData{}
		err := e.ScanUnits(ctx, model, w, nil, func(u state.Unit) error {
			if d.unit == nil && (w.IsZero() || u.Window.Equal(w)) {
				d.unit = &u
			}
			return nil
		})
		if err != nil || d.unit == nil {
			return d, err
		}
		d.failures, err = e.Failures(ctx, *d.unit, e.RetryBudget(ctx, model))
		return d, err
	})
}

func (v *unitView) update(msg viewMsg) tea.Cmd {
	return takeLoaded(msg, func(d *unitData) { v.data = d })
}

func (v *unitView) affected(changes []state.Change) (bool, []string) {
	for _, m := range changedModels(v.c.eng.Env().Suffix, changes) {
		if m == v.model {
			return true, nil
		}
	}
	return false, nil
}

func (v *unitView) key(msg tea.KeyPressMsg) tea.Cmd {
	k := v.c.keys
	switch {
	case key.Matches(msg, k.Up):
		v.offset = max(0, v.offset-1)
	case key.Matches(msg, k.Down):
		v.offset++
	case key.Matches(msg, k.PageUp):
		v.offset = max(0, v.offset-10)
	case key.Matches(msg, k.PageDown):
		v.offset += 10
	case key.Matches(msg, k.Top):
		v.offset = 0
	case key.Matches(msg, k.Bottom):
		v.offset = 1 << 20 // render clamps it
	case key.Matches(msg, k.Enter):
		v.c.openWhy(v.model, v.window.Since)
	case key.Matches(msg, k.Yank):
		return v.c.yank("the why command", v.c.whyCommand(v.model, v.window))
	case key.Matches(msg, k.YankError):
		if v.data != nil && v.data.unit != nil {
			return v.c.yank("the error", v.data.unit.Error)
		}
	case key.Matches(msg, k.unitKeys()...):
		v.c.openAction(k.unitAction(msg, v.model, v.window))
	}
	return nil
}

// wheel scrolls the detail; render keeps the offset on the page.
func (v *unitView) wheel(msg tea.MouseWheelMsg) { v.offset = wheelOffset(msg, v.offset, math.MaxInt) }

func (v *unitView) bindings() []key.Binding {
	k := v.c.keys
	return []key.Binding{saying(k.Enter, "why"), k.Yank, k.YankError, saying(k.RunWindow, "run it"), k.MarkApplied, k.MarkPending}
}

func (v *unitView) render(w, h int) []string {
	if !v.loaded || v.data == nil {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	u := v.data.unit
	if u == nil {
		return pad([]string{" " + t.Muted.Render("no unit of "+v.model+" at "+v.c.window(v.window)+" in the store")}, w, h)
	}
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	wrapped := func(indent string, s string) {
		for _, l := range wrapLines(s, w-len(indent)-1) {
			add(indent + l)
		}
	}
	add(" " + t.Glyph(unitStatus(u.Status)) + " " + t.Accent.Render(v.model) + " " + v.c.window(u.Window) + "  " + statusLabel(t, u.Status))
	meta := fmt.Sprintf("attempts %d · applied %s", u.Attempts, v.c.when(u.AppliedAt))
	if r := v.data.failures.Retry; r != nil {
		meta += " · " + r.Line(v.c.absAt)
	}
	add("   " + t.Muted.Render(meta))
	if u.Error != "" {
		add(" " + t.Title.Render("Error"))
		for _, l := range wrapLines(u.Error, w-6) {
			add("   " + t.Error.Render(l))
		}
	}
	if u.BlockedReason != "" {
		add(" " + t.Title.Render("Blocked"))
		wrapped("   ", u.BlockedReason)
	}
	// What ran comes before the history, which can be long.
	for _, l := range v.ran(u) {
		add(l)
	}
	if fs := v.data.failures.Failures; len(fs) > 0 {
		add(" " + t.Title.Render("Failed attempts") + t.Muted.Render(", newest first"))
		for _, a := range fs {
			run := ""
			if a.RunID != 0 {
				run = fmt.Sprintf(" · run %d", a.RunID)
			}
			add("   " + a.Label() + t.Muted.Render(" · "+v.c.whenAt(a.At)+run))
			wrapped("     ", a.Error)
		}
	}
	v.offset = min(v.offset, max(0, len(lines)-h))
	lines = lines[v.offset:]
	for i := range lines {
		lines[i] = fit(lines[i], w)
	}
	return pad(lines, w, h)
}

// ran is what the executor runs for the unit: the spec's command or SQL
// as written, its working folder, and the BOLLHAV_* variables it sets, the
// run id being that of the newest failed attempt. The worker's own
// environment is not shown: it is where secrets live.
func (v *unitView) ran(u *state.Unit) []string {
	t := v.c.theme
	e := v.c.eng
	if e.Spec() == nil {
		return nil
	}
	m := e.Spec().Model(v.model)
	if m == nil {
		return []string{" " + t.Muted.Render(v.model+" is not in the spec: what ran is not known")}
	}
	w := v.c.width
	out := []string{" " + t.Title.Render("Ran") + t.Muted.Render(" (as the spec has it now)")}
	add := func(indent, s string) {
		for _, l := range wrapLines(redactSecrets(s), w-len(indent)-1) {
			out = append(out, indent+l)
		}
	}
	switch {
	case len(m.Run.Command) > 0:
		add("   ", "command "+strings.Join(m.Run.Command, " "))
		out = append(out, "   "+t.Muted.Render("in "+e.SpecDir()))
	case len(m.Run.SQL) > 0:
		for _, q := range m.Run.SQL {
			add("   ", "sql "+q)
		}
	case m.Run.Query != "":
		add("   ", "query "+m.Run.Query)
	}
	if m.Run.Timeout > 0 {
		out = append(out, "   "+t.Muted.Render("timeout "+m.Run.Timeout.String()))
	}
	run := "?"
	if fs := v.data.failures.Failures; len(fs) > 0 && fs[0].RunID != 0 {
		run = fmt.Sprint(fs[0].RunID)
	}
	since, until := "", ""
	if !u.Window.IsZero() {
		since, until = state.FormatTime(u.Window.Since), state.FormatTime(u.Window.Until)
	}
	var sources []string
	for _, s := range m.Upstream {
		sources = append(sources, s.Name)
	}
	out = append(out, " "+t.Title.Render("Environment")+t.Muted.Render(" (BOLLHAV_*; the worker's own variables are not shown)"))
	for _, kv := range [][2]string{
		{"BOLLHAV_MODEL", m.Name}, {"BOLLHAV_TARGET", m.Target(e.Env())},
		{"BOLLHAV_SINCE", since}, {"BOLLHAV_UNTIL", until}, {"BOLLHAV_RUN_ID", run},
		{"BOLLHAV_SOURCES", "[" + strings.Join(sources, ", ") + "] (JSON)"},
	} {
		add("   ", kv[0]+"="+kv[1])
	}
	return out
}

// secretPatterns find secrets written into a command or SQL: a URL's
// password and a password=, token= or secret= value.
var (
	urlPassword = regexp.MustCompile(`(://[^:/@\s]+:)[^@\s]+@`)
	kvSecret    = regexp.MustCompile(`(?i)((?:password|passwd|pwd|token|secret|api_key|apikey)\s*[=:]\s*)[^\s&;'"]+`)
)

// redactSecrets hides what looks like a secret in s.
func redactSecrets(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}[redacted]@")
	return kvSecret.ReplaceAllString(s, "${1}[redacted]")
}
