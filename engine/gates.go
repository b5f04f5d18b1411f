package engine

import (
	"context"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// gates is the gate reader over e's store, spec, environment and clock.
func (e *Engine) gates() *Reader {
	return &Reader{Store: e.Store, Spec: e.Spec, Env: e.Env, Now: e.now}
}

// GateSweep judges every outstanding unit the filter selects from one read
// of the environment; see Reader.GateSweep.
func (e *Engine) GateSweep(ctx context.Context, f BlockedFilter, fn func(SweptUnit) error) (*SweepReport, error) {
	return e.gates().GateSweep(ctx, f, fn)
}

// Blocked lists the blocked units the filter selects, with their reasons and
// downstream impact; see Reader.Blocked.
func (e *Engine) Blocked(ctx context.Context, f BlockedFilter) ([]BlockedUnit, error) {
	return e.gates().Blocked(ctx, f)
}

// Why explains the unit of model that holds at: its state, each gated
// upstream's verdict and the root cause of a wait; see Reader.Why.
func (e *Engine) Why(ctx context.Context, model string, at time.Time) (*WhyReport, error) {
	return e.gates().Why(ctx, model, at)
}

// GateUnitFromStore gates one unit of m against the store at now.
func (e *Engine) GateUnitFromStore(ctx context.Context, m *spec.Model, w *state.Window, now time.Time) (UnitGate, error) {
	return e.gates().GateUnitFromStore(ctx, m, w, now)
}
