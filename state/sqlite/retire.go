package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/state"
)

// retiredTables are the tables a retired store refuses writes to: all the
// state a run, a worker, an apply or a mark changes. The counts, coverage
// and change feed are written only beside these, so they are refused with
// them; store_identity stays writable, so an operator who must can lift a
// retirement by hand (docs/semantics.md, "Moving a store").
var retiredTables = []string{"models", "edges", "definitions", "units", "attempts", "runs", "task_runs", "audit_log", "data_loads"}

// Retirement implements state.StoreCopier.
func (s *Store) Retirement(ctx context.Context) (*state.Retirement, error) {
	return readRetirement(ctx, s.r)
}

// Retire implements state.StoreCopier.
func (s *Store) Retire(ctx context.Context, r state.Retirement) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := refuseMove(ctx, tx); err != nil {
			return err
		}
		return retire(ctx, tx, r)
	})
}

// readRetirement reads the store's retirement; nil for a live store.
func readRetirement(ctx context.Context, q querier) (*state.Retirement, error) {
	var kind, other string
	var at sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT "retired_kind", "retired_other", "retired_at" FROM "store_identity"`).Scan(&kind, &other, &at)
	if err != nil {
		return nil, fmt.Errorf("sqlite: retirement: %w", err)
	}
	if kind == "" {
		return nil, nil
	}
	return &state.Retirement{Kind: state.RetirementKind(kind), Other: other, At: timeOrZero(at)}, nil
}

// retire records r and creates the triggers that refuse every write to
// retiredTables with r's refusal, in tx: the refusal holds for every
// process and every bollhav that opens the file, not only for this one.
func retire(ctx context.Context, tx *sql.Tx, r state.Retirement) error {
	_, err := tx.ExecContext(ctx, `UPDATE "store_identity" SET "retired_kind" = ?, "retired_other" = ?, "retired_at" = ?`,
		string(r.Kind), r.Other, micros(r.At))
	if err != nil {
		return fmt.Errorf("sqlite: retire: %w", err)
	}
	msg := strings.ReplaceAll("bollhav: "+r.Refusal(), "'", "''")
	for _, table := range retiredTables {
		for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
			name := quoteIdent("bollhav_retired_" + table + "_" + strings.ToLower(op))
			q := fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, '%s'); END`, name, op, quoteIdent(table), msg)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlite: retire: %w", err)
			}
		}
	}
	return nil
}
