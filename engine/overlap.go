package engine

import (
	"context"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Running returns the running units of model when it is flexible — the
// units whose overlap lock holds a pending unit of the same model back
// (gate.UnitReasons) — and nothing for any other model: the windows of a
// fixed grid never overlap, and a timeless model has one row. One indexed
// read of the model's running units, a handful at most (one per worker).
func (e *Engine) Running(ctx context.Context, model string) ([]state.Unit, error) {
	st, err := e.ModelStatus(ctx, model)
	if err != nil || !st.Registered || st.Flexibility != spec.Flex.String() {
		return nil, err
	}
	var out []state.Unit
	err = e.ScanUnits(ctx, model, state.Window{}, []state.UnitStatus{state.Running}, func(u state.Unit) error {
		out = append(out, u)
		return nil
	})
	return out, err
}
