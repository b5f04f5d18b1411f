package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/bollhav/bollhav/state"
)

// The definition history (migration 0007): each model's definitions by
// fingerprint, first seen when registered.

// keepDefinition keeps d under its registered model unless its fingerprint
// is kept already, which then keeps the earlier first-seen time.
func keepDefinition(ctx context.Context, tx *sql.Tx, env string, d state.DefinitionRecord) error {
	m, err := lookup(ctx, tx, env, d.Model)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO "definitions" ("model_id", "fingerprint", "definition", "first_seen") VALUES (?, ?, ?, ?)
		ON CONFLICT ("model_id", "fingerprint") DO UPDATE SET "first_seen" = min("first_seen", excluded."first_seen")`,
		m.id, d.Fingerprint, definition(d.Definition), micros(d.FirstSeen))
	return err
}

// RecordDefinitions implements state.Store.
func (s *Store) RecordDefinitions(ctx context.Context, defs []state.DefinitionRecord) error {
	for _, d := range defs {
		if d.Fingerprint == "" {
			return fmt.Errorf("sqlite: keeping a definition of %s: it has no fingerprint", d.Model)
		}
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, d := range defs {
			if err := keepDefinition(ctx, tx, d.Env, d); err != nil {
				return fmt.Errorf("sqlite: keeping a definition of %s: %w", d.Model, err)
			}
		}
		return nil
	})
}

// Definitions implements state.Store.
func (s *Store) Definitions(ctx context.Context, env, model string) ([]state.DefinitionRecord, error) {
	m, err := lookup(ctx, s.r, env, model)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT "fingerprint", "definition", "first_seen" FROM "definitions"
		WHERE "model_id" = ? ORDER BY "first_seen", "fingerprint"`, m.id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: definitions of %s: %w", model, err)
	}
	defer rows.Close()
	out := []state.DefinitionRecord{} // empty, not nil, as PostgreSQL's
	for rows.Next() {
		d := state.DefinitionRecord{Env: env, Model: model}
		var first int64
		if err := rows.Scan(&d.Fingerprint, &d.Definition, &first); err != nil {
			return nil, err
		}
		d.FirstSeen = fromMicros(first)
		out = append(out, d)
	}
	return out, rows.Err()
}
