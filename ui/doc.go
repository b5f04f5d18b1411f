// Package ui is bollhav's terminal UI: a Bubble Tea v2 program over the
// shared engine (Run, or NewModel for a program run elsewhere, such as an
// SSH session). Its subpackage cli holds the command line; graphview and
// timeline are the pure renderers of the pipeline graph and the coverage
// timeline, plugged in through the hooks of hooks.go by graph_hook.go and
// timeline_hook.go. The choices the UI makes where the design leaves it
// free are recorded in docs/ui.md.
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
//
// Live. The UI follows the store's change feed (a state.Follower; one Feed
// may serve every UI of a process) and reloads the view on top when a
// change touches it. A load that fails because the store does not answer
// shows a banner and is retried with backoff until it succeeds.
package ui
