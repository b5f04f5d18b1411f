package engine

import (
	"context"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
)

// underWayWait is how long a unit that waits on upstream work under way
// stays unclaimed before it is judged again. The store's wake-up cannot end
// the wait sooner (a claim skips the unit until then), so it is short: long
// enough that a worker does not judge the unit again and again while the
// upstream hour it needs is still running, short against a unit's run.
const underWayWait = time.Second

// underWay reports whether a unit whose gate judged is unsatisfied waits on
// upstream work under way rather than being blocked (gate.Reader.UnderWay),
// and the reason it waits. claimsPending says which models' pending units
// the caller will run (nil: none): a worker claims every pending unit of
// the spec's models; a run, those of its tasks still in flight. A store
// error while looking is logged and the unit is blocked as before: the next
// discover or run judges it again.
func (e *Engine) underWay(ctx context.Context, gates *gate.Reader, m *spec.Model, judged gate.UnitGate, claimsPending func(string) bool) (string, bool) {
	var (
		reason string
		ok     bool
	)
	err := e.retryStore(ctx, "look for upstream work under way", func() (err error) {
		reason, ok, err = gates.UnderWay(ctx, m, judged, claimsPending)
		return err
	})
	if err != nil {
		e.logger().Warn("could not tell whether upstream work is under way; blocking the unit", "model", m.Name, "err", err)
		return "", false
	}
	return reason, ok
}

// specClaims is a worker's claimsPending: it claims every pending unit of
// the spec's models.
func (e *Engine) specClaims(model string) bool { return e.spec != nil && e.spec.Model(model) != nil }

// modelsInFlight are the models whose tasks a run has started and not yet
// finished: their pending units in the run window are the run's to load,
// so a unit of another task that needs them waits instead of blocking. A
// task that has ended leaves pending units no one in the run will load.
type modelsInFlight struct {
	mu sync.Mutex
	n  map[string]int
}

func newModelsInFlight() *modelsInFlight { return &modelsInFlight{n: map[string]int{}} }

func (f *modelsInFlight) start(model string) {
	f.mu.Lock()
	f.n[model]++
	f.mu.Unlock()
}

func (f *modelsInFlight) end(model string) {
	f.mu.Lock()
	if f.n[model]--; f.n[model] <= 0 {
		delete(f.n, model)
	}
	f.mu.Unlock()
}

// claims is the run's claimsPending.
func (f *modelsInFlight) claims(model string) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[model] > 0
}
