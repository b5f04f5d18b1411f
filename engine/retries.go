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
// recorded) and m's policy leaves a try; now is the lease clock.
func (r *retries) apply(m *spec.Model, c state.Claim, v unitVerdict, now time.Time) unitVerdict {
	if v.out.Status != state.Failed || v.hard || v.recorded || !m.Retry.Retries() {
		return v
	}
	r.mu.Lock()
	r.tries[c.Unit.ID]++
	n := r.tries[c.Unit.ID]
	r.mu.Unlock()
	if n >= m.Retry.Attempts {
		return v // the last try: the failure is final
	}
	v.out = state.Outcome{Status: state.Pending, Error: v.out.Error, At: v.out.At,
		NotBefore: now.Add(m.Retry.Backoff(n, rand.Float64()))}
	return v
}
