package sqlite

import (
	"cmp"
	"context"
	"database/sql"

	"github.com/bollhav/bollhav/state"
)

// The applied_counts table (migration 0006): applied units per model and
// fingerprint, kept by the transitions themselves in their transaction.

type countKey struct {
	model       int64
	fingerprint string
}

// appliedDeltas is one transaction's changes to applied_counts: units of a
// model under a fingerprint ("" unknown) that became applied (positive) or
// stopped being applied units (negative).
type appliedDeltas map[countKey]int

func (d appliedDeltas) add(model int64, fingerprint string, n int) {
	d[countKey{model, fingerprint}] += n
}

// apply writes the deltas, in key order, one upsert each.
func (d appliedDeltas) apply(ctx context.Context, tx *sql.Tx) error {
	return upsertDeltas(ctx, tx, d, func(a, b countKey) int {
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.fingerprint, b.fingerprint))
	}, `INSERT INTO "applied_counts" ("model_id", "fingerprint", "units") VALUES (?, ?, ?)
			ON CONFLICT ("model_id", "fingerprint") DO UPDATE SET "units" = "units" + excluded."units"`,
		func(k countKey) (int64, any) { return k.model, k.fingerprint })
}

// upsertDeltas runs upsert for each key of d in order's order, with the
// key's model, its second column (by key) and its delta.
func upsertDeltas[K comparable](ctx context.Context, tx *sql.Tx, d map[K]int, order func(a, b K) int, upsert string, key func(K) (int64, any)) error {
	for _, k := range state.DeltaKeys(d, order) {
		model, col := key(k)
		if _, err := tx.ExecContext(ctx, upsert, model, col, d[k]); err != nil {
			return err
		}
	}
	return nil
}

// leaving subtracts from d the applied units among those matching where
// (units of model, which the caller is about to move out of applied or
// delete), by fingerprint: one grouped read of the units index.
func (d appliedDeltas) leaving(ctx context.Context, tx *sql.Tx, model int64, where string, args []any) error {
	rows, err := tx.QueryContext(ctx, `SELECT coalesce("fingerprint", ''), count(*) FROM "units" WHERE `+where+` AND "status" = 'applied'
		GROUP BY "fingerprint"`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var fp string
		var n int
		if err := rows.Scan(&fp, &n); err != nil {
			return err
		}
		d.add(model, fp, -n)
	}
	return rows.Err()
}
