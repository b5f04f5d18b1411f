package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
)

// ErrNothingToExplain is WorstUnitAt's answer for a temporal model with no
// failed or blocked unit: a front end asks for a time instead. Test for it
// with errors.Is.
var ErrNothingToExplain = errors.New("no failed or blocked unit")

// errFirstPage stops a paged read after its first page.
var errFirstPage = errors.New("the first page is enough")

// WorstUnitAt is the unit `why MODEL` explains when no time is given — the
// command line's `bollhav why MODEL` and the UI's `:why MODEL` alike: inside
// model's failed or blocked unit that holds the most, either the failed units
// of an incident of the model (a root: what the incident holds) or its
// blocked unit with the most units waiting downstream; a failed root wins a
// tie, being the cause. It returns a time inside that unit (its since), zero
// for a timeless model, whose one unit needs no time. A temporal model with
// nothing failed or blocked is an error wrapping ErrNothingToExplain; a model
// neither registered nor in the spec one wrapping ErrUnknownModel.
func (e *Engine) WorstUnitAt(ctx context.Context, model string) (time.Time, error) {
	st, err := e.ModelStatus(ctx, model)
	if err != nil {
		return time.Time{}, err
	}
	if st.Timeless() {
		return time.Time{}, nil
	}
	// The incidents from their own bounded read and the model's first
	// blocked unit in Blocked's order (its most holds, the earliest of a
	// tie): neither holds every blocked unit of the environment.
	rep, err := e.IncidentsReport(ctx)
	if err != nil {
		return time.Time{}, err
	}
	var at time.Time
	best := -1
	for _, inc := range rep.Incidents {
		if inc.Model == model && (inc.Kind == gate.IncidentFailed || inc.Kind == gate.IncidentGateError) && inc.Blocked > best {
			at, best = inc.Span.Since, inc.Blocked
		}
	}
	err = e.BlockedPages(ctx, gate.BlockedFilter{Model: model}, 1, func(p gate.StuckPage) error {
		if b := p.Units[0]; b.Holds > best {
			at, best = b.Window.Since, b.Holds
		}
		return errFirstPage
	})
	if err != nil && !errors.Is(err, errFirstPage) {
		return time.Time{}, err
	}
	if best < 0 {
		return time.Time{}, fmt.Errorf("%s has %w", model, ErrNothingToExplain)
	}
	return at, nil
}
