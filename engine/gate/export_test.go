package gate

import (
	"context"

	"github.com/bollhav/bollhav/engine/spec"
)

// HardErrorOf exposes hardError to the external tests, which hold it to
// the gate's own judgement of every unit (checkAgainstGate).
func (g *Reader) HardErrorOf(ctx context.Context, m *spec.Model) (hard, err error) {
	return g.hardError(ctx, &RegistrationCache{}, m)
}

// WindowedReads has the incidents trace read applied rows and
// outstanding units window by window (on) instead of keeping each
// model's whole (keptReads).
func WindowedReads(on bool) { windowedReads.Store(on) }
