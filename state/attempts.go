package state

import (
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
	// lease: its worker died, and the budget it counted in with it.
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

// NextTry is the try a unit waiting for its retry will make: one more than
// the newest failed attempt's try in history (oldest first, as
// Store.Attempts returns it). It is 0 when u does not wait for a retry, and
// 1 when the history holds no counted try.
func NextTry(u Unit, history []Attempt) int {
	if u.NotBefore == nil {
		return 0
	}
	if len(history) == 0 {
		return 1
	}
	return history[len(history)-1].Try + 1
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
