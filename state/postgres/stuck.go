package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

var _ state.StuckReader = (*Store)(nil)

// StuckGroups implements state.StuckReader with a GROUP BY over the rows
// units_stuck (migration 0014) points at. Literal statuses beside the
// index's predicate let the planner prove the partial index applies,
// which it cannot for a parameter. (An index carrying blocked_reason would
// make this read index-only, but a B-tree entry is limited to 2,704 bytes
// and a reason listing many missing ranges can be longer: the write that
// blocks such a unit would fail. docs/BENCHMARKS.md.)
func (s *Store) StuckGroups(ctx context.Context, env string, statuses []state.UnitStatus) ([]state.StuckGroup, error) {
	list, err := state.StuckStatusList(statuses)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT model, status, blocked_reason, count(*), min(since), max(until), min(updated_at)
		FROM {schema}.units
		WHERE env = $1 AND status IN ('blocked', 'failed') AND status IN (`+list+`)
		GROUP BY model, status, blocked_reason`), env)
	if err != nil {
		return nil, err
	}
	var (
		g       state.StuckGroup
		status  string
		n       int64
		a, b, c pgtype.Timestamptz
		out     []state.StuckGroup
	)
	_, err = pgx.ForEachRow(rows, []any{&g.Model, &status, &g.Reason, &n, &a, &b, &c}, func() error {
		g.Status, g.Units, g.Span, g.Changed = state.UnitStatus(status), int(n), windowOf(a, b), timeOf(c)
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	state.SortStuckGroups(out)
	return out, nil
}

// StuckPage implements state.StuckReader: a seek of units_stuck past the
// last window, in its order. A timeless model's existence row has no
// since (NULL), sorts last and is its model's only unit.
func (s *Store) StuckPage(ctx context.Context, q state.StuckPageQuery) ([]state.Unit, error) {
	if _, err := s.modelFlexible(ctx, s.pool, q.Env, q.Model); err != nil {
		return nil, err
	}
	list, done, err := state.CheckStuckPage(q)
	if err != nil || done {
		return nil, err
	}
	args := []any{q.Env, q.Model}
	after := ""
	if q.After != nil {
		args = append(args, q.After.Since, q.After.Until)
		after = ` AND (u.since, u.until) > ($3, $4)`
	}
	args = append(args, q.Limit)
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+unitColumns+` FROM {schema}.units u
		WHERE u.env = $1 AND u.model = $2 AND u.status IN ('blocked', 'failed') AND u.status IN (`+list+`)`+after+`
		ORDER BY u.since, u.until LIMIT $`+strconv.Itoa(len(args))), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []state.Unit
	sc := newUnitScanner()
	for rows.Next() {
		u, err := sc.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// OutstandingWindows implements state.StuckReader: an index-only scan of
// units_sweep_outstanding (migration 0009) for every model named, in one
// statement, so a thousand models cost one round trip; the existence
// row's NULL window sorts last and is its model's only unit.
func (s *Store) OutstandingWindows(ctx context.Context, env string, models []string, fn func(model string, since, until int64) error) error {
	if len(models) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, s.sql(`SELECT model, since, until FROM {schema}.units
		WHERE env = $1 AND model = ANY($2) AND status <> 'applied' ORDER BY model, since, until`), env, models)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		model []byte
		name  string
		a, b  pgtype.Timestamptz
	)
	for rows.Next() {
		if err := rows.Scan(&model, &a, &b); err != nil {
			return err
		}
		name = reuse(model, name)
		var since, until int64
		if a.Valid {
			since, until = a.Time.UnixMicro(), b.Time.UnixMicro()
		}
		if err := fn(name, since, until); err != nil {
			cancel()
			return err
		}
	}
	return rows.Err()
}

// FailingUnits implements state.StuckReader: a scan of the partial index
// units_failing (migration 0016), in its order, its predicate written out
// word for word so the planner proves the index applies.
func (s *Store) FailingUnits(ctx context.Context, env string, fn func(state.Unit) error) error {
	_, err := s.eachUnit(ctx, `SELECT `+unitColumns+` FROM {schema}.units u
		WHERE u.env = $1 AND (u.status = 'failed' OR (u.status = 'pending' AND u.not_before IS NOT NULL))
		ORDER BY u.model, u.since, u.until`, []any{env}, fn)
	return err
}
