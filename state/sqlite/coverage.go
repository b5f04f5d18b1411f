package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/bollhav/bollhav/state"
)

// The coverage table holds each model's coverage as disjoint islands that do
// not touch, rebuilt around every change to the model's applied units in the
// transaction that makes it. Reading coverage is then a couple of index
// seeks whatever the model's history, which is what lets the gate ask "is
// there a hole before u" (THROUGH) per downstream unit without a union over
// every applied row.

// Coverage implements state.Store. Its reads share one snapshot, so an
// island merged or split by a concurrent commit is seen before or after,
// never half of each.
func (s *Store) Coverage(ctx context.Context, env, model string, w state.Window) (state.IntervalSet, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return state.IntervalSet{}, fmt.Errorf("sqlite: coverage: %w", err)
	}
	defer tx.Rollback()
	m, err := lookup(ctx, tx, env, model)
	if err != nil {
		return state.IntervalSet{}, err
	}
	if w.IsZero() {
		islands, err := islandsWhere(ctx, tx, `"model_id" = ? ORDER BY "since"`, m.id)
		return state.NewIntervalSet(islands...), err
	}
	islands, err := islandsNear(ctx, tx, m.id, w, false)
	if err != nil {
		return state.IntervalSet{}, err
	}
	return state.NewIntervalSet(islands...).Intersect(w), nil
}

// islandsNear returns the islands of a model that overlap w, or, with
// touching, also those that only touch it. Islands are disjoint, so they
// are the one island that starts before w and reaches into it (the first by
// until) plus those that start inside w: two bounded seeks.
func islandsNear(ctx context.Context, q querier, modelID int64, w state.Window, touching bool) ([]state.Window, error) {
	firstSQL, firstArgs, restSQL, restArgs := islandQueries(modelID, w, touching)
	first, err := islandsWhere(ctx, q, firstSQL, firstArgs...)
	if err != nil {
		return nil, err
	}
	var out []state.Window
	if len(first) == 1 && (first[0].Since.Before(w.Until) || touching && first[0].Since.Equal(w.Until)) {
		out = append(out, first[0])
	}
	rest, err := islandsWhere(ctx, q, restSQL, restArgs...)
	if err != nil {
		return nil, err
	}
	for _, r := range rest {
		if len(out) == 0 || !r.Equal(out[0]) {
			out = append(out, r)
		}
	}
	return out, nil
}

// islandQueries are the two seeks of islandsNear, as WHERE clauses of the
// coverage table: the first island reaching w.since (by until), and the
// islands starting inside w (by since).
func islandQueries(modelID int64, w state.Window, touching bool) (first string, firstArgs []any, rest string, restArgs []any) {
	reach, startOp, endOp := `>`, `>`, `<`
	if touching {
		reach, startOp, endOp = `>=`, `>=`, `<=`
	}
	return `"model_id" = ? AND "until" ` + reach + ` ? ORDER BY "until" LIMIT 1`, []any{modelID, micros(w.Since)},
		`"model_id" = ? AND "since" ` + startOp + ` ? AND "since" ` + endOp + ` ? ORDER BY "since"`, []any{modelID, micros(w.Since), micros(w.Until)}
}

func islandsWhere(ctx context.Context, q querier, where string, args ...any) ([]state.Window, error) {
	rows, err := q.QueryContext(ctx, `SELECT "since", "until" FROM "coverage" WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: coverage: %w", err)
	}
	defer rows.Close()
	var out []state.Window
	for rows.Next() {
		var since, until int64
		if err := rows.Scan(&since, &until); err != nil {
			return nil, err
		}
		out = append(out, window(since, until))
	}
	return out, rows.Err()
}

// refreshCoverage rebuilds m's islands within h after its applied units
// changed there (and only there): the islands touching h keep their parts
// outside h, and inside h coverage is recomputed from the applied units
// overlapping it. The work is proportional to the units in h, not to the
// model's history.
func refreshCoverage(ctx context.Context, q querier, m modelRef, h state.Window) error {
	if h.IsZero() || h.Empty() {
		return nil
	}
	old, err := islandsNear(ctx, q, m.id, h, true)
	if err != nil {
		return err
	}
	var inH []state.Window
	err = appliedRows(ctx, q, m, h, func(since, until, _ int64, _ string) {
		inH = append(inH, window(since, until))
	})
	if err != nil {
		return err
	}
	next := state.NewIntervalSet(old...).SubtractWindow(h).Union(state.NewIntervalSet(inH...).Intersect(h))
	for _, w := range old {
		if _, err := q.ExecContext(ctx, `DELETE FROM "coverage" WHERE "model_id" = ? AND "since" = ?`, m.id, micros(w.Since)); err != nil {
			return fmt.Errorf("sqlite: coverage: %w", err)
		}
	}
	for _, w := range next.Windows() {
		if _, err := q.ExecContext(ctx, `INSERT INTO "coverage" ("model_id", "since", "until") VALUES (?, ?, ?)`, m.id, micros(w.Since), micros(w.Until)); err != nil {
			return fmt.Errorf("sqlite: coverage: %w", err)
		}
	}
	return nil
}
