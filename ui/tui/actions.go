package tui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/danger"
)

// actionKind is what an action dialog would do.
type actionKind int

const (
	actionRun actionKind = iota
	actionMark
)

// action is one operator action: run a model (a window of it, or the whole
// model) with a STATE_MODE, or mark a window applied or pending. Actions are
// dangerous by nature: the keys that open them are not bound under
// --read-only, and the engine refuses them too. How dangerous, and so how
// the dialog confirms it, is its danger level (ui/danger), which the
// command line reads as well.
type action struct {
	kind   actionKind
	model  string
	window *state.Window // nil: no window (the whole model)
	mode   spec.StateMode
	status state.UnitStatus // actionMark
	// downstream lets a fix flow on to what waits behind it, whatever the
	// mode. The engine's run window is one for every model, and a
	// downstream day does not fit an upstream hour: a discover with
	// downstream is a discover of the whole closure (the engine's
	// --downstream: every failed, blocked or pending unit of each model),
	// not of the window alone; a bulldozer or a torch runs its window as
	// chosen and then, in turn, what that releases downstream
	// (engine.RunRequest.RunReleased).
	downstream bool
	// pipeline, when set, runs every model of the pipeline (the engine's
	// --pipeline) instead of model.
	pipeline string
	// batch, when set, is the runs of "run every ready unit": one discover
	// run per stretch of ready windows of a model (readyRequests), run one
	// after the other. It takes no STATE_MODE; with downstream each run
	// goes on to what it releases, in turn (engine.RunRequest.RunReleased),
	// so the months behind ready days run once the days are applied.
	batch []engine.RunRequest
	// outdated rebuilds the model's outdated windows (the engine's
	// --outdated, in bulldozer mode), and with downstream the windows
	// built on them.
	outdated bool
}

// danger is how much harm the action can do.
func (a action) danger() danger.Level {
	if a.kind == actionMark {
		return danger.Mark
	}
	if len(a.batch) > 0 {
		return danger.Run(spec.Discover)
	}
	return danger.Run(a.request().Mode)
}

// request is the engine request of a run action.
func (a action) request() engine.RunRequest {
	req := engine.RunRequest{Models: []string{a.model}, Mode: a.mode}
	if a.outdated {
		return engine.RunRequest{Models: []string{a.model}, Outdated: true, Downstream: a.downstream}
	}
	if a.pipeline != "" {
		req.Models, req.Pipeline = nil, a.pipeline
	}
	if a.downstream && a.mode == spec.Discover {
		req.Downstream = true
		return req
	}
	req.RunReleased = a.downstream
	if a.window != nil {
		w := *a.window
		req.Window = &w
	}
	return req
}

// closure reports whether the run is a discover of the downstream closure
// (a discover with downstream), whose plan lists every model.
func (a action) closure() bool {
	return a.downstream && a.mode == spec.Discover && len(a.batch) == 0 && !a.outdated
}

// requests are the engine requests the action runs, in order: the batch,
// or the one request.
func (a action) requests() []engine.RunRequest {
	if len(a.batch) > 0 && a.downstream {
		out := slices.Clone(a.batch)
		for i := range out {
			out[i].RunReleased = true
		}
		return out
	}
	if len(a.batch) > 0 {
		return a.batch
	}
	return []engine.RunRequest{a.request()}
}

// name is what a torch confirmation must type: the model's name, or the
// pipeline's.
func (a action) name() string {
	if a.pipeline != "" {
		return a.pipeline
	}
	return a.model
}

// target names what the action touches: "raw.orders [2026-01-01
// 05:00–06:00]", its window printed by window (common.window: the header's
// zone).
func (a action) target(window func(state.Window) string) string {
	switch {
	case len(a.batch) > 0 && a.downstream:
		return "the ready units and downstream"
	case len(a.batch) > 0:
		return "the ready units"
	case a.outdated && a.downstream:
		return "the outdated windows of " + a.model + " and those built on them"
	case a.outdated:
		return "the outdated windows of " + a.model
	case a.pipeline != "" && a.downstream:
		return "pipeline " + a.pipeline + " and downstream"
	case a.pipeline != "":
		return "pipeline " + a.pipeline
	case a.closure():
		return a.model + " and downstream"
	}
	target := a.model
	if a.window != nil && !a.window.IsZero() {
		target += " [" + window(*a.window) + "]"
	}
	if a.downstream {
		target += " and downstream"
	}
	return target
}

// modes is the order tab cycles STATE_MODE in a run dialog: the safe one
// first, the default next, the destructive one last.
var modes = []spec.StateMode{spec.Discover, spec.Bulldozer, spec.Torch}

// liveRun is a run this UI started, shown with its progress while it goes
// on in the background.
type liveRun struct {
	id      int // local id, for routing its events
	action  action
	started time.Time
	runID   int64
	// progress is the newest report per task, by model.
	progress map[string]engine.Progress
	done     bool
	result   *engine.RunResult
	err      error
}

// runEvents carries a background run's reports to the event loop: the
// engine's progress callback (called on the run's goroutines) only stores
// the newest report per task and pokes a one-slot channel, so a fast run
// never waits on the UI and the UI never drowns in reports.
type runEvents struct {
	mu       sync.Mutex
	progress map[string]engine.Progress
	runID    int64
	poke     chan struct{}
	done     chan struct{}
	result   *engine.RunResult
	err      error
}

func (ev *runEvents) report(p engine.Progress) {
	ev.mu.Lock()
	ev.progress[p.Model] = p
	ev.runID = p.RunID
	ev.mu.Unlock()
	select {
	case ev.poke <- struct{}{}:
	default:
	}
}

func (ev *runEvents) snapshot() (map[string]engine.Progress, int64) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return maps.Clone(ev.progress), ev.runID
}

// startRun starts the run in the background and returns the Cmd that waits
// for its first report. The run lives on ctx (the program's): quitting the
// UI cancels it, and the engine puts interrupted units back to pending.
func startRun(ctx context.Context, e *engine.Engine, owned *sync.WaitGroup, local int, a action) tea.Cmd {
	// Started here, in Update on the program's goroutine, so the Add
	// happens before the program ends and its owner calls WaitRuns; a Cmd
	// runs on a goroutine Bubble Tea does not wait for.
	ev := &runEvents{progress: map[string]engine.Progress{}, poke: make(chan struct{}, 1), done: make(chan struct{})}
	owned.Add(1)
	go func() {
		defer owned.Done()
		defer close(ev.done)
		res, err := runAll(ctx, e, a.requests(), ev.report)
		ev.mu.Lock()
		ev.result, ev.err = res, err
		if res != nil {
			ev.runID = res.RunID
		}
		ev.mu.Unlock()
	}()
	return waitRun(local, ev)
}

// runAll runs the requests one after the other, stopping at the first
// that cannot run (a refusal, a cancel); one request's result is its own,
// several are folded into one (runResults).
func runAll(ctx context.Context, e *engine.Engine, reqs []engine.RunRequest, progress func(engine.Progress)) (*engine.RunResult, error) {
	var results []*engine.RunResult
	for _, req := range reqs {
		res, err := e.Run(ctx, req, e.Executor(), progress)
		if res != nil {
			results = append(results, res)
		}
		if err != nil {
			return runResults(results), err
		}
	}
	return runResults(results), nil
}

// runResults folds the results of a batch into one: every task, the hard
// errors summed, the newest run's id (the runs view lists the others).
func runResults(rs []*engine.RunResult) *engine.RunResult {
	switch len(rs) {
	case 0:
		return nil
	case 1:
		return rs[0]
	}
	out := &engine.RunResult{RunID: rs[len(rs)-1].RunID, Mode: rs[0].Mode}
	for _, r := range rs {
		out.Tasks = append(out.Tasks, r.Tasks...)
		out.HardErrors += r.HardErrors
		out.Then = append(out.Then, r.Then...)
	}
	return out
}

// allTasks are a run's tasks and those of the runs it went on to (Then:
// what a run with downstream released, run in turn), for its summary.
func allTasks(r *engine.RunResult) []engine.TaskResult {
	out := slices.Clone(r.Tasks)
	for _, then := range r.Then {
		out = append(out, allTasks(then)...)
	}
	return out
}

// waitRun waits for the run's next report or its end.
func waitRun(local int, ev *runEvents) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-ev.poke:
			p, id := ev.snapshot()
			return runEventMsg{run: local, progress: p, runID: id, events: ev}
		case <-ev.done:
			p, id := ev.snapshot()
			ev.mu.Lock()
			defer ev.mu.Unlock()
			return runEventMsg{run: local, progress: p, runID: id, done: true, result: ev.result, err: ev.err, events: ev}
		}
	}
}

// markCmd marks the window through the engine (audited there).
func markCmd(ctx context.Context, e *engine.Engine, a action) tea.Cmd {
	return func() tea.Msg {
		var w state.Window
		if a.window != nil {
			w = *a.window
		}
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		n, err := e.Mark(ctx, a.model, w, a.status)
		return markDoneMsg{model: a.model, status: a.status, n: n, err: err}
	}
}

// runSummary is one line for a finished run, naming the key that opens
// it early enough that an 80-column footer keeps it: "run 7 succeeded (w
// opens it): discover, 3 tasks, 24 applied, 2 blocked, 0 failed".
func runSummary(r *liveRun, window func(state.Window) string) string {
	open := ""
	if r.runID > 0 {
		open = " (" + openRunHint + ")"
	}
	if r.err != nil {
		id := ""
		if r.runID > 0 {
			id = fmt.Sprintf(" %d", r.runID)
		}
		return fmt.Sprintf("run%s of %s failed%s: %v", id, r.action.target(window), open, r.err)
	}
	if r.result == nil {
		return fmt.Sprintf("run of %s ended%s", r.action.target(window), open)
	}
	var applied, blocked, failed int
	tasks := allTasks(r.result)
	for _, t := range tasks {
		applied += t.Applied
		blocked += t.Blocked
		failed += t.Failed
	}
	outcome := "succeeded"
	if r.result.Failed() || failed > 0 {
		outcome = "failed"
	}
	if n := len(r.action.batch); n > 1 {
		return fmt.Sprintf("%d runs of the ready units (last run %d) %s%s: %s, %s, %d applied, %d blocked, %d failed", n, r.result.RunID,
			outcome, open, r.result.Mode, plural(len(tasks), "task", "tasks"), applied, blocked, failed)
	}
	return fmt.Sprintf("run %d %s%s: %s, %s, %d applied, %d blocked, %d failed", r.result.RunID, outcome, open,
		r.result.Mode, plural(len(tasks), "task", "tasks"), applied, blocked, failed)
}

// openRunHint is what a run's footer message says of the key that opens
// the run (keyMap.OpenRun).
const openRunHint = "w opens it"
