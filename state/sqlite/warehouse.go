package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bollhav/bollhav/state"
)

// ledgerTable is the bollhav-owned table of a SQLite warehouse: a file
// has no schemas, so the ledger is one table beside the models' data.
// Model targets may not be called so.
const ledgerTable = "bollhav_ledger"

// Warehouse is a SQLite file that holds models' data apart from the state
// store (state.Warehouse): a model's connection naming a path. It reuses
// the store's data-job code on the file's own writer, and keeps the ledger
// in ledgerTable, written in the data's transaction. SQLite has one writer
// at a time, so a unit's transaction and the ledger's fence check are
// never interleaved with another claim's.
type Warehouse struct {
	data *Store
	loc  state.Location
}

var _ state.Warehouse = (*Warehouse)(nil)

// OpenWarehouse opens (creating it when missing) the SQLite file at path
// as a warehouse, and its ledger table.
func OpenWarehouse(ctx context.Context, path string) (*Warehouse, error) {
	s, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS "`+ledgerTable+`" (
			"unit_key"      TEXT    PRIMARY KEY,
			"fence"         INTEGER NOT NULL,
			"done_fence"    INTEGER NOT NULL DEFAULT 0,
			"done_attempts" INTEGER NOT NULL DEFAULT 0,
			"rows"          INTEGER NOT NULL DEFAULT 0,
			"done_at"       INTEGER
		)`)
		return err
	})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: preparing the warehouse's ledger: %w", err)
	}
	return &Warehouse{data: s, loc: state.Location{Driver: "sqlite", Database: path}}, nil
}

// Location implements state.Warehouse.
func (w *Warehouse) Location() state.Location { return w.loc }

// Close closes the file.
func (w *Warehouse) Close() error { return w.data.Close() }

// QuoteTable implements state.Warehouse.
func (w *Warehouse) QuoteTable(parts ...string) (string, error) {
	if len(parts) > 0 && parts[len(parts)-1] == ledgerTable {
		return "", fmt.Errorf("%w: %s is the warehouse's own ledger", state.ErrDataJob, ledgerTable)
	}
	return w.data.QuoteTable(parts...)
}

// ReadData implements state.Warehouse.
func (w *Warehouse) ReadData(ctx context.Context, query string, win state.Window, fn func(row []any) error) error {
	return w.data.ReadData(ctx, query, win, fn)
}

// RunData implements state.Warehouse: the job alone, in one transaction.
func (w *Warehouse) RunData(ctx context.Context, job state.DataJob, at time.Time) (state.DataResult, error) {
	return w.data.RunData(ctx, job, nil, at)
}

// target quotes a job's table, as RunData does.
func (w *Warehouse) target(job state.DataJob) (string, error) {
	if job.Kind == state.DataStatements && len(job.Target) == 0 {
		return "", nil
	}
	return w.QuoteTable(job.Target...)
}

// RunUnit implements state.Warehouse: state.RunLedgered's protocol, in one
// write transaction.
func (w *Warehouse) RunUnit(ctx context.Context, job state.DataJob, u state.LedgerUnit, unrecorded func(context.Context, state.LedgerEntry) (bool, error)) (state.UnitResult, error) {
	if err := job.Check(u.At); err != nil {
		return state.UnitResult{}, err
	}
	target, err := w.target(job)
	if err != nil {
		return state.UnitResult{}, err
	}
	var res state.UnitResult
	err = w.data.write(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = state.RunLedgered(ctx, u, state.LedgerSteps{
			Fence: func() (state.LedgerEntry, error) { return fenceLedger(ctx, tx, u) },
			Run: func() (int64, error) {
				r, err := runJob(ctx, tx, job, target, u.At)
				return r.Rows, err
			},
			Done: func(rows int64) error { return ledgerDone(ctx, tx, u, rows) },
		}, unrecorded)
		return err
	})
	return res, err
}

// fenceLedger writes u's fence into the unit's ledger row and returns the
// row as it was; ErrLeaseLost when the row holds a newer fence.
func fenceLedger(ctx context.Context, tx *sql.Tx, u state.LedgerUnit) (state.LedgerEntry, error) {
	e := state.LedgerEntry{Key: u.Key}
	var doneAt sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT "fence", "done_fence", "done_attempts", "rows", "done_at" FROM "`+ledgerTable+`" WHERE "unit_key" = ?`, u.Key).
		Scan(&e.Fence, &e.DoneFence, &e.DoneAttempts, &e.Rows, &doneAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, `INSERT INTO "`+ledgerTable+`" ("unit_key", "fence") VALUES (?, ?)`, u.Key, u.Fence)
		e.Fence = u.Fence
		return e, err
	case err != nil:
		return e, err
	case e.Fence > u.Fence:
		return e, fmt.Errorf("the warehouse's ledger holds a newer claim of this unit (fence %s): %w", strconv.FormatInt(u.Fence, 10), state.ErrLeaseLost)
	}
	if doneAt.Valid {
		e.DoneAt = fromMicros(doneAt.Int64)
	}
	_, err = tx.ExecContext(ctx, `UPDATE "`+ledgerTable+`" SET "fence" = ? WHERE "unit_key" = ?`, u.Fence, u.Key)
	return e, err
}

// ledgerDone records that u's claim holds the unit's committed data.
func ledgerDone(ctx context.Context, tx *sql.Tx, u state.LedgerUnit, rows int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE "`+ledgerTable+`" SET "done_fence" = ?, "done_attempts" = ?, "rows" = ?, "done_at" = ? WHERE "unit_key" = ?`,
		u.Fence, u.Attempts, rows, micros(u.At), u.Key)
	return err
}

// Ledger implements state.Warehouse.
func (w *Warehouse) Ledger(ctx context.Context, key string) (state.LedgerEntry, bool, error) {
	e := state.LedgerEntry{Key: key}
	var doneAt sql.NullInt64
	err := w.data.r.QueryRowContext(ctx, `SELECT "fence", "done_fence", "done_attempts", "rows", "done_at" FROM "`+ledgerTable+`" WHERE "unit_key" = ?`, key).
		Scan(&e.Fence, &e.DoneFence, &e.DoneAttempts, &e.Rows, &doneAt)
	if errors.Is(err, sql.ErrNoRows) {
		return e, false, nil
	}
	if doneAt.Valid {
		e.DoneAt = fromMicros(doneAt.Int64)
	}
	return e, err == nil, err
}
