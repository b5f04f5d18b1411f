package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// Retirement implements state.StoreCopier.
func (s *Store) Retirement(ctx context.Context) (*state.Retirement, error) {
	return s.readRetirement(ctx, s.pool)
}

// Retire implements state.StoreCopier.
func (s *Store) Retire(ctx context.Context, r state.Retirement) error {
	return pgx.BeginTxFunc(ctx, s.pool, s.begin, func(tx pgx.Tx) error {
		if err := s.lockForMove(ctx, tx); err != nil {
			return err
		}
		return s.retire(ctx, tx, r)
	})
}

// readRetirement reads the store's retirement; nil for a live store.
func (s *Store) readRetirement(ctx context.Context, q querier) (*state.Retirement, error) {
	var kind, other string
	var at pgtype.Timestamptz
	err := q.QueryRow(ctx, s.sql(`SELECT retired_kind, retired_other, retired_at FROM {schema}.store_identity`)).Scan(&kind, &other, &at)
	if err != nil {
		return nil, fmt.Errorf("postgres: retirement: %w", err)
	}
	if kind == "" {
		return nil, nil
	}
	return &state.Retirement{Kind: state.RetirementKind(kind), Other: other, At: timeOf(at)}, nil
}

// retire records r and creates, in tx, a trigger on every copied table that
// refuses each statement writing to it with r's refusal (SQLSTATE 25006,
// read_only_sql_transaction): the refusal holds for every process and every
// bollhav that opens the schema, not only for this one. store_identity stays
// writable, so an operator who must can lift a retirement by hand
// (docs/semantics.md, "Moving a store").
func (s *Store) retire(ctx context.Context, tx pgx.Tx, r state.Retirement) error {
	_, err := tx.Exec(ctx, s.sql(`UPDATE {schema}.store_identity SET retired_kind = $1, retired_other = $2, retired_at = $3`),
		string(r.Kind), r.Other, r.At)
	if err != nil {
		return fmt.Errorf("postgres: retire: %w", err)
	}
	msg := "'" + strings.ReplaceAll("bollhav: "+r.Refusal(), "'", "''") + "'"
	stmts := []string{`CREATE OR REPLACE FUNCTION {schema}.bollhav_retired() RETURNS trigger LANGUAGE plpgsql AS $fn$
		BEGIN RAISE EXCEPTION USING ERRCODE = '25006', MESSAGE = ` + msg + `; END $fn$`}
	for _, t := range copiedTables {
		stmts = append(stmts, `CREATE TRIGGER bollhav_retired BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {schema}.`+t+`
			FOR EACH STATEMENT EXECUTE FUNCTION {schema}.bollhav_retired()`)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, s.sql(q)); err != nil {
			return fmt.Errorf("postgres: retire: %w", err)
		}
	}
	return nil
}
