// Package ui is bollhav's terminal UI: a Bubble Tea v2 program over the
// shared engine (Run, or NewModel for a program run elsewhere, such as an
// SSH session). Its subpackage cli holds the command line; graphview and
// timeline are the pure renderers of the pipeline graph and the coverage
// timeline, plugged in through the hooks of hooks.go by graph_hook.go and
// timeline_hook.go.
//
// Structure. App (app.go) is one router model over a stack of views —
// pipelines, model, why, blocked, runs, run, audit (view_*.go) — that render and
// handle keys; esc pops the stack, enter pushes. Update never does I/O:
// every engine or store call is a tea.Cmd (load.go, actions.go, live.go)
// whose result comes back as a message (msgs.go), routed to the view by its
// id and dropped when its request generation is not the view's newest. One
// request per view is in flight at a time; what is asked meanwhile runs
// when it answers. The keymap (keys.go) is data: the footer and the ? help
// are generated from it, and under read-only the action keys are not bound.
// A footer too narrow for every key keeps the most important (the screen's
// first key, esc, its other keys in order, :, /) and always ends with
// "? help", after "q quit" when that fits.
//
// Live. The UI follows the store's change feed (a state.Follower; one Feed
// may serve every UI of a process) and reloads the view on top when a
// change touches it — the pipelines view only the models named. A load that
// fails because the store does not answer shows a banner and is retried
// with backoff (500 ms doubling to 30 s) until it succeeds; the data last
// loaded stays on screen. Refresh pauses while a dialog is open.
//
// Decisions the design leaves open, taken here:
//   - --theme wins over NO_COLOR (an explicit request, as no-color.org
//     allows); without --theme, NO_COLOR selects "none", and otherwise the
//     terminal's background picks dark or light.
//   - --as-of opens the UI read-only: it looks at the past, and a run
//     records load times now.
//   - Dialogs default to Cancel; Enter presses the focused button; a torch
//     is confirmed only by typing the model's exact name, and Enter on an
//     empty field never confirms. The plan (engine.Plan; for a mark, the
//     units it would move) is shown before anything can be confirmed.
//   - Runs started here go on in the background on the program's context:
//     quitting (q twice while one runs) cancels them, and the engine puts
//     their interrupted units back to pending.
//   - The model view loads units 500 at a time, in window order, the next
//     page when the cursor nears the end; its cursor starts on the first
//     unit that is not applied.
//   - Every status is a glyph as well as a colour (themes.Glyph), and the
//     cursor row is marked with "›", so nothing depends on colour.
//   - The pipelines view's graph form (v) shows one pipeline at a time,
//     tab the next; it opens on the list cursor's pipeline and model, and v
//     again puts the list cursor on the graph's selection. A node's health
//     is its model's worst units (failed, blocked), then stale — its newest
//     applied_at older than a gated downstream's freshness limit, judged by
//     the newest row — then running, pending, applied; its detail is
//     applied/total. The selection and scroll belong to the view, so a live
//     reload keeps them. Box drawing stays Unicode under every theme, "none"
//     included: NO_COLOR asks for no colour, not for ASCII.
//   - The model view's timeline reads, for the time the axis shows and a
//     screen either side, each model's applied islands from the coverage
//     index and its units that are not applied (at most 5,000 a model; past
//     that it says "partial"), so a month zoom over an hourly model reads
//     islands, not a million rows; THROUGH and WHOLE upstreams' islands go
//     back to their start, which their verdict measures. Moving the axis
//     outside what was read loads again. The marks show the engine's own
//     gate verdict (GateUnitFromStore) for the cursor's window: the load
//     asks for it, and after the cursor rests 150 ms on another window a
//     separate request does; meanwhile the verdict is derived from the
//     coverage. The strip's glyphs are ui/timeline's blocks, with the
//     themes' running and blocked glyphs. On a 24-line terminal the lanes
//     replace the contracts table when they all fit; when they do not, the
//     upstreams holding the cursor's window back come first.
//   - The audit view (4, or : audit) lists the store's newest 500 audit
//     entries. Entries are not changes, so while it is on top it reloads on
//     every change-feed message and, for what comes without one (a
//     refusal moves no unit), every five feed polls (5 s by default).
//     Refusals and errors are drawn as errors with a glyph (⊘, ✗); the
//     selected entry shows whole under the list.
//   - u on the model view opens the first gated upstream the engine's gate
//     finds unsatisfied for the cursor's window, with its cursor on the
//     first window the contract needs that is not applied (its first unit
//     that is not applied for a stale or failing contract, or when that
//     window is past the units loaded).
//   - A run's tasks are grouped by the waves of the graph the engine builds
//     for a run (a dependency onto a model of the run is an edge, whatever
//     the pipelines), as the spec has them now; a task not started shows
//     "waiting" (or "not run" once the run has ended).
package ui
