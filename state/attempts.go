package state

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// MaxAttemptHistory bounds a unit's attempt history: a store keeps each
// unit's newest 20 failed attempts and drops older ones in the transaction
// that logs a new one, so a unit that fails forever does not grow a table
// without end.
const MaxAttemptHistory = 20

// Attempt is one failed attempt of a unit, as its history keeps it.
type Attempt struct {
	// Number is the unit's lifetime attempt count at this failure
	// (Unit.Attempts right after it): numbers only grow, with gaps where
	// an attempt succeeded or was blocked.
	Number int
	// Try is the attempt's try number within the retry budget it counted
	// in, from 1 (a model's retry: attempts bounds it). 0 is an expired
	// lease (its worker died, and the budget it counted in with it), or a
	// failure from before the history existed, logged when SetStatus
	// cleared its error: which try it was is not known.
	Try int
	// Error is why the attempt failed.
	Error string
	// At is when it failed: the outcome's time, or the now of the
	// ReleaseExpired that found its lease expired.
	At time.Time
	// RunID is the run that claimed the unit; 0 for a worker's claim.
	RunID int64
}

// LeaseExpiredError is the error an expired lease's attempt carries: the
// worker stopped renewing its claim before it recorded an outcome. owner is
// the claim's lease owner.
func LeaseExpiredError(owner string) string {
	if owner == "" {
		owner = leaseExpiredNoOwner
	}
	return leaseExpiredPrefix + owner + leaseExpiredSuffix
}

// LeaseExpiredParts are LeaseExpiredError's words around the owner, and the
// owner it names when there is none, so a store that logs many expired
// leases in one SQL statement writes the same words.
func LeaseExpiredParts() (prefix, noOwner, suffix string) {
	return leaseExpiredPrefix, leaseExpiredNoOwner, leaseExpiredSuffix
}

const (
	leaseExpiredPrefix  = "the lease expired: "
	leaseExpiredNoOwner = "its worker"
	leaseExpiredSuffix  = " stopped renewing it before recording an outcome (killed, or cut off from the store)"
)

// RetryWait is where a unit waiting for its retry stands in its budget:
// the try it will make next, of how many the model allows, and when.
type RetryWait struct {
	// Try is the next try: one more than the newest failed attempt's.
	Try int
	// Of is the model's retry.attempts; 0 when not known.
	Of int
	// At is the unit's not-before time.
	At time.Time
	// EndedRun, when not 0, is the run that set the retry, which has ended
	// since (cancelled, or failed): no try comes from it, and the next run
	// or worker takes the unit from At on with a fresh budget, so Try and
	// Of no longer say where it stands.
	EndedRun int64
}

// NoteEndedRun sets w.EndedRun when u's run, which set the retry, is no
// longer running; w may be nil. A worker's retry (no run) is left alone.
func NoteEndedRun(ctx context.Context, s Store, w *RetryWait, u Unit) error {
	if w == nil || u.RunID == 0 {
		return nil
	}
	run, err := s.GetRun(ctx, u.RunID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if run.Status != RunRunning {
		w.EndedRun = run.ID
	}
	return nil
}

// RetryWaitOf is u's retry wait, read from its history (oldest first, as
// Store.Attempts returns it) and of, the model's retry.attempts; nil when u
// does not wait for a retry.
func RetryWaitOf(u Unit, history []Attempt, of int) *RetryWait {
	if u.NotBefore == nil {
		return nil
	}
	w := &RetryWait{Try: 1, Of: of, At: *u.NotBefore}
	if n := len(history); n > 0 {
		w.Try = history[n-1].Try + 1
	}
	return w
}

// Line renders w with RetryLine, its time printed by format (each view
// prints times its own way).
func (w RetryWait) Line(format func(time.Time) string) string {
	if w.EndedRun != 0 {
		return "retry by a new run from " + format(w.At) + " (run " + strconv.FormatInt(w.EndedRun, 10) + " that set it ended)"
	}
	return RetryLine(w.Try, w.Of, format(w.At))
}

// RetryLine is the one wording of a unit waiting for its retry, which the
// CLI (units, why), the UI and the incidents screen all print: "retry 2/5 at
// 2026-01-03T14:05:00Z" — the next try, the model's retry.attempts (left out
// when of is not known, 0) and at, the not-before time already formatted
// the way the caller prints times.
func RetryLine(try, of int, at string) string {
	n := strconv.Itoa(try)
	if of > 0 {
		n += "/" + strconv.Itoa(of)
	}
	return "retry " + n + " at " + at
}

// Label names a failed attempt in a list of them: "try 2", or "attempt 7"
// for an expired lease, which counted in no budget.
func (a Attempt) Label() string {
	if a.Try == 0 {
		return "attempt " + strconv.Itoa(a.Number)
	}
	return "try " + strconv.Itoa(a.Try)
}

// NewestFirst returns history (oldest first, as Store.Attempts returns it)
// newest first, the order every view lists it in.
func NewestFirst(history []Attempt) []Attempt {
	out := make([]Attempt, len(history))
	for i, a := range history {
		out[len(history)-1-i] = a
	}
	return out
}

// EarlierFailures is failures (u's history newest first, as NewestFirst
// orders it) without the failure that left u where it is — failed, or
// waiting for its retry — whose error is u.Error already: the errors of
// earlier attempts.
func EarlierFailures(u Unit, failures []Attempt) []Attempt {
	if len(failures) > 0 && (u.Status == Failed || u.NotBefore != nil) && u.Error == failures[0].Error {
		return failures[1:]
	}
	return failures
}
