package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine"
)

// worstUnitAt is where `:why MODEL` without a time looks: the engine's
// pick (Engine.WorstUnitAt), the unit `bollhav why MODEL` explains too,
// with the palette's words for a model that has nothing to explain.
func worstUnitAt(ctx context.Context, e *engine.Engine, model string) (time.Time, error) {
	at, err := e.WorstUnitAt(ctx, model)
	if errors.Is(err, engine.ErrNothingToExplain) {
		return time.Time{}, fmt.Errorf("%s has no failed or blocked unit: give a time, :why %s 2026-01-01T05:00:00Z", model, model)
	}
	return at, err
}
