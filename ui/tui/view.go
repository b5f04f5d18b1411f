package tui

import (
	"maps"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/state"
)

// viewKind names a kind of screen: the name Options.View, the palette and
// the tests know it by. Each view's file declares its own.
type viewKind string

// view is one screen of the stack. The app owns the stack and routes to
// the views: key presses to the top one, every message that carries a
// view's id (viewMsg) to that view. A view never does I/O: load returns
// the Cmd that does, and the view's update takes the answer. What a view
// may reach of the program is its common, no more.
type view interface {
	base() *viewBase
	kind() viewKind
	// title is the view's part of the header's breadcrumb.
	title() string
	// load returns the Cmd that reads the view's data as a loaded[T] of
	// the view's own data type; only, when not empty, narrows a reload to
	// those models (views that cannot narrow reload everything).
	load(gen uint64, only []string) tea.Cmd
	// update takes a message for the view: its data, once the app has
	// checked that it answers the newest request and did not fail, or one
	// of its own messages (a timer, a second request).
	update(msg viewMsg) tea.Cmd
	// key handles a key press the app did not take; it may return a Cmd.
	key(msg tea.KeyPressMsg) tea.Cmd
	// wheel scrolls for the mouse wheel.
	wheel(msg tea.MouseWheelMsg)
	// render draws the body: exactly h lines of at most w cells.
	render(w, h int) []string
	// bindings are the view's own keys, for the footer and the help.
	bindings() []key.Binding
	// affected reports whether a change in the store touches the view's
	// data, and which models to reload (nil: everything).
	affected(changes []state.Change) (bool, []string)
}

// viewMsg is a message for one view, routed by its id.
type viewMsg interface{ viewID() int }

// filterable is a view with a / filter. setFilter filters at once, or
// answers with the command that works the filtered list out off the event
// loop when that takes longer than a frame (the Blocked queue at scale).
type filterable interface {
	filter() string
	setFilter(s string) tea.Cmd
}

// The views with a / filter: an assertion here, because the key is offered
// by a type check that a changed signature would fail silently.
var (
	_ filterable = (*pipelinesView)(nil)
	_ filterable = (*blockedView)(nil)
	_ filterable = (*modelView)(nil)
	_ filterable = (*auditView)(nil)
)

// viewBase is the bookkeeping every view shares: its id for routing, the
// generation of its newest request, and what a reload still owes.
type viewBase struct {
	c       *common
	id      int
	gen     uint64
	loading bool
	loaded  bool
	err     error
	// wantAll and want are reloads asked for while one was in flight: one
	// request at a time per view, so answers never arrive out of order.
	wantAll bool
	want    map[string]bool
}

func (b *viewBase) base() *viewBase { return b }

// newBase is the bookkeeping of a new view on c.
func newBase(c *common) viewBase { return viewBase{c: c, id: c.newID()} }

// ask records a reload of only (nil: everything).
func (b *viewBase) ask(only []string) {
	if only == nil {
		b.wantAll = true
		return
	}
	if b.want == nil {
		b.want = map[string]bool{}
	}
	for _, m := range only {
		b.want[m] = true
	}
}

// take returns what to load now and clears it: all, or the models asked
// for; ok is false when nothing is owed.
func (b *viewBase) take() (only []string, ok bool) {
	if b.wantAll || !b.loaded {
		b.wantAll, b.want = false, nil
		return nil, true
	}
	if len(b.want) == 0 {
		return nil, false
	}
	only = slices.Collect(maps.Keys(b.want))
	b.want = nil
	return only, true
}

// changedModels are the distinct models of env among changes.
func changedModels(env string, changes []state.Change) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range changes {
		if c.Env == env && !seen[c.Model] {
			seen[c.Model] = true
			out = append(out, c.Model)
		}
	}
	return out
}

// loadingLines is a body that says the view is loading (or failed to).
func loadingLines(b *viewBase, w, h int) []string {
	lines := make([]string, h)
	msg := "loading…"
	if b.err != nil {
		msg = b.c.theme.Error.Render("could not load: ") + oneLine(b.err.Error())
	}
	if h > 0 {
		lines[0] = fit(" "+msg, w)
	}
	for i := 1; i < h; i++ {
		lines[i] = fit("", w)
	}
	return lines
}

// pad fills lines up to h lines of w cells, cutting what does not fit.
func pad(lines []string, w, h int) []string {
	if len(lines) > h {
		lines = lines[:h]
	}
	for i := range lines {
		lines[i] = fit(lines[i], w)
	}
	for len(lines) < h {
		lines = append(lines, fit("", w))
	}
	return lines
}
