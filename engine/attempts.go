package engine

import (
	"context"

	"github.com/bollhav/bollhav/state"
)

// RetryBudget is model's retry.attempts, the "5" of "retry 2/5": from the
// spec, else from its registration (a UI opened on the store alone); 0 when
// neither knows the model, and the retry line then leaves it out.
func (e *Engine) RetryBudget(ctx context.Context, model string) int {
	if m := e.spec.Model(model); m != nil {
		return m.Retry.Attempts
	}
	if m, err := e.markModel(ctx, model); err == nil {
		return m.Retry.Attempts
	}
	return 0
}

// HasFailures reports whether u may have failed attempts worth showing
// beside it: it failed, or it is pending after a counted attempt (waiting
// for its retry, or released after its lease expired). An applied or
// blocked unit's history stays in the store (why lists it) but is not read
// for every line of a listing.
func HasFailures(u state.Unit) bool {
	return u.Status == state.Failed || u.Status == state.Pending && u.Attempts > 0
}

// UnitFailures is what a view shows of a unit's failed attempts.
type UnitFailures struct {
	// Retry is where the unit, waiting for its retry, stands in its
	// budget; nil otherwise. Print it with Retry.Line.
	Retry *state.RetryWait
	// Failures is the unit's attempt history, newest first.
	Failures []state.Attempt
}

// Failures reads u's attempt history; budget is its model's RetryBudget.
func (e *Engine) Failures(ctx context.Context, u state.Unit, budget int) (UnitFailures, error) {
	history, err := e.store.Attempts(ctx, u.ID)
	if err != nil {
		return UnitFailures{}, err
	}
	w := state.RetryWaitOf(u, history, budget)
	if err := state.NoteEndedRun(ctx, e.store, w, u); err != nil {
		return UnitFailures{}, err
	}
	return UnitFailures{Retry: w, Failures: state.NewestFirst(history)}, nil
}
