package sqlite

import (
	"context"
	"fmt"
	"slices"

	"github.com/bollhav/bollhav/state"
)

var _ state.StuckReader = (*Store)(nil)

// OutstandingWindows implements state.StuckReader from the covering index
// units_sweep_outstanding (migration 0008): no row of the table is read.
// A statement a model: an embedded database's round trip is a call.
func (s *Store) OutstandingWindows(ctx context.Context, env string, models []string, fn func(model string, since, until int64) error) error {
	for _, model := range models {
		if err := s.outstandingWindows(ctx, env, model, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) outstandingWindows(ctx context.Context, env, model string, fn func(model string, since, until int64) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT u."since", u."until"
		FROM "models" m JOIN "units" u INDEXED BY "units_sweep_outstanding" ON u."model_id" = m."id"
		WHERE m."env" = ? AND m."name" = ? AND u."status" <> 'applied'
		ORDER BY u."since", u."until"`, env, model)
	if err != nil {
		return fmt.Errorf("sqlite: outstanding windows of %s: %w", model, err)
	}
	defer rows.Close()
	var since, until int64
	for rows.Next() {
		if err := rows.Scan(&since, &until); err != nil {
			return fmt.Errorf("sqlite: outstanding windows of %s: %w", model, err)
		}
		if since == zeroMicros && until == zeroMicros {
			since, until = 0, 0
		}
		if err := fn(model, since, until); err != nil {
			return err
		}
	}
	return rows.Err()
}

// StuckPage implements state.StuckReader: a seek of units_stuck past the
// last window, in its order. The zero window of a timeless model's
// existence row is the smallest key, and its model's only unit.
func (s *Store) StuckPage(ctx context.Context, q state.StuckPageQuery) ([]state.Unit, error) {
	m, err := lookup(ctx, s.r, q.Env, q.Model)
	if err != nil {
		return nil, err
	}
	list, done, err := state.CheckStuckPage(q)
	if err != nil || done {
		return nil, err
	}
	args := []any{m.id}
	after := ""
	if q.After != nil {
		args = append(args, micros(q.After.Since), micros(q.After.Until))
		after = ` AND ("since", "until") > (?, ?)`
	}
	args = append(args, q.Limit)
	rows, err := s.r.QueryContext(ctx, `SELECT `+unitColumns+` FROM "units" INDEXED BY "units_stuck"
		WHERE "model_id" = ? AND "status" IN ('blocked', 'failed') AND "status" IN (`+list+`)`+after+`
		ORDER BY "since", "until" LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stuck page of %s: %w", q.Model, err)
	}
	defer rows.Close()
	var out []state.Unit
	for rows.Next() {
		u, err := scanUnit(rows, m)
		if err != nil {
			return nil, fmt.Errorf("sqlite: stuck page of %s: %w", q.Model, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// StuckGroups implements state.StuckReader: one walk of the partial index
// units_stuck_groups (migration 0015), which holds the stuck units in
// group order with every column the read takes, joined to the models of
// env. The statement reads both stuck statuses, the index's own condition
// word for word (SQLite reads a partial index only for a WHERE that holds
// its terms); any further term on the status makes SQLite sort every unit
// for the GROUP BY instead of counting each group as the walk passes it,
// so the statuses asked for are kept here.
func (s *Store) StuckGroups(ctx context.Context, env string, statuses []state.UnitStatus) ([]state.StuckGroup, error) {
	if err := state.CheckStuckStatuses(statuses); err != nil {
		return nil, err
	}
	models, err := s.envModels(ctx, env)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(models))
	for _, m := range models {
		names[m.id] = m.name
	}
	rows, err := s.r.QueryContext(ctx, `
		SELECT u."model_id", u."status", u."blocked_reason", count(*), min(u."since"), max(u."until"), min(u."updated_at")
		FROM "units" u INDEXED BY "units_stuck_groups" CROSS JOIN "models" m ON m."id" = u."model_id"
		WHERE m."env" = ? AND u."status" IN ('blocked', 'failed')
		GROUP BY u."model_id", u."status", u."blocked_reason"`, env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stuck groups of %q: %w", env, err)
	}
	defer rows.Close()
	var out []state.StuckGroup
	for rows.Next() {
		var (
			g            state.StuckGroup
			id           int64
			status       string
			since, until int64
			changed      int64
		)
		if err := rows.Scan(&id, &status, &g.Reason, &g.Units, &since, &until, &changed); err != nil {
			return nil, fmt.Errorf("sqlite: stuck groups of %q: %w", env, err)
		}
		name, ok := names[id]
		if !ok || !slices.Contains(statuses, state.UnitStatus(status)) {
			continue // registered after the model list was read, or not asked for
		}
		g.Model, g.Status, g.Span, g.Changed = name, state.UnitStatus(status), window(since, until), fromMicros(changed)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stuck groups of %q: %w", env, err)
	}
	state.SortStuckGroups(out)
	return out, nil
}

// FailingUnits implements state.StuckReader: a scan of the partial index
// units_failing (migration 0014) for env's models, its condition repeated
// word for word, as SQLite reads a partial index only for a WHERE holding
// its terms.
func (s *Store) FailingUnits(ctx context.Context, env string, fn func(state.Unit) error) error {
	return s.eachEnvUnit(ctx, env, "failing units of", `SELECT u."model_id", `+prefixedUnitColumns+`
		FROM "models" m JOIN "units" u INDEXED BY "units_failing" ON u."model_id" = m."id"
		WHERE m."env" = ? AND (u."status" = 'failed' OR (u."status" = 'pending' AND u."not_before" IS NOT NULL))
		ORDER BY u."model_id", u."since", u."until"`, []any{env}, fn)
}
