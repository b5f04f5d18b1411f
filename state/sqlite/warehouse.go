package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// as a warehouse, and its ledger table, upgraded when a bollhav before
// store identities made it. Unlike the state store's file, whose folder
// bollhav owns, a warehouse's folder must exist: a connection naming one
// that does not is a typo, and creating it would load a model's data into
// a database nobody reads.
func OpenWarehouse(ctx context.Context, path string) (*Warehouse, error) {
	if dir := filepath.Dir(path); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("sqlite: the folder of the warehouse file %s does not exist: create it, or correct the connection's DSN", path)
		}
	}
	s, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, func(tx *sql.Tx) error { return prepareLedger(ctx, tx) }); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: preparing the warehouse's ledger: %w", err)
	}
	return &Warehouse{data: s, loc: state.Location{Driver: "sqlite", Database: path}}, nil
}

// ledgerAdded are the ledger's columns a bollhav before store identities
// did not write: which store wrote a row, under which definition, and the
// unit's window as columns of its own. A row from then gets the store ""
// and the fingerprint "" (another store's: never replayed), and its
// window read back from its key.
var ledgerAdded = []string{
	`"env" TEXT`, `"model" TEXT`, `"since" INTEGER`, `"until" INTEGER`,
	`"store_id" TEXT NOT NULL DEFAULT ''`, `"fingerprint" TEXT NOT NULL DEFAULT ''`,
}

// prepareLedger creates the ledger table, or adds to one from an earlier
// bollhav the columns it lacks (filling the window's from each row's key),
// and its index.
func prepareLedger(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS "`+ledgerTable+`" (
		"unit_key"      TEXT    PRIMARY KEY,
		"fence"         INTEGER NOT NULL,
		"done_fence"    INTEGER NOT NULL DEFAULT 0,
		"done_attempts" INTEGER NOT NULL DEFAULT 0,
		"rows"          INTEGER NOT NULL DEFAULT 0,
		"done_at"       INTEGER
	)`)
	if err != nil {
		return err
	}
	var has int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('`+ledgerTable+`') WHERE "name" = 'store_id'`).Scan(&has); err != nil {
		return err
	}
	if has == 0 {
		for _, col := range ledgerAdded {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE "`+ledgerTable+`" ADD COLUMN `+col); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT "unit_key" FROM "`+ledgerTable+`"`)
		if err != nil {
			return err
		}
		var keys []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, k := range keys {
			env, model, w, ok := state.ParseLedgerKey(k)
			if !ok {
				return fmt.Errorf("ledger row %q: not a unit key", k)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE "`+ledgerTable+`" SET "env" = ?, "model" = ?, "since" = ?, "until" = ? WHERE "unit_key" = ?`,
				env, model, microsOrNull(w.Since), microsOrNull(w.Until), k); err != nil {
				return err
			}
		}
	}
	_, err = tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS "`+ledgerTable+`_window" ON "`+ledgerTable+`" ("model", "env", "until")`)
	return err
}

// microsOrNull is t in microseconds, NULL for the zero time (a timeless
// unit's window).
func microsOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
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
// write transaction (SQLite's one writer serializes every claim's).
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
			Fence:  func() (state.LedgerEntry, error) { return fenceLedger(ctx, tx, u) },
			Others: func() ([]state.LedgerEntry, error) { return otherLedgers(ctx, tx, u) },
			Run: func() (int64, error) {
				r, err := runJob(ctx, tx, job, target, u.At)
				return r.Rows, err
			},
			Done:  func(rows int64, takeOver bool) error { return ledgerDone(ctx, tx, u, rows, takeOver) },
			Table: ledgerTable,
		}, unrecorded)
		return err
	})
	return res, err
}

// ledgerColumns are what scanLedger reads, in its order.
const ledgerColumns = `"unit_key", "env", "model", "since", "until", "store_id", "fingerprint", "fence", "done_fence", "done_attempts", "rows", "done_at"`

// scanLedger reads a row of ledgerColumns.
func scanLedger(row interface{ Scan(...any) error }) (state.LedgerEntry, error) {
	var (
		e                    state.LedgerEntry
		since, until, doneAt sql.NullInt64
	)
	err := row.Scan(&e.Key, &e.Env, &e.Model, &since, &until, &e.Store, &e.Fingerprint, &e.Fence, &e.DoneFence, &e.DoneAttempts, &e.Rows, &doneAt)
	if since.Valid && until.Valid {
		e.Window = state.Window{Since: fromMicros(since.Int64), Until: fromMicros(until.Int64)}
	}
	if doneAt.Valid {
		e.DoneAt = fromMicros(doneAt.Int64)
	}
	return e, err
}

// fenceLedger writes u's fence into the unit's ledger row and returns the
// row as it was (the key alone when there was none); ErrLeaseLost when the
// row holds a newer fence of the same store. A row of another store is
// fenced over whatever its fence: fences of two stores do not compare.
func fenceLedger(ctx context.Context, tx *sql.Tx, u state.LedgerUnit) (state.LedgerEntry, error) {
	prev, err := scanLedger(tx.QueryRowContext(ctx, `SELECT `+ledgerColumns+` FROM "`+ledgerTable+`" WHERE "unit_key" = ?`, u.Key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		prev = state.LedgerEntry{Key: u.Key}
	case err != nil:
		return prev, err
	case prev.Store == u.Store && prev.Fence > u.Fence:
		return prev, fmt.Errorf("the warehouse's ledger holds a newer claim of this unit (fence %s): %w", strconv.FormatInt(u.Fence, 10), state.ErrLeaseLost)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO "`+ledgerTable+`" ("unit_key", "env", "model", "since", "until", "store_id", "fence") VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT ("unit_key") DO UPDATE SET "fence" = excluded."fence", "store_id" = excluded."store_id"`,
		u.Key, u.Env, u.Model, microsOrNull(u.Window.Since), microsOrNull(u.Window.Until), u.Store, u.Fence)
	return prev, err
}

// otherLedgers returns the committed rows of other stores that overlap
// u's window (a timeless unit: the model's timeless rows), u's own row left
// out.
func otherLedgers(ctx context.Context, tx *sql.Tx, u state.LedgerUnit) ([]state.LedgerEntry, error) {
	q := `SELECT ` + ledgerColumns + ` FROM "` + ledgerTable + `" WHERE "model" = ? AND "env" = ? AND "until" > ? AND "since" < ?
		AND "unit_key" <> ? AND "store_id" <> ? AND "done_fence" <> 0 ORDER BY "since", "unit_key"`
	args := []any{u.Model, u.Env, microsOrNull(u.Window.Since), microsOrNull(u.Window.Until), u.Key, u.Store}
	if u.Window.IsZero() {
		q = `SELECT ` + ledgerColumns + ` FROM "` + ledgerTable + `" WHERE "model" = ? AND "env" = ? AND "since" IS NULL
		AND "unit_key" <> ? AND "store_id" <> ? AND "done_fence" <> 0 ORDER BY "unit_key"`
		args = []any{u.Model, u.Env, u.Key, u.Store}
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []state.LedgerEntry
	for rows.Next() {
		e, err := scanLedger(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// ledgerDone records that u's claim holds the unit's committed data, under
// u's store and definition; with takeOver it deletes the other stores'
// rows whose windows lie inside u's, which the job rewrote.
func ledgerDone(ctx context.Context, tx *sql.Tx, u state.LedgerUnit, rows int64, takeOver bool) error {
	_, err := tx.ExecContext(ctx, `UPDATE "`+ledgerTable+`" SET "done_fence" = ?, "done_attempts" = ?, "rows" = ?, "done_at" = ?, "store_id" = ?, "fingerprint" = ? WHERE "unit_key" = ?`,
		u.Fence, u.Attempts, rows, micros(u.At), u.Store, u.Fingerprint, u.Key)
	if err != nil || !takeOver {
		return err
	}
	if u.Window.IsZero() {
		_, err = tx.ExecContext(ctx, `DELETE FROM "`+ledgerTable+`" WHERE "model" = ? AND "env" = ? AND "since" IS NULL AND "unit_key" <> ? AND "store_id" <> ?`,
			u.Model, u.Env, u.Key, u.Store)
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM "`+ledgerTable+`" WHERE "model" = ? AND "env" = ? AND "since" >= ? AND "until" <= ? AND "unit_key" <> ? AND "store_id" <> ?`,
		u.Model, u.Env, micros(u.Window.Since), micros(u.Window.Until), u.Key, u.Store)
	return err
}

// Ledger implements state.Warehouse.
func (w *Warehouse) Ledger(ctx context.Context, key string) (state.LedgerEntry, bool, error) {
	e, err := scanLedger(w.data.r.QueryRowContext(ctx, `SELECT `+ledgerColumns+` FROM "`+ledgerTable+`" WHERE "unit_key" = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return state.LedgerEntry{Key: key}, false, nil
	}
	return e, err == nil, err
}
