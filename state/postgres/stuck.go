package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

var _ state.StuckReader = (*Store)(nil)

// shortReason and longReason are the predicates of units_stuck_groups and
// units_stuck_long (migration 0017), word for word: a stuck unit whose
// reason fits an index entry, and one whose reason does not.
const (
	shortReason = `coalesce(octet_length(blocked_reason), 0) < 2000`
	longReason  = `octet_length(blocked_reason) >= 2000`
)

// StuckGroups implements state.StuckReader with a GROUP BY over the
// stuck units, read from units_stuck_groups (migration 0017), index-only,
// for every unit whose reason fits an index entry, and through
// units_stuck_long for the few whose reason does not. The two halves
// split on the indexes' own predicates, written here as there, so each
// unit is counted once and the planner can prove each partial index
// applies; literal statuses beside them, for the same reason (it cannot
// prove it for a parameter). A reason is under the limit or not, so a
// group is all in one half.
func (s *Store) StuckGroups(ctx context.Context, env string, statuses []state.UnitStatus) ([]state.StuckGroup, error) {
	list, err := state.StuckStatusList(statuses)
	if err != nil {
		return nil, err
	}
	half := func(reason string) string {
		return `SELECT model, status, blocked_reason, count(*), min(since), max(until), min(updated_at)
		FROM {schema}.units
		WHERE env = $1 AND status IN ('blocked', 'failed') AND ` + reason + ` AND status IN (` + list + `)
		GROUP BY model, status, blocked_reason`
	}
	rows, err := s.pool.Query(ctx, s.sql(half(shortReason)+" UNION ALL "+half(longReason)), env)
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
