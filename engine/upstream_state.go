package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/state"
)

// upstreamState reads from the store what the gate needs about one gated
// upstream of model m for a unit with window w (nil when m is timeless): the
// registration in the environment RegistrationEnv names — its shape as
// registered, never as this spec assumes it — and the applied rows the level
// selects, read by window from an index rather than the upstream's whole
// history.
func (e *Engine) upstreamState(ctx context.Context, m *Model, src Source, w *state.Window, now time.Time) (UpstreamState, error) {
	env := m.RegistrationEnv(src, e.Env).Suffix
	rec, err := e.Store.Model(ctx, env, src.Name)
	if errors.Is(err, state.ErrNotFound) {
		return UpstreamState{}, nil
	}
	if err != nil {
		return UpstreamState{}, fmt.Errorf("reading the registration of %s: %w", src.Name, err)
	}
	up := UpstreamState{Registered: true, Temporality: Temporal, Flexibility: Fix}
	if rec.Temporality == Timeless.String() {
		up.Temporality = Timeless
	}
	if rec.Flexibility == Flex.String() {
		up.Flexibility = Flex
	}
	if src.Contract == Exists {
		return up, nil // EXISTS never inspects state
	}
	var read state.Window // zero: every applied row
	if up.Temporality == Temporal {
		grid, err := registeredGrid(rec)
		if err != nil {
			return UpstreamState{}, fmt.Errorf("upstream %s: %w", src.Name, err)
		}
		up.Start = grid.Start
		rng, _ := grid.ContractRange(now, rec.End)
		up.RangeEnd = rng.Until
		if w != nil {
			switch src.Contract {
			case Exact, Encapsulate:
				read = *w
			case Through:
				read = state.Window{Since: state.Earlier(up.Start, w.Since), Until: w.Until}
			}
		}
		if src.Contract == Whole && up.RangeEnd.After(up.Start) {
			read = state.Window{Since: up.Start, Until: up.RangeEnd}
		}
	}
	if up.Applied, err = e.Store.Applied(ctx, env, src.Name, read); err != nil {
		return UpstreamState{}, fmt.Errorf("reading applied rows of %s: %w", src.Name, err)
	}
	return up, nil
}

// registeredGrid is the grid a registration describes.
func registeredGrid(rec state.ModelRecord) (state.Grid, error) {
	iv, err := state.ParseInterval(rec.Interval)
	if err != nil {
		return state.Grid{}, fmt.Errorf("registered interval: %w", err)
	}
	loc, err := state.LoadLocation(rec.Timezone)
	if err != nil {
		return state.Grid{}, fmt.Errorf("registered timezone: %w", err)
	}
	return state.NewGrid(rec.Start, iv, loc)
}

// GateUnitFromStore gates one unit of m against the store: every gated
// upstream is read (no short-circuit) and judged by GateUnit at now.
func (e *Engine) GateUnitFromStore(ctx context.Context, m *Model, w *state.Window, now time.Time) (UnitGate, error) {
	ups := map[string]UpstreamState{}
	for _, src := range m.Upstream {
		if !src.Gated() || m.GateSkipped(src, e.Env) {
			continue
		}
		up, err := e.upstreamState(ctx, m, src, w, now)
		if err != nil {
			return UnitGate{}, err
		}
		ups[src.Name] = up
	}
	return GateUnit(m, w, e.Env, ups, now), nil
}
