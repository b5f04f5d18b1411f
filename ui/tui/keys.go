package tui

import (
	"slices"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// keyMap is every binding of the UI, as data: the help screen and the footer
// are generated from it, and a binding that does not apply (an action under
// --read-only, the graph form before it exists) is disabled, so it vanishes
// from both and never fires.
type keyMap struct {
	// Global.
	Quit, Help, Back, Palette, Filter key.Binding
	// Previous returns to the screen before the last jump (history.go).
	Previous key.Binding
	// Screens are the top-level screens' keys, in topViews' order.
	Screens []key.Binding

	// Lists.
	Up, Down, PageUp, PageDown, Top, Bottom, Enter key.Binding

	// View-specific.
	ToggleGraph key.Binding // pipelines: graph form ⇄ list form
	NextGraph   key.Binding // pipelines, graph form: the next pipeline
	Left, Right key.Binding // pipelines, graph form: move between nodes of a wave
	ZoomIn      key.Binding // model: timeline zoom
	ZoomOut     key.Binding
	Blocking    key.Binding // why: jump to the blocking upstream's window
	Upstream    key.Binding // model: open the upstream holding the cursor's window back
	Model       key.Binding // why, blocked: open the unit's model

	// PrevGraph (pipelines, graph form) shows the previous pipeline;
	// EdgeUp and EdgeDown follow an edge from the graph's selection to an
	// upstream or a downstream model (graph_follow.go).
	PrevGraph, EdgeUp, EdgeDown key.Binding

	// Yank copies the command line that explains the selected unit
	// ("bollhav why … --at …"), YankError its error, to the clipboard of
	// the terminal (OSC 52): reading, so bound under read-only too.
	Yank, YankError key.Binding
	// Detail opens the unit's detail: its whole error, its attempts, what ran.
	Detail key.Binding
	// NextProblem and PrevProblem move a list's cursor to the next (the
	// previous) failed or blocked row, round the end: in the pipelines, a
	// model with failed or blocked units; in a model, such a unit; in
	// Blocked, the next cause; in the incidents, the next card.
	NextProblem, PrevProblem key.Binding
	// OpenRun opens the run the footer last spoke of; enabled once this
	// UI started a run.
	OpenRun key.Binding
	// Times toggles instants between ages and times, Zone between UTC
	// and local time (times.go); TimesHelp is the one line the help
	// shows for both.
	Times, Zone, TimesHelp key.Binding

	// Actions: dangerous, so bound only when the UI may change state.
	// Rebuild runs a model's outdated windows (run --outdated).
	RunWindow, RunModel, MarkApplied, MarkPending, Rebuild key.Binding
	// RunReady runs every unit the Blocked view found ready (its gate
	// passes now), after their plan.
	RunReady key.Binding

	// Lineage (L) opens the lineage of the selected row's model at its
	// window, from any screen with one (lineage_sources.go). On the
	// lineage screen ←/→ move the focus window (WindowBack, WindowOn),
	// h/l move between nodes of a layer (NodeLeft, NodeRight; NodeMove is
	// the help's line for them and ↑/↓), + and _ change the hops.
	Lineage, WindowBack, WindowOn, NodeLeft, NodeRight, NodeMove, MoreHops, FewerHops key.Binding
}

// bind is a binding of the one key k, which its help names, doing what.
func bind(k, what string) key.Binding { return bindAs(k, what, k) }

// bindAs is a binding of keys whose help names them as help, doing what.
func bindAs(help, what string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, what))
}

// saying is b with its help saying what, under the same key; a binding
// read-only unbound stays without help.
func saying(b key.Binding, what string) key.Binding {
	if b.Enabled() {
		b.SetHelp(b.Help().Key, what)
	}
	return b
}

// newKeyMap is the keymap of a UI drawing with rs.
func newKeyMap(readOnly bool, rs renderers) keyMap {
	k := keyMap{
		Quit:    bindAs("q", "quit", "q", "ctrl+c"),
		Help:    bind("?", "help"),
		Back:    bind("esc", "back"),
		Palette: bind(":", "command"),
		Filter:  bind("/", "filter"),
		// - as in k9s; the timeline's zoom out is _ for it.
		Previous: bind("-", "previous screen"),

		Up:       bindAs("↑/k", "up", "up", "k"),
		Down:     bindAs("↓/j", "down", "down", "j"),
		PageUp:   bindAs("pgup", "page up", "pgup", "ctrl+u", "ctrl+b"),
		PageDown: bindAs("pgdn", "page down", "pgdown", "ctrl+d", "ctrl+f"),
		Top:      bindAs("g", "top", "home", "g"),
		Bottom:   bindAs("G", "bottom", "end", "G"),
		Enter:    bind("enter", "open"),

		ToggleGraph: bind("v", "graph/list"),
		NextGraph:   bind("tab", "next pipeline"),
		PrevGraph:   bind("shift+tab", "previous pipeline"),
		EdgeUp:      bind("[", "to upstream"),
		EdgeDown:    bind("]", "to downstream"),
		Left:        bindAs("←/h", "left", "left", "h"),
		Right:       bindAs("→/l", "right", "right", "l"),
		ZoomIn:      bindAs("+", "zoom in", "+", "="),
		ZoomOut:     bind("_", "zoom out"),
		Blocking:    bind("b", "blocking upstream"),
		Model:       bind("o", "open model"),
		Upstream:    bind("u", "upstream"),
		Detail:      bind("d", "unit detail"),
		Yank:        bind("y", "copy why command"),
		YankError:   bind("Y", "copy error"),
		// "✗/⊘": the glyphs of failed and blocked, short enough for the
		// footer at 80 columns.
		NextProblem: bind("n", "next ✗/⊘"),
		PrevProblem: bind("N", "previous ✗/⊘"),
		Times:       key.NewBinding(key.WithKeys("t")),
		Zone:        key.NewBinding(key.WithKeys("T")),
		TimesHelp:   bindAs("t/T", "times ago/abs, UTC/local", "t", "T"),
		OpenRun:     key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "open the run started last"), key.WithDisabled()),

		RunWindow:   bind("r", "run window"),
		RunModel:    bind("R", "run model"),
		MarkApplied: bind("a", "mark applied"),
		MarkPending: bind("p", "mark pending"),
		RunReady:    bind("R", "run every ready unit"),
		Rebuild:     bind("O", "rebuild outdated"),

		Lineage:    bind("L", "lineage"),
		WindowBack: bindAs("←/→", "window", "left"),
		WindowOn:   key.NewBinding(key.WithKeys("right")),
		NodeLeft:   key.NewBinding(key.WithKeys("h")),
		NodeRight:  key.NewBinding(key.WithKeys("l")),
		NodeMove:   bindAs("hjkl/↑↓", "move", "h", "l"), // the help's line: NodeLeft, NodeRight and Up, Down move
		MoreHops:   bindAs("+/_", "hops", "+", "="),
		FewerHops:  key.NewBinding(key.WithKeys("_")),
	}
	for _, t := range topViews {
		k.Screens = append(k.Screens, key.NewBinding(key.WithKeys(t.key), key.WithHelp(t.key, string(t.kind))))
	}
	// The graph form and the timeline's zoom plug in from ui/graphview and
	// ui/timeline; without them, their keys are not offered.
	k.ToggleGraph.SetEnabled(rs.graph != nil)
	k.NextGraph.SetEnabled(rs.graph != nil)
	k.PrevGraph.SetEnabled(rs.graph != nil)
	k.EdgeUp.SetEnabled(rs.graph != nil)
	k.EdgeDown.SetEnabled(rs.graph != nil)
	k.ZoomIn.SetEnabled(rs.timeline != nil)
	k.ZoomOut.SetEnabled(rs.timeline != nil)
	if readOnly {
		// Read-only does not bind dangerous actions at all: no key, no help
		// line, no dialog. The engine refuses them as well.
		for _, b := range k.actions() {
			b.Unbind()
		}
	}
	return k
}

// unitKeys are the actions on one unit: run its window, mark it applied,
// mark it pending.
func (k keyMap) unitKeys() []key.Binding {
	return []key.Binding{k.RunWindow, k.MarkApplied, k.MarkPending}
}

// unitAction is the action one of unitKeys, msg, asks of model's unit at
// w: a bulldozer run of its window, or the mark.
func (k keyMap) unitAction(msg tea.KeyPressMsg, model string, w state.Window) action {
	act := action{kind: actionMark, model: model, window: windowPtr(w), status: state.Applied}
	switch {
	case key.Matches(msg, k.RunWindow):
		act.kind, act.status, act.mode = actionRun, "", spec.Bulldozer
	case key.Matches(msg, k.MarkPending):
		act.status = state.Pending
	}
	return act
}

// actions are the bindings that change state.
func (k *keyMap) actions() []*key.Binding {
	return []*key.Binding{&k.RunWindow, &k.RunModel, &k.MarkApplied, &k.MarkPending, &k.RunReady, &k.Rebuild}
}

// navigation is the list movement group of the full help.
func (k keyMap) navigation() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// global is the group every screen has.
func (k keyMap) global() []key.Binding {
	g := []key.Binding{k.Palette, k.Filter, k.Back, k.Previous, k.Lineage}
	g = append(g, k.Screens...)
	return append(g, k.OpenRun, k.TimesHelp, k.Help, k.Quit)
}

// helpKeys is a help.KeyMap for one screen: its own bindings first, then
// navigation and the global ones.
type helpKeys struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h helpKeys) ShortHelp() []key.Binding  { return h.short }
func (h helpKeys) FullHelp() [][]key.Binding { return h.full }

// screenHelp builds the help of a view from its own bindings.
func (k keyMap) screenHelp(own []key.Binding, filterable, canBack bool) helpKeys {
	global := k.global()
	if !filterable {
		global = without(global, k.Filter)
	}
	short := append([]key.Binding{}, own...)
	if canBack {
		short = append(short, k.Back)
	} else {
		global = without(global, k.Back)
	}
	short = append(short, k.Palette)
	if filterable {
		short = append(short, k.Filter)
	}
	short = append(short, k.Quit, k.Help)
	return helpKeys{short: short, full: [][]key.Binding{own, k.navigation(), global}}
}

// footerKeys is what a screen's footer shows in w cells: its short help
// whole when it fits. When it does not, the keys keep their order and the
// line still ends with "? help" (the full list is there); then, most
// important first, as many of the rest as fit: the screen's first key
// (enter), its first action (r on an incident: what the screen is there
// to do comes before the ways out of it), esc back, q quit, its other
// keys in its order (up to the first that does not fit, so a group is
// never shown with a hole in it), : command and / filter.
func (k keyMap) footerKeys(hm help.Model, own []key.Binding, filterable, canBack bool, w int) []key.Binding {
	all := k.screenHelp(own, filterable, canBack).short
	hm.SetWidth(0) // measure, do not cut
	fits := func(bs []key.Binding) bool { return width(hm.ShortHelpView(bs)) <= w }
	if fits(all) {
		return all
	}
	// all is own..., [esc back], : command, [/ filter], q quit, ? help.
	n := len(own)
	next := n
	back, palette, filter := -1, -1, -1
	if canBack {
		back, next = next, next+1
	}
	palette, next = next, next+1
	if filterable {
		filter, next = next, next+1
	}
	quit, helpKey := next, next+1
	keep := map[int]bool{helpKey: true}
	pick := func(i int) bool {
		if i < 0 {
			return false
		}
		keep[i] = true
		var bs []key.Binding
		for j, b := range all {
			if keep[j] {
				bs = append(bs, b)
			}
		}
		if !fits(bs) {
			delete(keep, i)
			return false
		}
		return true
	}
	if n > 0 {
		pick(0)
	}
	for i := 1; i < n; i++ {
		if all[i].Enabled() && k.isAction(all[i]) {
			pick(i)
			break
		}
	}
	pick(back)
	pick(quit)
	for i := 1; i < n; i++ {
		if !all[i].Enabled() {
			continue
		}
		if !pick(i) {
			break
		}
	}
	pick(palette)
	pick(filter)
	var out []key.Binding
	for j, b := range all {
		if keep[j] {
			out = append(out, b)
		}
	}
	return out
}

// isAction reports whether b is one of the keys that change state (under
// whatever help a screen gives it).
func (k keyMap) isAction(b key.Binding) bool {
	for _, a := range k.actions() {
		if a.Enabled() && slices.Equal(a.Keys(), b.Keys()) {
			return true
		}
	}
	return false
}

func without(bs []key.Binding, drop key.Binding) []key.Binding {
	out := bs[:0:0]
	for _, b := range bs {
		if b.Help() != drop.Help() {
			out = append(out, b)
		}
	}
	return out
}

// Bindings of the modal parts: they replace the screen's while open.
var (
	keyConfirm     = bind("enter", "choose")
	keyCancel      = bind("esc", "cancel")
	keyNextMode    = bind("tab", "next mode")
	keyPrevMode    = bind("shift+tab", "prev mode")
	keyDownstream  = bind("d", "with downstream")
	keyYes         = bindAs("y/n", "yes/no", "y")
	keyNo          = key.NewBinding(key.WithKeys("n"))
	keyButtonLeft  = bindAs("←/→", "button", "left", "h")
	keyButtonRight = key.NewBinding(key.WithKeys("right", "l"))
	keyComplete    = bind("tab", "complete")
	keyRunCommand  = bind("enter", "run command")
	keyKeepFilter  = bind("enter", "keep filter")
	keyClearFilter = bind("esc", "clear filter")
	keyCloseHelp   = bindAs("esc/?", "close help", "esc", "?", "q")
	keySuggestUp   = key.NewBinding(key.WithKeys("up", "ctrl+p"))
	keySuggestDown = key.NewBinding(key.WithKeys("down", "ctrl+n"))
)
