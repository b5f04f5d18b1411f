package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// palette is the : command line: go to a model, explain a unit, switch
// view, environment or theme. Enter runs exactly what is typed; tab
// completes to the highlighted suggestion, so Enter never means "accept
// whatever was suggested".
type palette struct {
	input       lineInput
	suggestions []string
	sel         int
	err         string
}

// paletteCommand is a command of the palette, with its argument hint.
type paletteCommand struct{ name, args, help string }

// paletteCommands are the commands: open a model or a unit's explanation,
// each top-level screen by name, then the app's own.
var paletteCommands = func() []paletteCommand {
	cs := []paletteCommand{
		{"model", "NAME", "open a model"},
		{"why", "MODEL [TIME]", "explain MODEL at TIME, or its worst unit"},
		{"lineage", "MODEL [TIME]", "MODEL's lineage across pipelines, focused on TIME"},
	}
	for _, t := range topViews {
		cs = append(cs, paletteCommand{string(t.kind), "", t.help})
	}
	return append(cs,
		paletteCommand{"env", "SUFFIX|prod", "switch environment (SCHEMA_SUFFIX)"},
		paletteCommand{"theme", "NAME", "switch theme"},
		paletteCommand{"quit", "", "quit"})
}()

func newPalette(a *App) *palette {
	p := &palette{input: lineInput{prompt: ":", placeholder: "model NAME · why MODEL TIME · lineage MODEL · blocked · runs · env SUFFIX · theme NAME"}}
	p.suggest(a)
	return p
}

// suggest lists what completes the typed text: command names, then model
// names for model and why, environments and themes.
func (p *palette) suggest(a *App) {
	text := p.input.Value()
	cmd, arg, hasArg := strings.Cut(text, " ")
	var out []string
	if !hasArg {
		for _, c := range paletteCommands {
			if strings.HasPrefix(c.name, cmd) {
				out = append(out, c.name)
			}
		}
		if cmd != "" {
			for _, m := range a.knownModels() {
				if strings.Contains(m, cmd) {
					out = append(out, m)
				}
			}
		}
	} else {
		var cands []string
		switch cmd {
		case "model", "why", "lineage":
			cands = a.knownModels()
		case "theme":
			cands = themes.Names()
		case "env":
			cands = []string{"prod"}
		}
		for _, c := range cands {
			if strings.Contains(c, strings.TrimSpace(arg)) {
				out = append(out, cmd+" "+c)
			}
		}
	}
	p.suggestions = out
	p.sel = min(p.sel, max(0, len(out)-1))
}

func (p *palette) key(a *App, msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, keyCancel):
		a.palette = nil
		return nil
	case key.Matches(msg, keyRunCommand):
		cmd, err := p.run(a, strings.TrimSpace(p.input.Value()))
		if err != nil {
			p.err = oneLine(err.Error())
			return nil
		}
		a.palette = nil
		return cmd
	case key.Matches(msg, keyComplete):
		if p.sel < len(p.suggestions) {
			p.input.SetValue(p.suggestions[p.sel] + " ")
			p.sel = 0
			p.suggest(a)
		}
		return nil
	case key.Matches(msg, keySuggestUp):
		p.sel = max(0, p.sel-1)
		return nil
	case key.Matches(msg, keySuggestDown):
		p.sel = min(max(0, len(p.suggestions)-1), p.sel+1)
		return nil
	}
	if p.input.update(msg) {
		p.err = ""
		p.sel = 0
		p.suggest(a)
	}
	return nil
}

func (p *palette) updateInput(a *App, msg tea.Msg) tea.Cmd {
	if p.input.update(msg) {
		p.suggest(a)
	}
	return nil
}

// run executes a command line.
func (p *palette) run(a *App, line string) (tea.Cmd, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, fmt.Errorf("type a command, or esc")
	}
	cmd, args := fields[0], fields[1:]
	switch cmd {
	case "quit", "q":
		return a.quit(false), nil
	case "model":
		if len(args) != 1 {
			return nil, fmt.Errorf("model NAME: name one model")
		}
		if err := a.knownModel(args[0]); err != nil {
			return nil, err
		}
		return a.jump(a.overview(newModel(a.common, args[0]))), nil
	case "why", "lineage":
		if len(args) < 1 || len(args) > 2 {
			return nil, fmt.Errorf("%s MODEL [TIME]: TIME is RFC 3339 or a date", cmd)
		}
		if err := a.knownModel(args[0]); err != nil {
			return nil, err
		}
		var at time.Time
		if len(args) == 2 {
			t, err := state.ParseTime(args[1])
			if err != nil {
				return nil, err
			}
			at = t
		}
		if cmd == "lineage" {
			return a.jump(a.overview(newModel(a.common, args[0]), newLineage(a.common, args[0], at))), nil
		}
		return a.jump(a.overview(newModel(a.common, args[0]), newWhy(a.common, args[0], at))), nil
	case "env":
		if len(args) != 1 {
			return nil, fmt.Errorf("env SUFFIX: a schema suffix, or prod")
		}
		return a.switchEnv(args[0]), nil
	case "theme":
		if len(args) != 1 {
			return nil, fmt.Errorf("theme NAME: one of %s", strings.Join(themes.Names(), ", "))
		}
		return a.switchTheme(args[0]), nil
	}
	if t, ok := topViewNamed(cmd); ok {
		return a.switchTo(t.kind), nil
	}
	// A bare model name goes to the model.
	if len(args) == 0 {
		for _, m := range a.knownModels() {
			if m == cmd {
				return a.jump(a.overview(newModel(a.common, cmd))), nil
			}
		}
	}
	return nil, fmt.Errorf("unknown command %q (tab completes; esc closes)", cmd)
}

// knownModel refuses, in the palette as every other command's mistake is,
// a model the UI knows nothing of — not in the spec (with the names close
// to it), nor, for a UI opened on the store alone, among the models listed
// — rather than open a model view that can only say so. With nothing
// listed yet it cannot tell, and lets the view say.
func (a *App) knownModel(name string) error {
	known := a.knownModels()
	if len(known) == 0 || slices.Contains(known, name) {
		return nil
	}
	if sp := a.eng.Spec(); sp != nil {
		// The spec's own answer when it has names close to it ("did you
		// mean raw.orders?"); its pointer to `bollhav graph` is the
		// command line's, and tab is the palette's.
		if err := spec.UnknownModelError(sp, name); strings.Contains(err.Error(), "did you mean") {
			return err
		}
	}
	return fmt.Errorf("unknown model %q (tab completes the known ones)", name)
}

// paletteRows is how many suggestions show at most.
const paletteRows = 8

// overlay draws the palette over the top of the body.
func (p *palette) overlay(a *App, body []string, w int) []string {
	t := a.theme
	lines := []string{t.Border.Render("┌") + fit(" "+p.input.view(t, w-4), w-2) + t.Border.Render("┐")}
	if p.err != "" {
		lines = append(lines, t.Border.Render("│")+fit(" "+t.Error.Render(p.err), w-2)+t.Border.Render("│"))
	}
	from := max(0, p.sel-paletteRows+1)
	for i := from; i < len(p.suggestions) && i < from+paletteRows; i++ {
		s := p.suggestions[i]
		hint := ""
		for _, c := range paletteCommands {
			if c.name == s {
				hint = t.Muted.Render("  " + c.args + "  " + c.help)
			}
		}
		line := listLine(t, i == p.sel, s+hint, w-2)
		lines = append(lines, t.Border.Render("│")+line+t.Border.Render("│"))
	}
	lines = append(lines, t.Border.Render("└"+strings.Repeat("─", max(0, w-2))+"┘"))
	out := append([]string{}, body...)
	for i, l := range lines {
		if i < len(out) {
			out[i] = l
		}
	}
	return out
}

// filterInput is the / filter of a list: it filters as you type; enter
// keeps the filter, esc clears it.
type filterInput struct {
	input  lineInput
	target filterable
}

func newFilterInput(a *App, f filterable) *filterInput {
	in := lineInput{prompt: "/"}
	in.SetValue(f.filter())
	return &filterInput{input: in, target: f}
}

func (f *filterInput) key(a *App, msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, keyKeepFilter):
		a.filterIn = nil
		return nil
	case key.Matches(msg, keyClearFilter):
		a.filterIn = nil
		return f.target.setFilter("")
	}
	return f.updateInput(msg)
}

func (f *filterInput) updateInput(msg tea.Msg) tea.Cmd {
	if f.input.update(msg) {
		return f.target.setFilter(f.input.Value())
	}
	return nil
}

// line is the footer while filtering.
func (f *filterInput) line(a *App, w int) string {
	return " " + f.input.view(a.theme, max(10, w-40)) + "  " + a.theme.Muted.Render("enter keep · esc clear")
}
