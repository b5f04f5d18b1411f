package state

import (
	"fmt"
	"slices"
)

// The errors below are what an operator reads when a store refuses a call.
// Both backends build them here, so the embedded SQLite file and PostgreSQL
// word the same refusal the same way, and state/storetest pins the text.
// Each names what was asked for and ends with what to do next; each wraps one
// of the sentinels above, so callers test them with errors.Is.

// ModelNotFound is a model-scoped call on a model env has not registered.
func ModelNotFound(env, model string) error {
	return fmt.Errorf("model %s%s: %w: it is not registered; bollhav apply registers the models of a spec", model, inEnv(env), ErrNotFound)
}

// RunNotFound is a call naming a run the store does not hold.
func RunNotFound(id int64) error {
	return fmt.Errorf("run %d: %w: this store holds no run with that id; the runs view of bollhav ui lists those it holds", id, ErrNotFound)
}

// AttemptNotFound is a FinishTask of an attempt StartTask never opened.
func AttemptNotFound(runID int64, taskID, attempt int) error {
	return fmt.Errorf("attempt %d of task %d in run %d: %w: it was never started (StartTask opens attempts)", attempt, taskID, runID, ErrNotFound)
}

// EmptyWindow refuses an empty or reversed window given to what ("prefill
// raw.orders"): it would slip past every overlap test and touch nothing, or
// create a unit that can never be covered.
func EmptyWindow(what string, w Window) error {
	return fmt.Errorf("%s: window [%s, %s) is empty: until must be after since", what, FormatTime(w.Since), FormatTime(w.Until))
}

// CheckWindow returns EmptyWindow for an empty or reversed w; the zero Window
// (a timeless unit, or "every window") passes.
func CheckWindow(what string, w Window) error {
	if w.IsZero() || !w.Empty() {
		return nil
	}
	return EmptyWindow(what, w)
}

// UnitsRunning refuses a Delete or Uncover that would remove or cut count
// running units of model, whose windows span hull.
// UncoverCollides is an Uncover of w from model refused because a part it
// would leave lands on another unit's window (ErrWindowTaken), worded
// alike on every store.
func UncoverCollides(model string, w Window) error {
	return fmt.Errorf("uncover %s of %s: the part of a unit left outside it would have the window of another unit of the model: %w; uncover a window that covers both units, or mark the other unit first", w, model, ErrWindowTaken)
}

func UnitsRunning(model string, count int, hull Window) error {
	where := ""
	if !hull.IsZero() {
		where = " in " + hull.String()
	}
	return fmt.Errorf("%d unit(s) of %s%s: %w; wait for their workers to finish (or their leases to expire), then try again",
		count, model, where, ErrUnitsRunning)
}

// LeaseLost refuses a Heartbeat or Complete under a claim that no longer
// holds its unit.
func LeaseLost(c Claim) error {
	return fmt.Errorf("unit %s %s (fence %d): %w; its outcome is another worker's to record now",
		c.Unit.Model, windowText(c.Unit.Window), c.Fence, ErrLeaseLost)
}

// Outcomes lists the statuses Complete records.
var Outcomes = []UnitStatus{Applied, Failed, Blocked, Pending}

// CheckOutcome refuses an Outcome whose Status Complete cannot record.
func CheckOutcome(c Claim, o Outcome) error {
	if slices.Contains(Outcomes, o.Status) {
		return nil
	}
	return fmt.Errorf("complete %s %s: %q is not an outcome; use applied, failed, blocked or pending",
		c.Unit.Model, windowText(c.Unit.Window), o.Status)
}

// Check refuses a StatusChange a store must not carry out: an unknown
// status, a move to running (only Claim, which gives a lease, makes a unit
// running), no statuses to move from (read as "every status", it would
// re-pend applied history), or an empty window.
func (r StatusChange) Check() error {
	what := "set status of " + r.Model
	if !slices.Contains(Statuses, r.To) {
		return fmt.Errorf("%s: unknown status %q; use pending, applied, blocked or failed", what, r.To)
	}
	if r.To == Running {
		return fmt.Errorf("%s: units become running only by a claim, which gives them a lease", what)
	}
	if r.Reason != "" && r.To != Blocked {
		return fmt.Errorf("%s: a reason is kept only on blocked units, not on %s ones", what, r.To)
	}
	if len(r.From) == 0 {
		return fmt.Errorf("%s: no statuses to move from; name them (every status must be asked for)", what)
	}
	for _, st := range r.From {
		if !slices.Contains(Statuses, st) {
			return fmt.Errorf("%s: unknown status %q to move from", what, st)
		}
	}
	return CheckWindow(what, r.Window)
}

// Check refuses a ClaimRequest no store can grant: a limit below one (a
// claimer with no room should not call), a lease that is not positive (the
// unit would be expired the moment it is claimed) or an empty window.
func (r ClaimRequest) Check() error {
	if r.Limit < 1 {
		return fmt.Errorf("claim: limit %d; ask for at least one unit", r.Limit)
	}
	if r.Lease <= 0 {
		return fmt.Errorf("claim: the lease must be positive, not %s", r.Lease)
	}
	return CheckWindow("claim", r.Window)
}

// inEnv is " in environment <env>", or nothing for the default environment.
func inEnv(env string) string {
	if env == "" {
		return ""
	}
	return " in environment " + env
}

// windowText prints w, or "timeless" for the zero Window of an existence row.
func windowText(w Window) string {
	if w.IsZero() {
		return "timeless"
	}
	return w.String()
}
