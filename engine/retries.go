package engine

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// retries is a loop's retry budget: per unit, the failed tries it has made
// in this run (a task attempt; `run --retry` starts a new one, with a fresh
// budget) or, for a worker, in this process. A failure with tries left
// goes back to pending with a not-before time (backoff from the model's
// policy), which the store keeps, so no run or worker — this one after a
// crash included — claims it earlier; the loop's claim loop waits for it
// like for any outstanding unit.
type retries struct {
	mu    sync.Mutex
	tries map[int64]int
}

func newRetries() *retries { return &retries{tries: map[int64]int{}} }

// apply turns v, the verdict of c's unit of m, into a retry when it is a
// failure of the work (not a hard gate error, not one the executor
// recorded) and m's policy leaves a try; now is the lease clock. Every
// failure gets its try number within the budget (Outcome.Try), which the
// store keeps in the unit's attempt history and "retry 2/5" is read from.
func (r *retries) apply(m *spec.Model, c state.Claim, v unitVerdict, now time.Time) unitVerdict {
	if v.out.Status != state.Failed || v.recorded {
		// It ran to an end that is no failure of the work (applied,
		// blocked, or recorded by the executor): a later failure starts a
		// fresh budget.
		r.forget(c.Unit.ID)
		return v
	}
	if !m.Retry.Retries() {
		v.out.Try = 1 // a budget of one try: every failure is its first and last
		return v
	}
	r.mu.Lock()
	n := r.tries[c.Unit.ID] + 1
	if !v.hard { // a hard gate error is final, and uses no try of the budget
		r.tries[c.Unit.ID] = n
	}
	r.mu.Unlock()
	v.out.Try = n
	if v.hard || n >= m.Retry.Attempts {
		// The last try: the failure is final. A worker lives on, and an
		// operator who re-pends the unit gives it a fresh budget.
		r.forget(c.Unit.ID)
		return v
	}
	v.out = state.Outcome{Status: state.Pending, Error: v.out.Error, At: v.out.At, Try: n,
		NotBefore: now.Add(m.Retry.Backoff(n, rand.Float64()))}
	return v
}

// forget drops a unit's count of failed tries.
func (r *retries) forget(id int64) {
	r.mu.Lock()
	delete(r.tries, id)
	r.mu.Unlock()
}
