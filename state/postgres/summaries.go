package postgres

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// Summaries implements state.Store in one statement, so one snapshot:
// env's models, the kept counts by status with the newest applied_at
// (status_counts) and the kept coverage islands (coverage). Nothing here counts or merges units, so
// the cost is a few rows per model whatever their history.
func (s *Store) Summaries(ctx context.Context, env, model string) ([]state.ModelSummary, error) {
	// Each narrowing is its own statement, planned for it.
	args := []any{env}
	if model != "" {
		args = append(args, model)
	}
	narrow := func(col string) string {
		if model == "" {
			return ""
		}
		return " AND " + col + " = $2"
	}
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT 0, name, '', 0::bigint, NULL::timestamptz, NULL::timestamptz
		FROM {schema}.models WHERE env = $1`+narrow("name")+`
		UNION ALL
		SELECT 1, model, status, units, newest, NULL FROM {schema}.status_counts
		WHERE env = $1`+narrow("model")+` AND units <> 0
		UNION ALL
		SELECT 2, model, '', 0, since, until FROM {schema}.coverage WHERE env = $1`+narrow("model")), args...)
	if err != nil {
		return nil, err
	}
	var (
		kind         int
		name, status string
		n            int64
		a, b         pgtype.Timestamptz
		out          []state.ModelSummary
		islands      = map[string][]state.Window{}
		counts       = map[string]map[state.UnitStatus]int{}
		newest       = map[string]*time.Time{}
	)
	_, err = pgx.ForEachRow(rows, []any{&kind, &name, &status, &n, &a, &b}, func() error {
		switch kind {
		case 0:
			out = append(out, state.ModelSummary{Model: name})
		case 1:
			if counts[name] == nil {
				counts[name] = map[state.UnitStatus]int{}
			}
			counts[name][state.UnitStatus(status)] = int(n)
			if status == string(state.Applied) {
				newest[name] = timePtrOf(a)
			}
		case 2:
			islands[name] = append(islands[name], windowOf(a, b))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		sum := &out[i]
		sum.Counts = make(map[state.UnitStatus]int, len(state.Statuses))
		for _, st := range state.Statuses {
			sum.Counts[st] = counts[sum.Model][st]
		}
		sum.Coverage = state.NewIntervalSet(islands[sum.Model]...)
		sum.LastAppliedAt = newest[sum.Model]
	}
	slices.SortFunc(out, func(x, y state.ModelSummary) int { return cmp.Compare(x.Model, y.Model) })
	return out, nil
}

// StatusCounts implements state.Store: one read of the kept status_counts.
func (s *Store) StatusCounts(ctx context.Context, env string) ([]state.ModelCounts, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT model, status, units FROM {schema}.status_counts
		WHERE env = $1 AND units <> 0 ORDER BY model COLLATE "C"`), env)
	if err != nil {
		return nil, err
	}
	var (
		name, status string
		n            int64
		out          []state.ModelCounts
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &status, &n}, func() error {
		if len(out) == 0 || out[len(out)-1].Model != name {
			out = append(out, state.ModelCounts{Model: name, Counts: map[state.UnitStatus]int{}})
		}
		out[len(out)-1].Counts[state.UnitStatus(status)] = int(n)
		return nil
	})
	return out, err
}
