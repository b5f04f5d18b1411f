package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

// Audit records an operator action.
func (s *Store) Audit(ctx context.Context, e state.AuditEntry) error {
	var args any // NULL, not the JSON null, when there are none
	if len(e.Args) > 0 {
		args = e.Args
	}
	_, err := s.pool.Exec(ctx, s.sql(`
		INSERT INTO {schema}.audit (at, actor, action, args, outcome) VALUES ($1, $2, $3, $4, $5)`),
		e.At, e.Actor, e.Action, args, e.Outcome)
	return err
}

// AuditLog lists operator actions newest first, at most limit (no limit when
// limit <= 0).
func (s *Store) AuditLog(ctx context.Context, limit int) ([]state.AuditEntry, error) {
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT id, at, actor, action, args, outcome FROM {schema}.audit
		ORDER BY at DESC, id DESC LIMIT $1`), limitParam(limit))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.AuditEntry, error) {
		var e state.AuditEntry
		err := row.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.Args, &e.Outcome)
		e.At = e.At.UTC()
		return e, err
	})
}
