package ui

import (
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// Messages: every result of I/O comes back to Update as one of these,
// produced by a tea.Cmd of load.go, live.go or actions.go. Update never
// reads the store itself.

// loadedMsg is a view's data, routed to the view whose id it carries. gen
// is the view's request generation when the load started: a response to an
// older request than the view's newest is dropped, so a slow load can never
// overwrite a newer one.
type loadedMsg struct {
	view int
	gen  uint64
	data any
	err  error
}

// retryMsg asks the view with this id to load again after a failed load
// (the backoff's tick).
type retryMsg struct{ view int }

// feedStartedMsg is the change feed, subscribed.
type feedStartedMsg struct{ sub *subscription }

// feedMsg is what the feed has for the UI: a batch of changes (all: too
// many to list, reload everything), a change of its error state (errSet;
// err nil: it recovered), or its end.
type feedMsg struct {
	changes []state.Change
	all     bool
	err     error
	errSet  bool
	closed  bool
}

// feedRetryMsg asks to subscribe to the feed again after it could not start.
type feedRetryMsg struct{}

// planMsg is the plan (or mark preview) an action dialog shows first.
type planMsg struct {
	dialog  int
	gen     uint64
	plan    *engine.Plan
	preview *markPreview
	err     error
}

// runEventMsg is a live run's progress snapshot or its end.
type runEventMsg struct {
	run      int
	progress map[string]engine.Progress
	runID    int64
	done     bool
	result   *engine.RunResult
	err      error
	events   *runEvents
}

// markDoneMsg is a mark's outcome.
type markDoneMsg struct {
	model  string
	status state.UnitStatus
	n      int
	err    error
}

// flashClearMsg clears the footer message it was set with.
type flashClearMsg struct{ seq int }

// gateTickMsg is the model view's cursor at rest: if it is still where it
// was when the tick was set (seq), the view asks for its unit's gate.
type gateTickMsg struct {
	view int
	seq  uint64
}

// gateMsg is the engine's gate of one unit of a model view: the verdict of
// each gated upstream for the window.
type gateMsg struct {
	view   int
	seq    uint64
	window state.Window
	gate   gate.UnitGate
	err    error
}
