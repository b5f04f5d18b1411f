package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/bollhav/bollhav/state"
)

// Summaries implements state.Store: three reads in one snapshot, whatever
// the number of models — the kept status counts (status_counts), the kept
// coverage islands (coverage), and each model's newest applied_at, one
// seek of the units_applied_at index per model. Nothing here counts or
// merges units.
func (s *Store) Summaries(ctx context.Context, env, model string) ([]state.ModelSummary, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: summaries of %q: %w", env, err)
	}
	defer tx.Rollback()
	out, byID, err := summaryModels(ctx, tx, env, model)
	if err != nil || len(out) == 0 {
		return out, err
	}
	rows, err := tx.QueryContext(ctx, summaryCountsSQL, env, model, model)
	if err != nil {
		return nil, fmt.Errorf("sqlite: summaries of %q: %w", env, err)
	}
	for rows.Next() {
		var id int64
		var status string
		var n int
		if err := rows.Scan(&id, &status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		out[byID[id]].Counts[state.UnitStatus(status)] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, summaryCoverageSQL, env, model, model)
	if err != nil {
		return nil, fmt.Errorf("sqlite: summaries of %q: %w", env, err)
	}
	defer rows.Close()
	islands := map[int64][]state.Window{}
	for rows.Next() {
		var id, since, until int64
		if err := rows.Scan(&id, &since, &until); err != nil {
			return nil, err
		}
		islands[id] = append(islands[id], window(since, until))
	}
	for id, ws := range islands {
		out[byID[id]].Coverage = state.NewIntervalSet(ws...)
	}
	return out, rows.Err()
}

// Summaries's three reads, each taking (env, model, model): model "" reads
// every model of env.
const (
	summaryModelsSQL = `SELECT m."id", m."name",
			(SELECT max(u."applied_at") FROM "units" u WHERE u."model_id" = m."id" AND u."status" = 'applied')
		FROM "models" m WHERE m."env" = ? AND (? = '' OR m."name" = ?) ORDER BY m."name"`
	summaryIn        = `JOIN "models" m ON m."id" = c."model_id" WHERE m."env" = ? AND (? = '' OR m."name" = ?)`
	summaryCountsSQL = `SELECT c."model_id", c."status", c."units" FROM "status_counts" c ` + summaryIn + ` AND c."units" <> 0`
	// Unordered: NewIntervalSet orders each model's islands.
	summaryCoverageSQL = `SELECT c."model_id", c."since", c."until" FROM "coverage" c ` + summaryIn
)

// summaryModels reads env's models (or the one named) by name with their
// newest applied_at, and indexes the summaries by model id.
func summaryModels(ctx context.Context, tx *sql.Tx, env, model string) ([]state.ModelSummary, map[int64]int, error) {
	rows, err := tx.QueryContext(ctx, summaryModelsSQL, env, model, model)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: summaries of %q: %w", env, err)
	}
	defer rows.Close()
	var out []state.ModelSummary
	byID := map[int64]int{}
	for rows.Next() {
		var id int64
		var last sql.NullInt64
		sum := state.ModelSummary{UnitStats: state.UnitStats{Counts: make(map[state.UnitStatus]int, len(state.Statuses))}}
		if err := rows.Scan(&id, &sum.Model, &last); err != nil {
			return nil, nil, err
		}
		for _, st := range state.Statuses {
			sum.Counts[st] = 0
		}
		sum.LastAppliedAt = timePtr(last)
		byID[id] = len(out)
		out = append(out, sum)
	}
	return out, byID, rows.Err()
}

// StatusCounts implements state.Store: one read of the kept status_counts.
func (s *Store) StatusCounts(ctx context.Context, env string) ([]state.ModelCounts, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m."name", c."status", c."units" FROM "status_counts" c
		JOIN "models" m ON m."id" = c."model_id" WHERE m."env" = ? AND c."units" <> 0 ORDER BY m."name"`, env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: status counts of %q: %w", env, err)
	}
	defer rows.Close()
	var out []state.ModelCounts
	for rows.Next() {
		var name, status string
		var n int
		if err := rows.Scan(&name, &status, &n); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].Model != name {
			out = append(out, state.ModelCounts{Model: name, Counts: map[state.UnitStatus]int{}})
		}
		out[len(out)-1].Counts[state.UnitStatus(status)] = n
	}
	return out, rows.Err()
}
