package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"

	"github.com/bollhav/bollhav/state"
)

// CompleteBatch implements state.Store: one write transaction in which the
// items are recorded in order, each as Complete records it. An item whose
// claim lost its lease, or whose outcome is not one, gets its error and has
// changed nothing (completeRow refuses before it writes); any other error
// rolls the whole batch back. Coverage is rebuilt once per run of adjacent
// windows that became applied, not once per unit: a batch of a grid's
// consecutive windows costs one rebuild.
func (s *Store) CompleteBatch(ctx context.Context, items []state.Completion) ([]error, error) {
	errs := make([]error, len(items))
	err := s.write(ctx, func(tx *sql.Tx) error {
		models := map[int64]modelRef{}
		applied := map[int64][]state.Window{}
		counts := appliedDeltas{}
		moves := statusDeltas{}
		for i, it := range items {
			if errs[i] = state.CheckOutcome(it.Claim, it.Outcome); errs[i] != nil {
				continue
			}
			m, w, err := completeRow(ctx, tx, it.Claim, it.Outcome, models, moves)
			if errors.Is(err, state.ErrLeaseLost) {
				errs[i] = err
				continue
			}
			if err != nil {
				return err
			}
			if m.id != 0 && it.Outcome.Status == state.Applied {
				counts.add(m.id, it.Outcome.Fingerprint, 1)
				if !w.IsZero() {
					applied[m.id] = append(applied[m.id], w)
				}
			}
		}
		if err := counts.apply(ctx, tx); err != nil {
			return err
		}
		if err := moves.apply(ctx, tx); err != nil {
			return err
		}
		for _, id := range slices.Sorted(maps.Keys(applied)) {
			for _, w := range state.NewIntervalSet(applied[id]...).Windows() {
				if err := refreshCoverage(ctx, tx, models[id], w); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}
