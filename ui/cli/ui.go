package cli

import (
	gocontext "context"
	"fmt"
	"os"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/tui"
	"github.com/charmbracelet/x/term"
)

func init() {
	register(&command{
		name:    "ui",
		summary: "the terminal UI: pipelines, coverage, why, blocked units and runs, live from the store (the default)",
		globals: []string{gSpec, gDSN, gEnv, gAsOf, gReadOnly, gAllowLint, gTheme},
		long: `ui opens the terminal UI on the state store of --dsn for the environment of
--env (else SCHEMA_SUFFIX). It is what 'bollhav' alone opens on a terminal.

It opens on Incidents when anything is failed, blocked or stale: one card per
root cause ('bollhav incidents'), failures first, then by what each holds,
the selected card with its whole error; enter explains the blocked unit behind
it that holds the most. With nothing wrong it opens on Pipelines, saying "all clear".

Views: Pipelines (every model by pipeline, units counted by status; or each
pipeline's task graph), a model (its contracts, coverage timeline with each
upstream's strip, stale windows as cells of their own, and units), why (a
unit's upstream verdicts, the root-cause chain and the unblock frontier),
Blocked (the triage queue: failed and blocked units by what they hold,
grouped by root cause, those whose gate passes again marked ready), Runs
(history, and the progress of runs started here) and Incidents.

Keys: enter drills in (pipelines → model → unit → its blocking upstream), esc
goes back, / filters a list, : opens the command palette (model NAME, why
MODEL TIME, blocked, runs, audit, incidents, env SUFFIX|prod, theme NAME),
1 2 3 4 i switch to pipelines, blocked, runs, audit, incidents, ? shows every
key, q quits. In Pipelines, v toggles the list and the graph; in a model the
timeline opens fitted to the model's windows (zoomed out by itself when they
do not fit), + and - zoom it and u jumps to the upstream window holding it
back. Vim keys and
arrows move in lists; the mouse is left to the terminal's text selection
unless BOLLHAV_MOUSE=wheel turns on wheel scrolling. d opens a unit's detail
(its whole error, what ran, each failed attempt); y copies the unit (model and
window), Y its error, through OSC 52 (over SSH too). n and N jump to the next
and previous failed or blocked row of a list; Pipelines opens on the first
failed or blocked model.

Actions — r run a window (on an incident: its root), R run a model (on a
pipeline's heading: the pipeline; in Blocked: every ready unit), a / p mark
applied / pending — open a dialog over the dimmed screen that shows the
engine's plan first; tab picks the STATE_MODE, d adds every model downstream
(a discover of them all), y / n confirm or cancel; a torch asks for the
model's name to be typed. Local actions are audited as $USER@host. Runs go on in the background. With
--read-only (or --as-of, which looks at the past and so changes nothing)
every action is hidden and the engine refuses them too.

The UI follows the store's change feed (PostgreSQL LISTEN/NOTIFY, SQLite
data_version polling): what another process does appears by itself. A lost
connection shows a banner and recovers. --theme picks dark (default), light,
high-contrast or none; NO_COLOR selects none unless --theme is given.`,
		examples: []string{
			"bollhav ui",
			"bollhav ui --env pr123 --read-only",
			"bollhav ui --dsn postgres://bollhav@db/bollhav --theme high-contrast",
			"NO_COLOR=1 bollhav ui --as-of 2026-01-06T00:00:00Z",
		},
		run: runUI,
		// Bubble Tea handles SIGINT and SIGTERM in the program.
		ownsSignals: true,
	})
	demoUI = func(c *cmdContext, e *engine.Engine) int {
		if err := tui.Run(gocontext.Background(), e, tui.Options{Theme: c.Theme}); err != nil {
			fmt.Fprintf(c.Err, "bollhav demo: %v\n", err)
			return ExitFailure
		}
		return ExitOK
	}
}

func runUI(c *cmdContext, args []string) int {
	const cmd = "ui"
	if len(args) > 0 {
		return c.fail(cmd, &usageError{fmt.Sprintf("ui takes no arguments (got %q)", args[0])})
	}
	if c.Output != "text" {
		return c.fail(cmd, &usageError{"the UI has no JSON output: use status, blocked or why with -o json"})
	}
	if c.Theme != "" {
		if _, err := themes.Get(c.Theme); err != nil {
			return c.fail(cmd, &usageError{"--theme: " + err.Error()})
		}
	}
	boundUIMemory()
	ctx := c.ctx
	// The first signal gives the next its default action back, as before
	// the UI shared the process's context: Bubble Tea's own handler lets go
	// after one, and the runs it drains must not make the UI unkillable.
	defer gocontext.AfterFunc(ctx, c.restoreSignals)()
	e, look, closeStore, code := c.openUIEngine(ctx, cmd)
	if e == nil {
		return code
	}
	defer closeStore()
	opts := tui.Options{Theme: c.Theme, ReadOnly: c.ReadOnly || c.AsOf != "", FirstLook: look}
	if !isStdio(c.In, os.Stdin) {
		opts.Input = c.In
	}
	if !isStdio(c.Out, os.Stdout) {
		opts.Output = c.Out
	}
	// Bubble Tea handles SIGINT (the program ends interrupted) and SIGTERM
	// (it quits) itself; were the program also to end on the process's
	// context, the two would race for the exit status. The launch above
	// stops on it.
	if err := tui.Run(gocontext.WithoutCancel(ctx), e, opts); err != nil {
		fmt.Fprintf(c.Err, "bollhav ui: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

func isStdio(s any, std *os.File) bool {
	f, ok := s.(*os.File)
	return ok && f == std
}

// isTerminal reports whether a stream is a terminal: 'bollhav' alone opens
// the UI only when both its input and output are one.
func isTerminal(s any) bool {
	f, ok := s.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(f.Fd())
}

// uiWanted is the no-command decision: the UI on a terminal, the usage
// otherwise (a pipe, a file, a CI log).
func uiWanted(s Streams) bool {
	return isTerminal(s.In) && isTerminal(s.Out)
}

// uiMemoryLimit is the UI process's soft memory limit (tui.MemoryLimit,
// which says why), unless GOMEMLIMIT sets another.
const uiMemoryLimit = tui.MemoryLimit

// boundUIMemory sets it for the rest of the process, as boundMemory does
// for a command (the UI never gives it back).
func boundUIMemory() { boundMemory(uiMemoryLimit) }
