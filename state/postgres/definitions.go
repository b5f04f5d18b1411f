package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// The definition history (migration 0007): each model's definitions by
// fingerprint, first seen when registered.

// keepDefinitions keeps each of defs unless its fingerprint is kept
// already, which then keeps the earlier first-seen time. The caller has
// checked that the models are registered.
func (s *Store) keepDefinitions(ctx context.Context, tx pgx.Tx, defs []state.DefinitionRecord) error {
	for _, d := range defs {
		body := pgtype.Text{String: string(d.Definition), Valid: true}
		if len(d.Definition) == 0 {
			body.String = "{}"
		}
		if _, err := tx.Exec(ctx, s.sql(`
			INSERT INTO {schema}.definitions AS d (env, model, fingerprint, definition, first_seen)
			VALUES ($1, $2, $3, $4::json, $5)
			ON CONFLICT (env, model, fingerprint) DO UPDATE SET first_seen = least(d.first_seen, excluded.first_seen)`),
			d.Env, d.Model, d.Fingerprint, body, d.FirstSeen); err != nil {
			return err
		}
	}
	return nil
}

// RecordDefinitions implements state.Store.
func (s *Store) RecordDefinitions(ctx context.Context, defs []state.DefinitionRecord) error {
	for _, d := range defs {
		switch {
		case d.Fingerprint == "":
			return fmt.Errorf("keeping a definition of %s: it has no fingerprint", d.Model)
		case len(d.Definition) > 0 && !json.Valid(d.Definition):
			return fmt.Errorf("keeping a definition of %s: it is not valid JSON", d.Model)
		}
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, d := range defs {
			if _, err := s.modelFlexible(ctx, tx, d.Env, d.Model); err != nil {
				return err
			}
		}
		return s.keepDefinitions(ctx, tx, defs)
	})
}

// Definitions implements state.Store.
func (s *Store) Definitions(ctx context.Context, env, model string) ([]state.DefinitionRecord, error) {
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT fingerprint, definition::text, first_seen FROM {schema}.definitions
		WHERE env = $1 AND model = $2 ORDER BY first_seen, fingerprint`), env, model)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.DefinitionRecord, error) {
		d := state.DefinitionRecord{Env: env, Model: model}
		var body string
		err := row.Scan(&d.Fingerprint, &body, &d.FirstSeen)
		d.Definition, d.FirstSeen = []byte(body), d.FirstSeen.UTC()
		return d, err
	})
}
