// Package tui is bollhav's terminal UI: a Bubble Tea v2 program over the
// shared engine (Run, or NewModel for a program run elsewhere, such as an
// SSH session). Its subpackages graphview and timeline are the pure
// renderers of the pipeline graph and the coverage timeline. Beside it in
// ui/ sit the other front ends, which do not depend on the program's
// insides: ui/cli, the command line and the composition root that opens the
// store and builds the engine; ui/serve, which runs this program over SSH;
// ui/metrics, the Prometheus exporter; and ui/danger, how much harm each
// operator action can do, which the dialogs and the command line both read.
// The choices the UI makes where the design leaves it free are recorded in
// docs/ui.md.
//
// # The app and its views
//
// App (app.go) is one router model over a stack of views; esc pops the
// stack. It owns what every screen shares — the frame around the view
// (app_frame.go: header, banner, footer, help), the command palette
// (palette.go), the / filter, the action dialog (dialog.go,
// dialog_plan.go), the change feed (live.go) and the runs started here
// (actions.go) — and nothing of any one view.
//
// Each view owns, in files of its own, its state, its loader, the type its
// data comes in and its own messages: view_pipelines.go (its graph form in
// view_pipelines_graph.go), view_model.go (its timeline in
// view_model_timeline.go, its loads and the gate's messages in
// model_load.go), view_why.go, view_blocked.go (its grouping by root cause
// in blocked_groups.go, "run every ready unit" in run_ready.go),
// view_runs.go, view_run.go,
// view_audit.go, view_incidents.go and view_unit.go (one unit in full: its
// whole error, what ran, its failed attempts). Errors are wrapped whole
// (wrap.go), never cut to a line; y / Y copy through OSC 52 (yank.go); n /
// N jump to a list's next failed or blocked row (jump.go). A
// view sees the program only through its common
// (common.go): the context, the engine, the keymap, the theme, the
// terminal's size, the renderers and the runs started here. A view does
// not touch the stack or the dialog: it sends the app a message (nav.go)
// to open a view or an action's dialog, show a message or reload, which
// the app handles before the next key. The top-level screens (keys 1–4,
// palette commands, Options.View) are listed once, in screens.go; a view
// opened from another needs only its own file. Jumps between them keep a
// back stack for - (history.go); how times read, and the t / T toggle, is
// times.go; the idle timeout of an SSH session is idle.go.
//
// # How messages flow
//
// Update never does I/O: every engine or store call is a tea.Cmd. A view's
// load (load.go) returns a loaded[T] of the view's own data type, tagged
// with the view's id and the generation of its request; the app drops an
// answer to an older request than the view's newest, turns a store that
// does not answer into a banner and a retry with backoff, and hands the
// rest to the view's update. One request per view is in flight at a time;
// what is asked meanwhile runs when it answers. Every other message that
// carries a view's id (a timer, the model view's gate) goes to that view's
// update as well, so the app has no case for any one view. The app's own
// messages are in msgs.go; its timers (tick.go) end with the program.
//
// The renderers of the graph and the timeline (hooks.go, adapted in
// graph_hook.go and timeline_hook.go) are passed to the app and reach the
// views through their common; without one a view falls back to a simple
// form and does not offer the keys that need it. The keymap (keys.go) is
// data: the footer and the ? help are generated from it, and under
// read-only the action keys are not bound.
//
// # Live
//
// The UI follows the store's change feed (a state.Follower; one Feed may
// serve every UI of a process) and reloads the view on top when a change
// touches it, as the view's affected says.
package tui
