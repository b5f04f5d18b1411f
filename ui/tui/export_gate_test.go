package tui

import (
	"context"

	"github.com/bollhav/bollhav/engine/gate"
)

// LiveGate is the feed's live gate index, built on first use as a view's
// load builds it.
func (f *Feed) LiveGate(ctx context.Context) (*gate.Live, error) { return f.gate.index(ctx) }

// BlockedNow is what the Blocked view loads through a UI sharing f: the
// failed and blocked units, with the index's verdicts.
func (f *Feed) BlockedNow(ctx context.Context) ([]gate.BlockedUnit, error) {
	d, err := loadBlocked(&common{eng: f.gate.eng, gate: f.gate}, "", blockedPage)(ctx)
	if err == nil {
		err = d.recheckErr
	}
	return d.units, err
}
