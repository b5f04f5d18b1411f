package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
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

	// Yank copies the selected unit's model and window, YankError its
	// error, to the clipboard of the terminal (OSC 52): reading, so
	// bound under read-only too.
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
}

// newKeyMap is the keymap of a UI drawing with rs.
func newKeyMap(readOnly bool, rs renderers) keyMap {
	k := keyMap{
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Palette: key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		// - as in k9s; the timeline's zoom out is _ for it.
		Previous: key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "previous screen")),

		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
		Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),

		ToggleGraph: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "graph/list")),
		NextGraph:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pipeline")),
		PrevGraph:   key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pipeline")),
		EdgeUp:      key.NewBinding(key.WithKeys("["), key.WithHelp("[", "to upstream")),
		EdgeDown:    key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "to downstream")),
		Left:        key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "left")),
		Right:       key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "right")),
		ZoomIn:      key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "zoom in")),
		ZoomOut:     key.NewBinding(key.WithKeys("_"), key.WithHelp("_", "zoom out")),
		Blocking:    key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "blocking upstream")),
		Model:       key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open model")),
		Upstream:    key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "upstream")),
		Detail:      key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "unit detail")),
		Yank:        key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy unit")),
		YankError:   key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy error")),
		// "✗/⊘": the glyphs of failed and blocked, short enough for the
		// footer at 80 columns.
		NextProblem: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next ✗/⊘")),
		PrevProblem: key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous ✗/⊘")),
		Times:       key.NewBinding(key.WithKeys("t")),
		Zone:        key.NewBinding(key.WithKeys("T")),
		TimesHelp:   key.NewBinding(key.WithKeys("t", "T"), key.WithHelp("t/T", "times ago/abs, UTC/local")),
		OpenRun:     key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "open the run started last"), key.WithDisabled()),

		RunWindow:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run window")),
		RunModel:    key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "run model")),
		MarkApplied: key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "mark applied")),
		MarkPending: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "mark pending")),
		RunReady:    key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "run every ready unit")),
		Rebuild:     key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "rebuild outdated")),
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
	g := []key.Binding{k.Palette, k.Filter, k.Back, k.Previous}
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
// line still ends with "? help" (the full list is there), with "q quit"
// before it when that fits; then, most important first, as many of the
// rest as fit: the screen's first key (enter), esc back, its other keys
// in its order (up to the first that does not fit, so a group is never
// shown with a hole in it), : command and / filter.
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
	pick(quit)
	if n > 0 {
		pick(0)
	}
	pick(back)
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
	keyConfirm     = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose"))
	keyCancel      = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	keyNextMode    = key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next mode"))
	keyPrevMode    = key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev mode"))
	keyDownstream  = key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "with downstream"))
	keyYes         = key.NewBinding(key.WithKeys("y"), key.WithHelp("y/n", "yes/no"))
	keyNo          = key.NewBinding(key.WithKeys("n"))
	keyButtonLeft  = key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/→", "button"))
	keyButtonRight = key.NewBinding(key.WithKeys("right", "l"))
	keyComplete    = key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete"))
	keyRunCommand  = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run command"))
	keyKeepFilter  = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter"))
	keyClearFilter = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter"))
	keyCloseHelp   = key.NewBinding(key.WithKeys("esc", "?", "q"), key.WithHelp("esc/?", "close help"))
	keySuggestUp   = key.NewBinding(key.WithKeys("up", "ctrl+p"))
	keySuggestDown = key.NewBinding(key.WithKeys("down", "ctrl+n"))
)
