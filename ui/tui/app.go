package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// App is the program's model: a router over a stack of views (imperative
// children that render and handle keys), plus the parts every screen
// shares — header, footer, banner, help, the command palette, the /
// filter, the action dialog, the change feed and the runs started here.
type App struct {
	// common is what the views share: the engine, the theme, the keys,
	// the size. The app changes it (a resize, a theme, an environment) and
	// every view sees the change.
	*common
	opts Options
	// owned counts the runs this UI started that have not ended; WaitRuns
	// waits for them. The App is never copied (Bubble Tea holds *App).
	owned sync.WaitGroup
	// refused is when each action was last refused and audited for a
	// read-only viewer.
	refused map[string]time.Time

	autoTheme bool // no theme asked for: follow the terminal's background
	mouse     bool // BOLLHAV_MOUSE=wheel: report the wheel (and so capture the mouse)
	readOnly  bool
	help      help.Model

	stack []view
	// history is the stacks jumps left (1–4, i, the palette's model and
	// why), newest last, at most historyMax: - goes back to the one
	// before, as k9s's - does.
	history [][]view

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

	quitting bool // q pressed once while a run is going on
	// toasted is the run the footer last spoke of, which w opens.
	toasted *liveRun
	// lastChange is when the newest change the feed brought happened
	// (the change's own time): "● live 14:03:22Z" says the UI is not
	// only connected but seeing changes. Zero until one arrives.
	lastChange time.Time
	// lastKey is the last key press, idleWarning the idle timeout's
	// banner, endReason why the UI quit by itself (idle.go).
	lastKey     time.Time
	idleWarning string
	endReason   string

	flash    string
	flashErr bool
	flashSeq int

	// frames, when set (tests), records every frame drawn.
	frames *frameRecorder
}

// newApp builds the program's model, drawing with rs (standardRenderers
// but in tests). It does no I/O: Init returns the first loads.
func newApp(ctx context.Context, e *engine.Engine, opts Options, rs renderers) (*App, error) {
	getenv := opts.Getenv
	th, err := themes.Select(opts.Theme, getenv)
	if err != nil {
		return nil, err
	}
	readOnly := opts.ReadOnly || e.ReadOnly()
	if readOnly && !e.ReadOnly() {
		// The engine refuses as well, whatever the UI offers.
		e = e.As(e.Actor(), true)
	}
	c := &common{ctx: ctx, eng: e, theme: th, keys: newKeyMap(readOnly, rs), render: rs, width: 80, height: 24,
		loc: viewerLocation(opts)}
	if c.gate = newLiveGate(e); opts.Feed != nil {
		c.gate = opts.Feed.gate // one index for every UI of the feed
	}
	a := &App{
		common: c, opts: opts, readOnly: readOnly,
		autoTheme: opts.Theme == "" && th.Name == themes.Default,
		help:      help.New(),
		mouse:     getenv("BOLLHAV_MOUSE") == "wheel",
	}
	c.feedPoll = a.feedPoll()
	c.topID = func() int { return a.top().base().id }
	a.styleHelp()
	first, err := a.initialView()
	if err != nil {
		return nil, err
	}
	a.stack = first
	return a, nil
}

// initialView is the stack Options.View asks for: pipelines at the bottom,
// so esc always leads back to the overview; by default the incidents on
// top of it.
func (a *App) initialView() ([]view, error) {
	c := a.common
	stack := []view{topViews[0].open(c)}
	switch name := a.opts.View; name {
	case "":
		// The default: the incidents on top of the pipelines. With
		// nothing wrong it steps aside once its report is traced
		// (allClearMsg); the first look before it cannot tell.
		inc := newIncidents(c)
		inc.landing, inc.firstLook = true, a.opts.FirstLook
		stack = append(stack, inc)
	case string(topViews[0].kind):
	case string(viewModel):
		if a.opts.Model == "" {
			return nil, errors.New("view model needs a model name")
		}
		stack = append(stack, newModel(c, a.opts.Model))
	case string(viewWhy):
		if a.opts.Model == "" {
			return nil, errors.New("view why needs a model name (and a time for a temporal model)")
		}
		stack = append(stack, newModel(c, a.opts.Model), newWhy(c, a.opts.Model, a.opts.At))
	default:
		t, ok := topViewNamed(name)
		if !ok {
			var names []string
			for _, t := range topViews {
				names = append(names, string(t.kind))
			}
			return nil, fmt.Errorf("unknown view %q: use %s, model or why", name, strings.Join(names, ", "))
		}
		stack = append(stack, t.open(c))
	}
	return stack, nil
}

// Init loads the first screen and subscribes to the change feed.
func (a *App) Init() tea.Cmd {
	cmds := []tea.Cmd{a.startLoad(a.top()), startFeed(a.ctx, a.eng, a.opts.Feed, a.feedPoll(), a.gate), a.startIdle()}
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
	a.beginLoad(b.id)
	return v.load(b.gen, only)
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
// else on top of the pipelines view. The stack left is remembered for -.
func (a *App) switchTo(k viewKind) tea.Cmd {
	t, ok := topViewNamed(string(k))
	if !ok || a.top().kind() == k {
		return nil
	}
	a.remember()
	for i, v := range a.stack {
		if v.kind() == k {
			a.stack = a.stack[:i+1]
			return a.reload(v, nil)
		}
	}
	a.stack = a.stack[:1]
	return a.push(t.open(a.common))
}

// Update is pure: it changes the model and returns Cmds for any I/O.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := a.drain(a.update(msg))
	a.cancelOffStack()
	return a, cmd
}

// drain handles what the views sent while the app handled a message
// (common.send), and what handling that sent, in order.
func (a *App) drain(cmd tea.Cmd) tea.Cmd {
	cmds := []tea.Cmd{cmd}
	for len(a.outbox) > 0 {
		msg := a.outbox[0]
		a.outbox = a.outbox[1:]
		cmds = append(cmds, a.update(msg))
	}
	return tea.Batch(cmds...)
}

func (a *App) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		return a.settle(a.top())
	case tea.BackgroundColorMsg:
		if a.autoTheme && !msg.IsDark() {
			a.theme = themes.Light()
			a.styleHelp()
		}
		return nil
	case tea.KeyPressMsg:
		a.lastKey, a.idleWarning = time.Now(), ""
		return a.handleKey(msg)
	case idleCheckMsg:
		return a.idleCheck()
	case tea.MouseWheelMsg:
		a.lastKey, a.idleWarning = time.Now(), ""
		if a.dialog == nil && a.palette == nil && !a.showHelp {
			a.top().wheel(msg)
			return a.settle(a.top())
		}
		return nil
	case loadResult:
		return a.handleLoaded(msg)
	case viewMsg:
		// A view's own message (a timer, a second request): the view
		// takes it, if it is still open.
		if v := a.viewByID(msg.viewID()); v != nil {
			return v.update(msg)
		}
		return nil
	case pushMsg:
		return a.push(msg.view)
	case actionMsg:
		return a.startAction(msg.action)
	case flashMsg:
		return a.setFlash(msg.text, msg.err)
	case allClearMsg:
		if len(a.stack) > 1 && a.top().base().id == msg.view {
			return tea.Batch(a.pop(), a.setFlash("all clear: nothing failed, blocked or stale", false))
		}
		return nil
	case reloadMsg:
		if v := a.viewByID(msg.view); v != nil {
			return a.reload(v, nil)
		}
		return nil
	case retryMsg:
		if v := a.viewByID(msg.view); v != nil {
			return a.reload(v, nil)
		}
		return nil
	case feedStartedMsg:
		a.feed, a.live, a.feedErr, a.feedBackoff = msg.sub, true, nil, 0
		return a.feed.next(a.ctx)
	case feedMsg:
		return a.handleFeed(msg)
	case feedRetryMsg:
		return startFeed(a.ctx, a.eng, a.opts.Feed, a.feedPoll(), a.gate)
	case planMsg:
		if a.dialog != nil {
			a.dialog.applyPlan(msg)
		}
		return nil
	case runEventMsg:
		return a.handleRunEvent(msg)
	case markDoneMsg:
		if msg.err != nil {
			return a.setFlash("mark failed: "+msg.err.Error(), true)
		}
		return tea.Batch(a.setFlash(fmt.Sprintf("marked %s of %s %s", plural(msg.n, "unit", "units"), msg.model, msg.status), false),
			a.reload(a.top(), nil))
	case flashClearMsg:
		if msg.seq == a.flashSeq {
			a.flash = ""
		}
		return nil
	}
	// Anything else (a text input's own messages) goes to the focused input.
	switch {
	case a.dialog != nil:
		return a.dialog.updateInput(msg)
	case a.palette != nil:
		return a.palette.updateInput(a, msg)
	case a.filterIn != nil:
		return a.filterIn.updateInput(msg)
	}
	return nil
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
	if act, ok := readOnlyActionKeys[msg.String()]; ok && a.readOnly {
		// The first refusal of an action a minute is audited; held keys
		// and repeats are only told, so a viewer cannot flood the log.
		if last, seen := a.refused[act]; seen && time.Since(last) < time.Minute {
			return a.setFlash("read-only: "+act+" refused", true)
		}
		if a.refused == nil {
			a.refused = map[string]time.Time{}
		}
		a.refused[act] = time.Now()
		return refuseCmd(a.ctx, a.eng, act, top.title())
	}
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
			return f.setFilter("")
		}
		return a.pop()
	}
	for i, b := range a.keys.Screens {
		if key.Matches(msg, b) {
			return a.switchTo(topViews[i].kind)
		}
	}
	if s, ok := top.(lineageSource); ok && key.Matches(msg, a.keys.Lineage) {
		if model, at, ok := s.lineageAt(); ok {
			return a.push(newLineage(a.common, model, at))
		}
		return a.setFlash("L: no model selected here", false)
	}
	if j, ok := top.(problemJumper); ok && (key.Matches(msg, a.keys.NextProblem) || key.Matches(msg, a.keys.PrevProblem)) {
		return a.jumpProblem(j, msg)
	}
	switch {
	case key.Matches(msg, a.keys.Previous):
		return a.previous()
	case key.Matches(msg, a.keys.OpenRun):
		return a.openToastedRun()
	case key.Matches(msg, a.keys.Times):
		a.times.absolute = !a.times.absolute
		return a.setFlash("times: "+map[bool]string{false: "ages (3h ago)", true: "absolute (2026-01-01 05:00Z)"}[a.times.absolute]+" · t toggles", false)
	case key.Matches(msg, a.keys.Zone):
		a.times.local = !a.times.local
		what := "UTC"
		if a.times.local {
			what = "local: every time and window in " + zoneName(a.loc, a.now())
		}
		return a.setFlash("times: "+what+" · T toggles", false)
	}
	return top.key(msg)
}

// openToastedRun opens the run the footer last spoke of, over the runs
// view (esc leads there); before the engine has given it an id, the runs
// view, where it is listed under "Started here".
func (a *App) openToastedRun() tea.Cmd {
	r := a.toasted
	if r == nil {
		return nil
	}
	cmd := a.switchTo(viewRuns)
	if r.runID == 0 {
		return cmd
	}
	return tea.Batch(cmd, a.push(newRun(a.common, r.runID)))
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

func (a *App) handleLoaded(msg loadResult) tea.Cmd {
	v := a.viewByID(msg.viewID())
	if v == nil {
		return nil // the view was closed
	}
	b := v.base()
	gen, err := msg.answer()
	if gen != b.gen {
		return nil // an answer to an older request
	}
	b.loading = false
	if err != nil {
		if a.ctx.Err() != nil {
			return nil
		}
		b.err = err
		var down storeDownError
		if !errors.As(err, &down) {
			// The store answered: the request itself is wrong (an unknown
			// model, a time before the model's start). Show it; retrying
			// would not help.
			return a.startLoad(v)
		}
		a.loadErr = down.err
		a.backoff = nextBackoff(a.backoff)
		b.ask(nil)
		id := b.id
		return tick(a.ctx, a.backoff, func(time.Time) tea.Msg { return retryMsg{view: id} })
	}
	b.err = nil
	if a.loadErr != nil {
		a.loadErr, a.backoff = nil, 0
	}
	cmd := v.update(msg)
	b.loaded = true
	if a.dialog != nil {
		return cmd // refresh pauses while a confirmation is open
	}
	return tea.Batch(cmd, a.settle(v), a.startLoad(v))
}

// settler is a view with follow-up I/O to ask for once its data, its size
// or its cursor changed outside a key press: the model view's timeline
// loading the time it now shows.
type settler interface {
	settle() tea.Cmd
}

func (a *App) settle(v view) tea.Cmd {
	if s, ok := v.(settler); ok {
		return s.settle()
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
		cmds = append(cmds, tick(a.ctx, a.feedBackoff, func(time.Time) tea.Msg { return feedRetryMsg{} }))
		return tea.Batch(cmds...)
	}
	if msg.all {
		a.lastChange = a.now()
	}
	for _, ch := range msg.changes {
		at := ch.At
		if at.IsZero() {
			at = a.now()
		}
		if at.After(a.lastChange) {
			a.lastChange = at
		}
	}
	switch {
	case msg.all:
		cmds = append(cmds, a.reload(a.top(), nil))
	case msg.verdicts && len(msg.changes) == 0:
		if v, ok := a.top().(verdictView); ok && v.showsVerdicts() {
			cmds = append(cmds, a.reload(a.top(), nil))
		}
	case len(msg.changes) > 0:
		if ok, only := a.top().affected(msg.changes); ok {
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
	a.toasted = r
	return tea.Batch(a.setFlash(runSummary(r, a.window), failed), a.reload(a.top(), nil))
}

// flashFor is how long a footer message stays.
const flashFor = 6 * time.Second

func (a *App) setFlash(s string, isErr bool) tea.Cmd {
	a.flash, a.flashErr = untrusted.Line(s), isErr // an error can quote a unit's or a store's words
	a.flashSeq++
	seq := a.flashSeq
	return tick(a.ctx, flashFor, func(time.Time) tea.Msg { return flashClearMsg{seq: seq} })
}

// startAction opens the dialog for an action, which loads its plan first.
// Under read-only there is no dialog: the keys are not even bound, and this
// is the second line.
func (a *App) startAction(act action) tea.Cmd {
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
	r := &liveRun{id: a.newID(), action: act, started: time.Now()}
	a.runs = append(a.runs, r)
	a.toasted = r
	a.keys.OpenRun.SetEnabled(true)
	return tea.Batch(startRun(a.ctx, a.eng, &a.owned, r.id, act),
		a.setFlash(fmt.Sprintf("started a %s run of %s — %s", act.mode, act.target(a.window), openRunHint), false),
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
	a.eng = a.eng.InEnv(env)
	a.stack, a.history = []view{topViews[0].open(a.common)}, nil
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

// modelLister is a view that has loaded a list of models: the palette
// completes their names.
type modelLister interface{ modelNames() []string }

// knownModels lists the model names the palette completes: the spec's and
// those the views have loaded (the pipelines view's, from the store).
func (a *App) knownModels() []string {
	seen := map[string]bool{}
	var out []string
	if a.eng.Spec() != nil {
		for _, m := range a.eng.Spec().Models {
			seen[m.Name] = true
			out = append(out, m.Name)
		}
	}
	for _, v := range a.stack {
		if l, ok := v.(modelLister); ok {
			for _, m := range l.modelNames() {
				if !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// oneLine folds a multi-line message.
func oneLine(s string) string { return untrusted.Line(strings.Join(strings.Fields(s), " ")) }
