// Package ui is bollhav's terminal UI: a Bubble Tea v2 program over the
// shared engine (Run, or NewModel for a program run elsewhere, such as an
// SSH session). Its subpackage cli holds the command line; graphview and
// timeline are the pure renderers of the pipeline graph and the coverage
// timeline, plugged in through the hooks of hooks.go.
//
// Structure. App (app.go) is one router model over a stack of views —
// pipelines, model, why, blocked, runs, run (view_*.go) — that render and
// handle keys; esc pops the stack, enter pushes. Update never does I/O:
// every engine or store call is a tea.Cmd (load.go, actions.go, live.go)
// whose result comes back as a message (msgs.go), routed to the view by its
// id and dropped when its request generation is not the view's newest. One
// request per view is in flight at a time; what is asked meanwhile runs
// when it answers. The keymap (keys.go) is data: the footer and the ? help
// are generated from it, and under read-only the action keys are not bound.
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
package ui
