package gate

import (
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Reader judges gates from the store: one unit against its gated upstreams,
// every outstanding unit at once (the sweep), the blocked units with
// what each holds downstream, and why one unit waits. It only reads: it never claims,
// runs or changes a unit, so the UI, the CLI and a run can all use it, and a
// read-only engine gives the same answers as a writable one.
type Reader struct {
	Store state.Store
	// Spec is the loaded spec, nil when the models come from their
	// registrations alone.
	Spec *spec.Spec
	// Env is the environment whose units are judged.
	Env spec.Env
	// Now is the clock freshness is judged by; time.Now when nil.
	Now func() time.Time
	// NoAfter leaves after: edges out of a unit's judgement, AfterOnly
	// (when set) judges only the edges it picks, and SkipRun is a run
	// whose own log does not decide them. A read judges every edge; a run
	// judges per unit only the edges its task graph does not settle.
	NoAfter   bool
	AfterOnly AfterFilter
	SkipRun   int64
	// AfterSettled are the verdicts, by upstream task, of the after:
	// edges the caller has settled already (a run's task graph, for the
	// same-pipeline upstreams of a task it started): a unit's run
	// condition folds them with the edges judged per window.
	AfterSettled map[string]AfterVerdict
}

func (g *Reader) now() time.Time {
	if g.Now != nil {
		return g.Now().UTC()
	}
	return time.Now().UTC()
}
