package tui

import (
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// The app's own messages: every result of I/O that is not one view's
// comes back to Update as one of these, produced by a tea.Cmd of live.go or
// actions.go. A view's data and its own messages are in the view's file
// (loaded[T], model_load.go's gate messages, the audit view's timer), the
// navigation a view asks for in nav.go. Update never reads the store
// itself.

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
	// verdicts: the clock changed what the gate says (a freshness limit
	// ran out, a window completed); views showing verdicts reload.
	verdicts bool
}

// feedRetryMsg asks to subscribe to the feed again after it could not start.
type feedRetryMsg struct{}

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
