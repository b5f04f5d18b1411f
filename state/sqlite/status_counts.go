package sqlite

import (
	"cmp"
	"context"
	"database/sql"

	"github.com/bollhav/bollhav/state"
)

// The status_counts table (migration 0009): units per model and status,
// kept by the transitions themselves in their transaction, as
// applied_counts is, so Summaries never counts units.

type statusKey struct {
	model  int64
	status state.UnitStatus
}

// statusDeltas is one transaction's changes to status_counts: units of a
// model that entered a status (positive) or left it (negative).
type statusDeltas map[statusKey]int

// move records n units of model going from one status to another; an
// empty from is an insert, an empty to a delete.
func (d statusDeltas) move(model int64, from, to state.UnitStatus, n int) {
	if from != "" {
		d[statusKey{model, from}] -= n
	}
	if to != "" {
		d[statusKey{model, to}] += n
	}
}

// apply writes the deltas in key order, one upsert each.
func (d statusDeltas) apply(ctx context.Context, tx *sql.Tx) error {
	return upsertDeltas(ctx, tx, d, func(a, b statusKey) int {
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.status, b.status))
	}, `INSERT INTO "status_counts" ("model_id", "status", "units") VALUES (?, ?, ?)
			ON CONFLICT ("model_id", "status") DO UPDATE SET "units" = "units" + excluded."units"`,
		func(k statusKey) (int64, any) { return k.model, string(k.status) })
}

// moveStatus is statusDeltas for a single move, applied at once.
func moveStatus(ctx context.Context, tx *sql.Tx, model int64, from, to state.UnitStatus, n int) error {
	d := statusDeltas{}
	d.move(model, from, to, n)
	return d.apply(ctx, tx)
}
