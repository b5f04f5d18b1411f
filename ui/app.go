package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// App is the program's model: a router over a stack of views (imperative
// children that render and handle keys), plus the parts every screen
// shares — header, footer, banner, help, the command palette, the /
// filter, the action dialog, the change feed and the runs started here.
type App struct {
	ctx  context.Context
	eng  *engine.Engine
	opts Options

	theme     themes.Theme
	autoTheme bool // no theme asked for: follow the terminal's background
	readOnly  bool
	keys      keyMap
	help      help.Model

	width, height int
	stack         []view
	nextID        int

	showHelp bool
	palette  *palette
	filterIn *filterInput
	dialog   *dialog

	feed        *subscription
	live        bool
	feedErr     error
	feedBackoff time.Duration
	loadErr     error
	backoff     time.Duration

	runs     []*liveRun
	quitting bool // q pressed once while a run is going on

	flash    string
	flashErr bool
	flashSeq int

	// frames, when set (tests), records every frame drawn.
	frames *frameRecorder
}

// newApp builds the program's model. It does no I/O: Init returns the
// first loads.
func newApp(ctx context.Context, e *engine.Engine, opts Options) (*App, error) {
	getenv := opts.Getenv
	th, err := themes.Select(opts.Theme, getenv)
	if err != nil {
		return nil, err
	}
	readOnly := opts.ReadOnly || e.ReadOnly
	if readOnly && !e.ReadOnly {
		// The engine refuses as well, whatever the UI offers.
		ec := *e
		ec.ReadOnly = true
		e = &ec
	}
	a := &App{
		ctx: ctx, eng: e, opts: opts, theme: th, readOnly: readOnly,
		autoTheme: opts.Theme == "" && th.Name == themes.Default,
		keys:      newKeyMap(readOnly),
		help:      help.New(),
		width:     80, height: 24,
	}
	a.styleHelp()
	first, err := a.initialView()
	if err != nil {
		return nil, err
	}
	a.stack = first
	return a, nil
}

// initialView is the stack Options.View asks for: pipelines at the bottom,
// so esc always leads back to the overview.
func (a *App) initialView() ([]view, error) {
	stack := []view{a.newPipelines()}
	switch a.opts.View {
	case "", "pipelines":
	case "blocked":
		stack = append(stack, a.newBlocked())
	case "runs":
		stack = append(stack, a.newRuns())
	case "audit":
		stack = append(stack, a.newAudit())
	case "model":
		if a.opts.Model == "" {
			return nil, errors.New("view model needs a model name")
		}
		stack = append(stack, a.newModel(a.opts.Model))
	case "why":
		if a.opts.Model == "" {
			return nil, errors.New("view why needs a model name (and a time for a temporal model)")
		}
		stack = append(stack, a.newModel(a.opts.Model), a.newWhy(a.opts.Model, a.opts.At))
	default:
		return nil, fmt.Errorf("unknown view %q: use pipelines, blocked, runs, audit, model or why", a.opts.View)
	}
	return stack, nil
}

func (a *App) id() int {
	a.nextID++
	return a.nextID
}

// Init loads the first screen and subscribes to the change feed.
func (a *App) Init() tea.Cmd {
	cmds := []tea.Cmd{a.startLoad(a.top()), startFeed(a.ctx, a.eng, a.opts.Feed, a.feedPoll())}
	if a.autoTheme {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (a *App) feedPoll() time.Duration {
	if a.opts.FeedPoll > 0 {
		return a.opts.FeedPoll
	}
	return DefaultFeedPoll
}

func (a *App) top() view { return a.stack[len(a.stack)-1] }

func (a *App) viewByID(id int) view {
	for _, v := range a.stack {
		if v.base().id == id {
			return v
		}
	}
	return nil
}

// startLoad starts the view's owed reload unless one is in flight (then
// it runs when that one answers).
func (a *App) startLoad(v view) tea.Cmd {
	b := v.base()
	if b.loading {
		return nil
	}
	only, ok := b.take()
	if !ok {
		return nil
	}
	b.loading = true
	b.gen++
	return v.load(a, b.gen, only)
}

// reload asks the view for a reload of only (nil: everything).
func (a *App) reload(v view, only []string) tea.Cmd {
	v.base().ask(only)
	if a.dialog != nil {
		return nil // refresh pauses while a confirmation is open
	}
	return a.startLoad(v)
}

// push opens a view on top of the stack and loads it.
func (a *App) push(v view) tea.Cmd {
	a.stack = append(a.stack, v)
	return a.startLoad(v)
}

// pop goes back one view and reloads the one revealed, which did not
// follow the feed while hidden.
func (a *App) pop() tea.Cmd {
	if len(a.stack) == 1 {
		return nil
	}
	a.stack = a.stack[:len(a.stack)-1]
	return a.reload(a.top(), nil)
}

// switchTo shows a top-level view: back to it when it is on the stack,
// else on top of the pipelines view.
func (a *App) switchTo(k viewKind) tea.Cmd {
	for i, v := range a.stack {
		if v.kind() == k && (k == viewPipelines || k == viewBlocked || k == viewRuns || k == viewAudit) {
			a.stack = a.stack[:i+1]
			return a.reload(v, nil)
		}
	}
	a.stack = a.stack[:1]
	switch k {
	case viewBlocked:
		return a.push(a.newBlocked())
	case viewRuns:
		return a.push(a.newRuns())
	case viewAudit:
		return a.push(a.newAudit())
	}
	return a.reload(a.top(), nil)
}

func (a *App) openModel(name string) tea.Cmd { return a.push(a.newModel(name)) }

func (a *App) openWhy(model string, at time.Time) tea.Cmd { return a.push(a.newWhy(model, at)) }

// Update is pure: it changes the model and returns Cmds for any I/O.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		return a, a.settle(a.top())
	case tea.BackgroundColorMsg:
		if a.autoTheme && !msg.IsDark() {
			a.theme = themes.Light()
			a.styleHelp()
		}
		return a, nil
	case tea.KeyPressMsg:
		return a, a.handleKey(msg)
	case tea.MouseWheelMsg:
		if a.dialog == nil && a.palette == nil && !a.showHelp {
			a.top().wheel(msg)
			return a, a.settle(a.top())
		}
		return a, nil
	case loadedMsg:
		return a, a.handleLoaded(msg)
	case gateTickMsg:
		if v, ok := a.viewByID(msg.view).(*modelView); ok {
			return a, v.gateTick(a, msg)
		}
		return a, nil
	case gateMsg:
		if v, ok := a.viewByID(msg.view).(*modelView); ok {
			v.applyGate(msg)
		}
		return a, nil
	case auditTickMsg:
		if v, ok := a.viewByID(msg.view).(*auditView); ok {
			return a, v.tick(a, msg)
		}
		return a, nil
	case retryMsg:
		if v := a.viewByID(msg.view); v != nil {
			return a, a.reload(v, nil)
		}
		return a, nil
	case feedStartedMsg:
		a.feed, a.live, a.feedErr, a.feedBackoff = msg.sub, true, nil, 0
		return a, a.feed.next(a.ctx)
	case feedMsg:
		return a, a.handleFeed(msg)
	case feedRetryMsg:
		return a, startFeed(a.ctx, a.eng, a.opts.Feed, a.feedPoll())
	case planMsg:
		if a.dialog != nil {
			a.dialog.applyPlan(msg)
		}
		return a, nil
	case runEventMsg:
		return a, a.handleRunEvent(msg)
	case markDoneMsg:
		if msg.err != nil {
			return a, a.setFlash("mark failed: "+msg.err.Error(), true)
		}
		return a, tea.Batch(a.setFlash(fmt.Sprintf("marked %s of %s %s", plural(msg.n, "unit", "units"), msg.model, msg.status), false),
			a.reload(a.top(), nil))
	case flashClearMsg:
		if msg.seq == a.flashSeq {
			a.flash = ""
		}
		return a, nil
	}
	// Anything else (a text input's own messages) goes to the focused input.
	switch {
	case a.dialog != nil:
		return a, a.dialog.updateInput(msg)
	case a.palette != nil:
		return a, a.palette.updateInput(a, msg)
	case a.filterIn != nil:
		return a, a.filterIn.updateInput(msg)
	}
	return a, nil
}

func (a *App) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return a.quit(true)
	}
	if !key.Matches(msg, a.keys.Quit) {
		a.quitting = false
	}
	switch {
	case a.showHelp:
		if key.Matches(msg, keyCloseHelp) {
			a.showHelp = false
		}
		return nil
	case a.dialog != nil:
		return a.dialog.key(a, msg)
	case a.palette != nil:
		return a.palette.key(a, msg)
	case a.filterIn != nil:
		return a.filterIn.key(a, msg)
	}
	top := a.top()
	switch {
	case key.Matches(msg, a.keys.Quit):
		return a.quit(false)
	case key.Matches(msg, a.keys.Help):
		a.showHelp = true
		return nil
	case key.Matches(msg, a.keys.Palette):
		a.palette = newPalette(a)
		return nil
	case key.Matches(msg, a.keys.Filter):
		if f, ok := top.(filterable); ok {
			a.filterIn = newFilterInput(a, f)
			return nil
		}
		return nil
	case key.Matches(msg, a.keys.Back):
		if f, ok := top.(filterable); ok && f.filter() != "" {
			f.setFilter("")
			return nil
		}
		return a.pop()
	case key.Matches(msg, a.keys.Pipelines):
		return a.switchTo(viewPipelines)
	case key.Matches(msg, a.keys.Blocked):
		return a.switchTo(viewBlocked)
	case key.Matches(msg, a.keys.Runs):
		return a.switchTo(viewRuns)
	case key.Matches(msg, a.keys.Audit):
		return a.switchTo(viewAudit)
	}
	return top.key(a, msg)
}

// quit ends the program; with a run going on, q asks first (a second q
// quits and cancels the run; the engine puts its units back to pending).
func (a *App) quit(force bool) tea.Cmd {
	if !force && !a.quitting && a.activeRuns() > 0 {
		a.quitting = true
		return a.setFlash("a run is in progress: press q again to quit and cancel it", true)
	}
	return tea.Quit
}

func (a *App) activeRuns() int {
	n := 0
	for _, r := range a.runs {
		if !r.done {
			n++
		}
	}
	return n
}

// backoff bounds for retrying a failed load.
const (
	backoffMin = 500 * time.Millisecond
	backoffMax = 30 * time.Second
)

func nextBackoff(d time.Duration) time.Duration { return min(max(2*d, backoffMin), backoffMax) }

func (a *App) handleLoaded(msg loadedMsg) tea.Cmd {
	v := a.viewByID(msg.view)
	if v == nil {
		return nil // the view was closed
	}
	b := v.base()
	if msg.gen != b.gen {
		return nil // an answer to an older request
	}
	b.loading = false
	if msg.err != nil {
		if a.ctx.Err() != nil {
			return nil
		}
		b.err = msg.err
		var down storeDownError
		if !errors.As(msg.err, &down) {
			// The store answered: the request itself is wrong (an unknown
			// model, a time before the model's start). Show it; retrying
			// would not help.
			return a.startLoad(v)
		}
		a.loadErr = down.err
		a.backoff = nextBackoff(a.backoff)
		b.ask(nil)
		id := b.id
		return tea.Tick(a.backoff, func(time.Time) tea.Msg { return retryMsg{view: id} })
	}
	b.err = nil
	if a.loadErr != nil {
		a.loadErr, a.backoff = nil, 0
	}
	v.apply(a, msg.data)
	b.loaded = true
	if a.dialog != nil {
		return nil
	}
	return tea.Batch(a.settle(v), a.startLoad(v))
}

// settler is a view with follow-up I/O to ask for once its data, its size
// or its cursor changed outside a key press: the model view's timeline
// loading the time it now shows.
type settler interface {
	settle(a *App) tea.Cmd
}

func (a *App) settle(v view) tea.Cmd {
	if s, ok := v.(settler); ok {
		return s.settle(a)
	}
	return nil
}

func (a *App) handleFeed(msg feedMsg) tea.Cmd {
	var cmds []tea.Cmd
	if msg.errSet {
		recovered := a.feedErr != nil && msg.err == nil
		a.feedErr = msg.err
		a.live = msg.err == nil
		if recovered {
			cmds = append(cmds, a.reload(a.top(), nil))
		}
	}
	if msg.closed {
		a.feed, a.live = nil, false
		if a.ctx.Err() != nil {
			return nil
		}
		a.feedBackoff = nextBackoff(a.feedBackoff)
		cmds = append(cmds, tea.Tick(a.feedBackoff, func(time.Time) tea.Msg { return feedRetryMsg{} }))
		return tea.Batch(cmds...)
	}
	switch {
	case msg.all:
		cmds = append(cmds, a.reload(a.top(), nil))
	case len(msg.changes) > 0:
		if ok, only := a.top().affected(a, msg.changes); ok {
			cmds = append(cmds, a.reload(a.top(), only))
		}
	}
	if a.feed != nil {
		cmds = append(cmds, a.feed.next(a.ctx))
	}
	return tea.Batch(cmds...)
}

func (a *App) handleRunEvent(msg runEventMsg) tea.Cmd {
	var r *liveRun
	for _, x := range a.runs {
		if x.id == msg.run {
			r = x
		}
	}
	if r == nil {
		return nil
	}
	r.progress, r.runID = msg.progress, msg.runID
	if !msg.done {
		return waitRun(msg.run, msg.events)
	}
	r.done, r.result, r.err = true, msg.result, msg.err
	if r.result != nil {
		r.runID = r.result.RunID
	}
	failed := r.err != nil || (r.result != nil && r.result.Failed())
	return tea.Batch(a.setFlash(runSummary(r), failed), a.reload(a.top(), nil))
}

// flashFor is how long a footer message stays.
const flashFor = 6 * time.Second

func (a *App) setFlash(s string, isErr bool) tea.Cmd {
	a.flash, a.flashErr = s, isErr
	a.flashSeq++
	seq := a.flashSeq
	return tea.Tick(flashFor, func(time.Time) tea.Msg { return flashClearMsg{seq: seq} })
}

// openAction opens the dialog for an action, which loads its plan first.
// Under read-only there is no dialog: the keys are not even bound, and this
// is the second line.
func (a *App) openAction(act action) tea.Cmd {
	if a.readOnly {
		return a.setFlash(engine.ErrReadOnly.Error(), true)
	}
	a.dialog = newDialog(a, act)
	return a.dialog.replan(a)
}

// confirmAction runs a confirmed action in the background.
func (a *App) confirmAction(act action) tea.Cmd {
	a.dialog = nil
	if act.kind == actionMark {
		return tea.Batch(markCmd(a.ctx, a.eng, act), a.startLoad(a.top()))
	}
	r := &liveRun{id: a.id(), action: act, started: time.Now()}
	a.runs = append(a.runs, r)
	return tea.Batch(startRun(a.ctx, a.eng, r.id, act),
		a.setFlash(fmt.Sprintf("started a %s run of %s — 3 shows runs", act.mode, act.target()), false),
		a.startLoad(a.top()))
}

// closeDialog cancels the dialog and catches up on what changed meanwhile.
func (a *App) closeDialog() tea.Cmd {
	a.dialog = nil
	return a.startLoad(a.top())
}

// switchEnv reopens the UI on another environment (SCHEMA_SUFFIX).
func (a *App) switchEnv(suffix string) tea.Cmd {
	if suffix == "prod" {
		suffix = ""
	}
	env, err := spec.ParseEnv(suffix)
	if err != nil {
		return a.setFlash(err.Error(), true)
	}
	ec := *a.eng
	ec.Env = env
	a.eng = &ec
	a.stack = []view{a.newPipelines()}
	return tea.Batch(a.startLoad(a.top()), a.setFlash("environment "+env.String(), false))
}

// switchTheme changes the theme.
func (a *App) switchTheme(name string) tea.Cmd {
	th, err := themes.Get(name)
	if err != nil {
		return a.setFlash(err.Error(), true)
	}
	a.theme, a.autoTheme = th, false
	a.styleHelp()
	return a.setFlash("theme "+th.Name, false)
}

func (a *App) styleHelp() {
	s := help.Styles{
		ShortKey: a.theme.Accent, ShortDesc: a.theme.Muted, ShortSeparator: a.theme.Muted,
		FullKey: a.theme.Accent, FullDesc: a.theme.Base, FullSeparator: a.theme.Muted,
		Ellipsis: a.theme.Muted,
	}
	a.help.Styles = s
	a.help.ShortSeparator = " · "
	a.help.FullSeparator = "    "
}

// knownModels lists the model names the palette completes: the spec's and
// those the pipelines view has loaded.
func (a *App) knownModels() []string {
	seen := map[string]bool{}
	var out []string
	if a.eng.Spec != nil {
		for _, m := range a.eng.Spec.Models {
			seen[m.Name] = true
			out = append(out, m.Name)
		}
	}
	for _, v := range a.stack {
		if p, ok := v.(*pipelinesView); ok {
			for _, m := range p.models {
				if !seen[m.Name] {
					seen[m.Name] = true
					out = append(out, m.Name)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// now is the engine's clock, for ages.
func (a *App) now() time.Time { return a.eng.Clock() }

// envChanges keeps the changes of the app's environment.
func (a *App) envChanges(changes []state.Change) []state.Change {
	var out []state.Change
	for _, c := range changes {
		if c.Env == a.eng.Env.Suffix {
			out = append(out, c)
		}
	}
	return out
}

// View draws the frame: header, banner, body (or an overlay), footer.
func (a *App) View() tea.View {
	content := a.render()
	if a.frames != nil {
		a.frames.record(content, a)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "bollhav — " + a.eng.Env.String()
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
		body = a.dialog.render(a, w, bodyH)
	default:
		body = a.top().render(a, w, bodyH)
		if a.palette != nil {
			body = a.palette.overlay(a, body, w)
		}
	}
	lines = append(lines, pad(body, w, bodyH)...)
	lines = append(lines, a.footer(w))
	return strings.Join(lines, "\n")
}

// header: app, environment (loud for prod), store backend, breadcrumb,
// live indicator.
func (a *App) header(w int) string {
	t := a.theme
	env := t.Dev.Render(" " + a.eng.Env.String() + " ")
	if !a.eng.Env.Suffixed() {
		env = t.Prod.Render(" prod ")
	}
	ro := ""
	if a.readOnly {
		ro = " " + t.Muted.Render("read-only")
	}
	left := t.Accent.Render(" bollhav ") + env + " " + t.Muted.Render(a.eng.Store.Backend()) + ro + "  "
	var crumbs []string
	for i, v := range a.stack {
		title := v.title()
		// "why 2026-01-01" under its own model, not the model again.
		if wv, ok := v.(*whyView); ok && i > 0 {
			if mv, ok := a.stack[i-1].(*modelView); ok && mv.name == wv.model {
				title = strings.Replace(title, "why "+wv.model+" ", "why ", 1)
			}
		}
		crumbs = append(crumbs, title)
	}
	trail := strings.Join(crumbs, " › ")
	right := ""
	if n := a.activeRuns(); n > 0 {
		right += t.Status(themes.Running).Render(themes.Glyph(themes.Running)+" "+plural(n, "run", "runs")) + "  "
	}
	switch {
	case a.live:
		right += t.Status(themes.Applied).Render("● live") + " "
	case a.feedErr != nil:
		right += t.Error.Render("○ offline") + " "
	default:
		right += t.Muted.Render("○ connecting") + " "
	}
	room := w - width(left) - width(right) - 1
	return spread(left+t.Base.Render(clipLeft(trail, max(room, 0))), " "+right, w)
}

// banner reports a lost store connection; empty when all is well.
func (a *App) banner(w int) string {
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
		keys = a.keys.footerKeys(h, a.top().bindings(a), filterable, len(a.stack) > 1, w-1)
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
	return a.keys.screenHelp(a.top().bindings(a), filterable, len(a.stack) > 1)
}

// helpBody is the full help of the screen below, and the status legend.
// On a terminal too short for it all, the blank lines between its parts go
// first.
func (a *App) helpBody(w, h int) []string {
	t := a.theme
	_, filterable := a.top().(filterable)
	below := a.keys.screenHelp(a.top().bindings(a), filterable, len(a.stack) > 1)
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
	lines = append(lines, " "+strings.Join(legend, "  "))
	lines = append(lines, gap, " "+t.Accent.Render("Commands")+t.Muted.Render("  (: then enter; tab completes)"))
	for _, c := range paletteCommands {
		lines = append(lines, "   "+t.Accent.Render(c.name)+" "+t.Muted.Render(c.args)+strings.Repeat(" ", max(1, 22-width(c.name+" "+c.args)))+c.help)
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

// oneLine folds a multi-line message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
