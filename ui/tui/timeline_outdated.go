package tui

import (
	"context"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// loadOutdated adds to sp the applied windows of model name inside
// sp.Loaded built under an earlier definition than the model's current one
// (st.Fingerprint): the span's outdated windows, drawn as their own cells.
// Nothing is read while the model has none (st.Outdated, from the store's
// kept counts), nor for a model not registered or timeless; the read stops
// at staleScanLimit rows like the stale one, and says so.
func loadOutdated(ctx context.Context, e *engine.Engine, name string, st *engine.ModelStatus, sp *timelineSpan) error {
	if st == nil || !st.Registered || st.Timeless() || st.Outdated == 0 || sp.Loaded.Empty() {
		return nil
	}
	return scanApplied(ctx, e, name, sp, func(u state.Unit) {
		if engine.UnitDefinition(u, st.Fingerprint) == engine.DefinitionOutdated {
			sp.Outdated = append(sp.Outdated, u.Window)
		}
	})
}
