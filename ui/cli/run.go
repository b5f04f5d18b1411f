package cli

import (
	"bufio"
	gocontext "context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/danger"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/muesli/cancelreader"
	"github.com/spf13/pflag"
)

// runFlags are the flags run and plan share (plan leaves out the last
// group).
type runFlags struct {
	pipeline         string
	since, until     string
	mode             string
	intervalOverride string
	downstream       bool
	outdated         bool

	workers int
	yes     bool
	retry   int64
}

func (f *runFlags) register(fs *pflag.FlagSet, forRun bool) {
	*f = runFlags{}
	fs.StringVar(&f.pipeline, "pipeline", "", "run every task of this pipeline")
	fs.StringVar(&f.since, "since", "", "run window start (RFC 3339 or a date); needs --until")
	fs.StringVar(&f.until, "until", "", "run window end, exclusive; needs --since")
	fs.StringVar(&f.mode, "mode", "", "STATE_MODE: discover, bulldozer (default) or torch (env STATE_MODE)")
	fs.StringVar(&f.intervalOverride, "interval-override", "", "re-chunk flexible models (and, under torch, fixed ones) at this interval (env INTERVAL_OVERRIDE)")
	fs.BoolVar(&f.downstream, "downstream", false, "add the downstream closure of the named models (with --outdated: the windows built on the outdated ones)")
	fs.BoolVar(&f.outdated, "outdated", false, "exactly the applied windows built under an earlier definition (of the named models, or every model), in bulldozer mode")
	if forRun {
		fs.IntVar(&f.workers, "workers", 1, "units to run at once per task")
		fs.BoolVar(&f.yes, "yes", false, "confirm a torch without asking (required without a terminal)")
		fs.Int64Var(&f.retry, "retry", 0, "resume the run with this id: SUCCESS and SKIPPED tasks stay, failed units run again")
	}
}

func init() {
	var f runFlags
	register(&command{
		name:    "run",
		args:    "[MODEL…]",
		summary: "run models, a pipeline or the whole spec for a window and a STATE_MODE",
		globals: append(storeGlobals, gReadOnly, gAllowLint, gTheme),
		long: `run registers the spec, plans the request exactly as 'bollhav plan' shows it,
applies the plan's state changes (prefill, resets, deletes) and executes the
tasks in dependency order (their task graph): ready tasks start, unsatisfiable
ones are SKIPPED, each unit is gated against its upstreams, then executed.

Scope: the named models (with --downstream, their downstream closure too), or
every model of --pipeline, or, with neither, every model of the spec.
Window: --since and --until together, half-open [since, until), aligned to
each fixed model's grid; neither means no window, which each mode reads as
the STATE_MODE table of docs/design.md says. --mode, --interval-override and
--env win over STATE_MODE, INTERVAL_OVERRIDE and SCHEMA_SUFFIX.

--outdated rebuilds exactly the outdated windows: applied units built under
an earlier definition of their model (its SQL, command, write, chunking or
sources changed; see 'bollhav status'), of the named models or of every model
that has any, inside --since/--until when given. They are reset to pending
and run in bulldozer mode, and are current afterwards. Units of unknown
definition (marked applied, or applied before bollhav recorded definitions)
are left alone. With --downstream it also rebuilds the windows built on
them: applied units downstream, through gated edges (EXISTS aside) and the
lineage, whose upstream windows in reach (overlapping for EXACT and
ENCAPSULATE, before it for THROUGH, any for WHOLE) are outdated or built on
outdated ones; they run after their upstreams, in the task graph's order.
A downstream window reaching past --since/--until is left out. It cannot be
combined with --mode discover|torch or --interval-override.

A sql, query or view model whose connection: {dsn_env_var: NAME} (or
defaults: connection) names a warehouse runs there: $NAME must hold its
PostgreSQL DSN. Unset or empty, run names it and exits 2 before the store is
opened. An unreachable warehouse or a refused login fails the units with one
line naming the server (never the password); the retry budget applies.

--mode torch deletes state: the plan is printed first, then on a terminal
you type "yes" to go on; without a terminal it needs --yes. --read-only
refuses every run.

On a terminal each running task shows a live line (units done/planned,
blocked, failed, elapsed); otherwise one line per task as it finishes. The
run ends with a summary table and, when it failed, its id and the command that
resumes it: --retry ID runs the failed units and the tasks that never ran, and
never repeats a reset. SIGINT or SIGTERM stops the run: no new unit starts,
the running units' commands are stopped, those units go back to pending with
no attempt counted, the run is recorded cancelled and the command exits 1;
--retry resumes it.

Exit status: 0 every task succeeded (blocked units are reported, not
failures); 1 a task failed, a hard gate error occurred, the run was
interrupted, or a torch was not confirmed; 2 bad usage, spec, window or DSN,
or a connection's variable unset (nothing was changed).

JSON (-o json) prints no progress, only the result:
  {"run_id": 7, "state_mode": "bulldozer",
   "tasks": [{"task": "raw.orders", "status": "SUCCESS",
              "units": {"applied": 24, "blocked": 0, "failed": 0},
              "rows_written": 1200}]}
status is SUCCESS, FAILED, SKIPPED or WAITING (not run: an after: edge onto
another pipeline's task that has no outcome for the window yet; it is
considered again on --retry); reason, when present, says why a task waits or
was skipped by such an edge; rows_written is null when no unit reported rows.

A failed task gets no other attempt in the same run, so its SUCCESS and
HAS_DATA dependents are SKIPPED and its ALWAYS and FAILURE dependents run; a
gated upstream only orders the tasks, and the contract gate blocks the
windows that need a failed unit. The summary names the discover run that
picks up skipped tasks' pending units.`,
		examples: []string{
			"bollhav run raw.orders --since 2026-01-01 --until 2026-01-02",
			"bollhav run --pipeline core --since 2026-01-01 --until 2026-02-01 --workers 4",
			"bollhav run raw.orders --downstream --mode discover",
			"bollhav run stage.events --mode bulldozer --interval-override 6h --since 2026-01-01 --until 2026-01-08",
			"bollhav run raw.orders --mode torch --yes -o json",
			"bollhav run --outdated",
			"bollhav run core.daily_revenue --outdated --since 2026-11-01 --until 2026-12-01",
			"bollhav run --retry 42",
		},
		flags: func(fs *pflag.FlagSet) { f.register(fs, true) },
		run:   func(c *cmdContext, args []string) int { return runRun(c, args, &f) },
		// A signal cancels the run, which exits 1 (the help says so).
		ownsSignals: true,
		memoryLimit: batchMemoryLimit,
	})
}

// runUsageLine prints one line for the command and returns exit code 2.
func (c *cmdContext) runUsageLine(cmd string, format string, args ...any) int {
	fmt.Fprintf(c.Err, "bollhav %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return ExitUsage
}

// runErrLines prints err, one line per joined error, for the command.
func (c *cmdContext) runErrLines(cmd string, err error) {
	for _, e := range unjoin(err) {
		for _, line := range strings.Split(e.Error(), "\n") {
			fmt.Fprintf(c.Err, "bollhav %s: %s\n", cmd, line)
		}
	}
}

// request turns the flags and model arguments into a run request; every
// problem is one line for the user.
func (f *runFlags) request(c *cmdContext, args []string) (engine.RunRequest, error) {
	req := engine.RunRequest{Models: args, Pipeline: f.pipeline, Downstream: f.downstream, Workers: f.workers, Outdated: f.outdated}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return req, fmt.Errorf("unexpected argument %q", a)
		}
	}
	sinceGiven, untilGiven := c.flagGiven("since"), c.flagGiven("until")
	switch {
	case sinceGiven && !untilGiven:
		return req, errors.New("--since needs --until: a run window is [since, until), give both or neither")
	case untilGiven && !sinceGiven:
		return req, errors.New("--until needs --since: a run window is [since, until), give both or neither")
	case sinceGiven:
		since, err := state.ParseTime(f.since)
		if err != nil {
			return req, fmt.Errorf("--since: %w", err)
		}
		until, err := state.ParseTime(f.until)
		if err != nil {
			return req, fmt.Errorf("--until: %w", err)
		}
		w, err := state.NewWindow(since, until)
		if err != nil {
			return req, err
		}
		req.Window = &w
	}
	mode, override, _, err := engine.ResolveRunSettings(engine.RunFlags{Mode: f.mode, IntervalOverride: f.intervalOverride,
		Env: c.Env, EnvGiven: c.flagGiven("env")}, os.Getenv)
	if err != nil {
		return req, err
	}
	req.Mode, req.IntervalOverride = mode, override
	return req, nil
}

func runRun(c *cmdContext, args []string, f *runFlags) int {
	const cmd = "run"
	if f.workers < 1 {
		return c.runUsageLine(cmd, "--workers must be at least 1")
	}
	if err := engine.CheckWorkers(f.workers); err != nil {
		return c.runUsageLine(cmd, "%v", err)
	}
	if c.AsOf != "" {
		return c.runUsageLine(cmd, "--as-of does not apply to run: a run executes and records load times now (use it with bollhav plan)")
	}
	if c.flagGiven("retry") {
		return runRetry(c, args, f)
	}
	req, err := f.request(c, args)
	if err != nil {
		return c.runUsageLine(cmd, "%v", err)
	}
	ctx, e, done, code := c.openRunWriter(cmd, req.Mode.String())
	if e == nil {
		return code
	}
	defer done()

	// Plan first: bad input (a misaligned window, an unknown model, a grain
	// change outside torch) is refused before the run registers anything,
	// the torch confirmation shows it, and progress knows each task's size.
	plan, err := e.Plan(ctx, req)
	if err != nil {
		c.runErrLines(cmd, err)
		return ExitUsage
	}
	for _, w := range plan.Warnings() {
		fmt.Fprintf(c.Err, "bollhav run: warning: %s\n", w)
	}
	// The danger level is the UI's too (ui/danger): what its dialog
	// confirms by typing, the command line confirms by typing.
	if danger.Run(req.Mode).Typed() {
		if code, ok := c.confirmTorch(ctx, plan, f.yes); !ok {
			return code
		}
		// The run executes the plan confirmed: if the store changed while
		// the operator read it, the run refuses before recording anything.
		req.Confirmed = plan
	}

	totals := map[string]int{}
	var order []string
	for _, mp := range plan.Models {
		totals[mp.Model] = mp.Run.Len()
		order = append(order, mp.Model)
	}
	view := c.newRunView(order, totals)
	res, err := e.Run(ctx, req, view.executor(e.Executor()), view.update)
	view.stop()
	return c.finishRun(ctx, cmd, res, err)
}

// openRunEngine opens the spec and the store and builds the engine of
// `run` and `run --retry`, its warnings logged to stderr: the steps both
// take before they part. A nil engine is a refusal already printed, code
// its exit status; closeStore closes the store.
func (c *cmdContext) openRunEngine(ctx gocontext.Context, cmd string) (e *engine.Engine, closeStore func(), code int) {
	o, sp, code := c.openSpecStore(ctx, cmd)
	if o == nil {
		return nil, nil, code
	}
	o.opts.Log = slog.New(slog.NewTextHandler(c.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return o.engine(sp), o.close, ExitOK
}

// openRunWriter opens the engine of a run that writes, under
// interruptContext: a read-only store is refused (what the run would have
// done, and that nothing was changed). With no engine, code is the exit
// code; with one, done closes the store and ends the context.
func (c *cmdContext) openRunWriter(cmd, what string) (gocontext.Context, *engine.Engine, func(), int) {
	ctx, stop := c.interruptContext(cmd)
	e, closeStore, code := c.openRunEngine(ctx, cmd)
	if e == nil {
		stop()
		return nil, nil, nil, code
	}
	done := func() {
		closeStore()
		stop()
	}
	if e.ReadOnly() {
		code := c.runUsageLine(cmd, "%s %v; nothing was changed", what, engine.ErrReadOnly)
		done()
		return nil, nil, nil, code
	}
	return ctx, e, done, ExitOK
}

// interruptContext is the process's context, which SIGINT or SIGTERM
// cancels: the engine then starts no new unit, stops the running ones and
// records them, and the run ends as cancelled. The first signal also
// restores the default handling, so a second one quits at once (leaving
// leases to expire).
func (c *cmdContext) interruptContext(cmd string) (gocontext.Context, func()) {
	ctx := c.ctx
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-ctx.Done():
		case <-done:
			// The command returned; a signal that came first (a store
			// that refused to open on the cancelled context, say) is
			// still told, whichever channel select picked.
			if ctx.Err() == nil {
				return
			}
		}
		c.restoreSignals()
		fmt.Fprintf(c.Err, "\nbollhav %s: interrupted: no new units start, running ones are stopped and recorded; interrupt again to quit at once\n", cmd)
	}()
	// Wait for the goroutine: it must not write to stderr after the
	// command returned.
	return ctx, func() {
		close(done)
		<-exited
	}
}

// runRetry resumes a run by its id.
func runRetry(c *cmdContext, args []string, f *runFlags) int {
	const cmd = "run"
	if f.retry <= 0 {
		return c.runUsageLine(cmd, "--retry needs a run id (a positive number, as the failed run printed it)")
	}
	if len(args) > 0 {
		return c.runUsageLine(cmd, "--retry resumes run %d as it was: it takes no models (got %q)", f.retry, args[0])
	}
	for _, name := range []string{"pipeline", "since", "until", "mode", "interval-override", "downstream", "outdated"} {
		if c.flagGiven(name) {
			return c.runUsageLine(cmd, "--retry resumes run %d with its own scope, window and mode: --%s cannot be combined with it", f.retry, name)
		}
	}
	ctx, e, done, code := c.openRunWriter(cmd, "retry")
	if e == nil {
		return code
	}
	defer done()
	order, totals := runRetryTotals(ctx, e, f.retry)
	view := c.newRunView(order, totals)
	res, err := e.Retry(ctx, f.retry, view.executor(e.Executor()), f.workers, view.update)
	view.stop()
	if res == nil && errors.Is(err, state.ErrNotFound) {
		return c.runUsageLine(cmd, "there is no run %d in this store (for environment %s)", f.retry, e.Env())
	}
	return c.finishRun(ctx, cmd, res, err)
}

// runRetryTotals estimates, for progress lines, how many units each task of
// the run has left: its pending and failed units in the run window (a retry
// runs failed units again). Unknown (-1) when the run cannot be read; Retry
// itself reports that error.
func runRetryTotals(ctx gocontext.Context, e *engine.Engine, runID int64) ([]string, map[string]int) {
	totals := map[string]int{}
	run, err := e.RunRecord(ctx, runID)
	if err != nil {
		return nil, totals
	}
	for _, name := range run.Models {
		var w state.Window // all of a timeless model's units
		if m := e.Spec().Model(name); m != nil && m.Temporality == spec.Temporal {
			w = run.Window
		}
		n := 0
		if err := e.ScanStoredUnits(ctx, name, w, []state.UnitStatus{state.Pending, state.Failed}, func(state.Unit) error { n++; return nil }); err != nil {
			n = -1
		}
		totals[name] = n
	}
	return run.Models, totals
}

// confirmTorch prints the plan of a torch and asks for "yes" on a
// terminal; without one it needs --yes. It returns false, with the exit
// code, when the torch must not go ahead.
func (c *cmdContext) confirmTorch(ctx gocontext.Context, plan *engine.Plan, yes bool) (int, bool) {
	// The plan goes where the user reads: stdout for text, stderr when
	// stdout carries JSON.
	planOut := c.Out
	if c.Output == "json" {
		planOut = c.Err
	}
	printPlanText(planOut, plan)
	if yes {
		return ExitOK, true
	}
	deleted := 0
	for _, mp := range plan.Models {
		deleted += planDeleted(mp)
	}
	return c.askYes(ctx, "run", "torch", "--mode torch deletes state and needs confirmation, but stdin is not a terminal: pass --yes to run it",
		fmt.Sprintf("Torch %d model(s) in %s: %d unit(s) deleted or uncovered and rebuilt.", len(plan.Models), spec.Env{Suffix: plan.Env}, deleted))
}

// askYes asks question on a terminal and goes on only on "yes"; without a
// terminal it refuses with noTerminal, which names the flag that confirms
// instead. It returns false, with the exit code, when cmd must not go on;
// every refusal says that nothing was changed.
func (c *cmdContext) askYes(ctx gocontext.Context, cmd, what, noTerminal, question string) (int, bool) {
	if !runStdinIsTerminal(c.In) {
		fmt.Fprintf(c.Err, "bollhav %s: %s; nothing was changed\n", cmd, noTerminal)
		return ExitUsage, false
	}
	fmt.Fprintf(c.Err, "%s Type yes to go on: ", question)
	answer, err := readAnswer(ctx, c.In)
	if err != nil {
		fmt.Fprintf(c.Err, "\nbollhav %s: interrupted: nothing was changed\n", cmd)
		return ExitFailure, false
	}
	if answer != "yes" {
		fmt.Fprintf(c.Err, "bollhav %s: %s not confirmed: nothing was changed\n", cmd, what)
		return ExitFailure, false
	}
	return ExitOK, true
}

// readAnswer reads a line from in, trimmed, or returns ctx's error when ctx
// ends first. The read runs on a goroutine of its own so that an interrupt
// is heard while it waits; when in is a file (a terminal) the interrupt
// ends the read too, and the goroutine with it, before readAnswer returns.
// A reader that is not a file cannot be interrupted: its goroutine ends
// with its read.
func readAnswer(ctx gocontext.Context, in io.Reader) (string, error) {
	r, err := cancelreader.NewReader(in)
	if err != nil {
		// A file epoll cannot wait on (a regular file) never blocks:
		// read it as any reader.
		r, _ = cancelreader.NewReader(struct{ io.Reader }{in})
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		answer <- strings.TrimSpace(line)
	}()
	select {
	case a := <-answer:
		r.Close()
		return a, nil
	case <-ctx.Done():
		if r.Cancel() {
			<-answer
			r.Close()
		}
		return "", ctx.Err()
	}
}

// runStdinIsTerminal reports whether the confirmation can be asked; a variable
// so tests can stand in for a terminal.
var runStdinIsTerminal = func(r io.Reader) bool { return runIsTerminal(r) }

// finishRun renders a run's result and returns the exit code: 2 when the
// run never started (its plan or the store refused it), 1 when a task
// failed, a hard gate error occurred or the run was interrupted.
func (c *cmdContext) finishRun(ctx gocontext.Context, cmd string, res *engine.RunResult, err error) int {
	if res == nil {
		if err == nil {
			err = errors.New("the engine returned no result")
		}
		if ctx.Err() != nil {
			c.runErrLines(cmd, fmt.Errorf("interrupted before the run started: %w", err))
			return ExitFailure
		}
		c.runErrLines(cmd, err)
		return ExitUsage
	}
	if c.Output == "json" {
		for _, t := range res.Tasks {
			for _, msg := range t.Errors {
				fmt.Fprintf(c.Err, "bollhav %s: %s: %s\n", cmd, t.Model, msg)
			}
		}
		if err != nil {
			c.runErrLines(cmd, err)
		}
		writeJSON(c.Out, runResultJSON(res))
	} else {
		printRunSummary(c.Out, res, err, ctx.Err() != nil, c.Env, c.palette())
	}
	if err != nil || res.FailedThen() || ctx.Err() != nil {
		return ExitFailure
	}
	return ExitOK
}

type runJSON struct {
	RunID     int64         `json:"run_id"`
	StateMode string        `json:"state_mode"`
	Tasks     []runTaskJSON `json:"tasks"`
	// Released are the blocked units downstream whose upstreams the run
	// caught up, by model; Then the run --downstream started over them.
	Released []releasedJSON `json:"released"`
	Then     []runJSON      `json:"then,omitempty"`
}

type releasedJSON struct {
	unitRefJSON
	Units int `json:"units"`
}

type runTaskJSON struct {
	Task        string       `json:"task"`
	Status      string       `json:"status"`
	Units       runUnitsJSON `json:"units"`
	RowsWritten *int64       `json:"rows_written"`
	// Reason says why a task waits or was skipped: each edge its
	// upstream's outcome does not satisfy; absent otherwise. The task's
	// units are held (blocked) with it.
	Reason string `json:"reason,omitempty"`
}

type runUnitsJSON struct {
	Applied int `json:"applied"`
	Blocked int `json:"blocked"`
	Failed  int `json:"failed"`
}

func runResultJSON(res *engine.RunResult) runJSON {
	out := runJSON{RunID: res.RunID, StateMode: res.Mode.String(), Tasks: []runTaskJSON{}}
	for _, t := range res.Tasks {
		out.Tasks = append(out.Tasks, runTaskJSON{Task: t.Model, Status: t.Outcome(),
			Units: runUnitsJSON{Applied: t.Applied, Blocked: t.Blocked, Failed: t.Failed}, RowsWritten: t.RowsWritten, Reason: t.Reason})
	}
	out.Released = []releasedJSON{}
	for _, r := range res.Released {
		out.Released = append(out.Released, releasedJSON{unitRefJSON: unitRef(r.Model, r.Span), Units: r.Units})
	}
	for _, then := range res.Then {
		out.Then = append(out.Then, runResultJSON(then))
	}
	return out
}

// printRunSummary writes the unit errors, the task table and one closing
// line with the run id and, when it did not succeed, how to resume it.
func printRunSummary(w io.Writer, res *engine.RunResult, runErr error, interrupted bool, env string, pal palette) {
	var errLines []string
	for _, t := range res.Tasks {
		for i, msg := range t.Errors {
			if i == 3 {
				errLines = append(errLines, fmt.Sprintf("  %s: … and %d more distinct error(s)", t.Model, len(t.Errors)-3))
				break
			}
			errLines = append(errLines, fmt.Sprintf("  %s: %s", t.Model, runOneLine(msg)))
		}
	}
	if runErr != nil {
		for _, e := range unjoin(runErr) {
			errLines = append(errLines, "  "+runOneLine(e.Error()))
		}
	}
	if len(errLines) > 0 {
		fmt.Fprintln(w, "errors:")
		for _, l := range errLines {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}
	rows := make([][]string, 0, len(res.Tasks))
	var applied, blocked, failed int
	for _, t := range res.Tasks {
		rw := "-"
		if t.RowsWritten != nil {
			rw = strconv.FormatInt(*t.RowsWritten, 10)
		}
		rows = append(rows, []string{t.Model, pal.status(t.Outcome()), strconv.Itoa(t.Applied), strconv.Itoa(t.Blocked),
			strconv.Itoa(t.Failed), rw})
		applied, blocked, failed = applied+t.Applied, blocked+t.Blocked, failed+t.Failed
	}
	printTable(w, []string{"TASK", "STATUS", "APPLIED", "BLOCKED", "FAILED", "ROWS_WRITTEN"}, rows)
	for _, t := range res.Tasks {
		if t.Reason != "" {
			fmt.Fprintf(w, "  %s %s: %s\n", t.Model, strings.ToLower(t.Outcome()), untrusted.Line(t.Reason))
		}
	}
	if skipped := res.SkippedPending(); len(skipped) > 0 {
		fmt.Fprintf(w, "skipped tasks never run again in run %d; their units are held (bollhav blocked lists them); once their upstreams are fixed, run them with:\n  %s\n",
			res.RunID, skippedCommand(skipped, res.Window, env))
	}
	if models, span, n := res.ReleasedRun(); n > 0 && len(res.Then) == 0 {
		fmt.Fprintf(w, "released %d blocked unit(s) downstream whose upstreams caught up (bollhav blocked says so); run them with:\n  %s\n",
			n, skippedCommand(models, span, env))
	}
	counts := fmt.Sprintf("%s; units: %d applied, %d blocked, %d failed", taskTallyText(res), applied, blocked, failed)
	retry := fmt.Sprintf("bollhav run --retry %d", res.RunID)
	if env != "" {
		retry += " --env " + env
	}
	out := colorWriter(w)
	switch {
	case interrupted:
		fmt.Fprintf(out, "run %d (%s) %s: %s; resume it with: %s\n", res.RunID, res.Mode, pal.status("cancelled"), counts, retry)
	case runErr != nil || res.Failed():
		fmt.Fprintf(out, "run %d (%s) %s: %s; retry it with: %s\n", res.RunID, res.Mode, pal.status("failed"), counts, retry)
	default:
		note := ""
		if blocked > 0 {
			note = " (bollhav blocked shows why units are blocked)"
		}
		fmt.Fprintf(out, "run %d (%s) %s: %s%s\n", res.RunID, res.Mode, pal.status("succeeded"), counts, note)
	}
	if len(res.Then) > 0 {
		_, _, n := res.ReleasedRun()
		fmt.Fprintf(w, "released %d blocked unit(s) downstream whose upstreams caught up; --downstream runs them now:\n", n)
		for _, then := range res.Then {
			printRunSummary(w, then, nil, interrupted, env, pal)
		}
	}
}

// taskTallyText is "3 task(s)" when every task succeeded, else the count
// by outcome: "3 task(s): 1 succeeded, 1 failed, 1 skipped".
func taskTallyText(res *engine.RunResult) string {
	tally := res.TaskTally()
	head := fmt.Sprintf("%d task(s)", len(res.Tasks))
	if len(tally) <= 1 && (len(tally) == 0 || tally[0].Outcome == "SUCCESS") {
		return head
	}
	words := map[string]string{"SUCCESS": "succeeded", "FAILED": "failed", "SKIPPED": "skipped", "WAITING": "waiting"}
	parts := make([]string, len(tally))
	for i, c := range tally {
		parts[i] = fmt.Sprintf("%d %s", c.Count, words[c.Outcome])
	}
	return head + ": " + strings.Join(parts, ", ")
}

// skippedCommand is the run that picks up skipped tasks' pending units: the
// same models over the same window, in discover mode, which runs only what
// is not applied and resets nothing.
func skippedCommand(models []string, w state.Window, env string) string {
	cmd := "bollhav run " + strings.Join(models, " ")
	if !w.IsZero() {
		cmd += " --since " + w.Since.UTC().Format(time.RFC3339) + " --until " + w.Until.UTC().Format(time.RFC3339)
	}
	cmd += " --mode discover"
	if env != "" {
		cmd += " --env " + env
	}
	return cmd
}

// runOneLine folds a multi-line message (a command's stderr tail) into one,
// made safe to show (untrusted.Line).
func runOneLine(s string) string {
	return untrusted.Line(strings.Join(strings.Fields(s), " "))
}
