package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bollhav/bollhav/state"
)

// WarehouseSchema is the bollhav-owned schema of a warehouse: its ledger
// and its table loads. Model targets may not live in it.
const WarehouseSchema = "bollhav_warehouse"

// warehouseMigrationFiles are the warehouse schema's migrations, applied
// like the store's: in order, in one transaction, under an advisory lock.
//
//go:embed warehouse_migrations/*.sql
var warehouseMigrationFiles embed.FS

// Warehouse is a PostgreSQL database that holds models' data apart from the
// state store (state.Warehouse). It reuses the store's data-job code on its
// own pool, with WarehouseSchema in place of the store's schema.
type Warehouse struct {
	data *Store
	loc  state.Location
}

var _ state.Warehouse = (*Warehouse)(nil)

// OpenWarehouse connects to the database dsn names and creates or migrates
// its ledger schema. Like Open, every error is one line without the
// password.
func OpenWarehouse(ctx context.Context, dsn string) (*Warehouse, error) {
	ms, err := loadMigrations(warehouseMigrationFiles, "warehouse_migrations")
	if err != nil {
		return nil, err
	}
	pool, cfg, err := connect(ctx, dsn, func(cfg *pgxpool.Config) { cfg.ShouldPing = pingEveryAcquire })
	if err != nil {
		return nil, err
	}
	if _, err := migrate(ctx, pool, WarehouseSchema, ms); err != nil {
		pool.Close()
		return nil, fmt.Errorf("preparing the warehouse's %s schema: %w", WarehouseSchema, err)
	}
	c := cfg.ConnConfig.Config
	return &Warehouse{
		data: &Store{pool: pool, schema: WarehouseSchema, begin: beginOptions(cfg)},
		loc:  state.Location{Driver: "postgres", Host: address(&c), Database: c.Database},
	}, nil
}

// Location implements state.Warehouse.
func (w *Warehouse) Location() state.Location { return w.loc }

// Close closes the pool.
func (w *Warehouse) Close() error {
	w.data.pool.Close()
	return nil
}

// QuoteTable implements state.Warehouse.
func (w *Warehouse) QuoteTable(parts ...string) (string, error) { return w.data.QuoteTable(parts...) }

// ReadData implements state.Warehouse.
func (w *Warehouse) ReadData(ctx context.Context, query string, win state.Window, fn func(row []any) error) error {
	return w.data.ReadData(ctx, query, win, fn)
}

// RunData implements state.Warehouse: the job alone, in one transaction.
func (w *Warehouse) RunData(ctx context.Context, job state.DataJob, at time.Time) (state.DataResult, error) {
	if err := job.Check(at); err != nil {
		return state.DataResult{}, err
	}
	target, err := w.data.dataTarget(job)
	if err != nil {
		return state.DataResult{}, err
	}
	var res state.DataResult
	err = pgx.BeginTxFunc(ctx, w.data.pool, w.data.begin, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL TIME ZONE 'UTC'`); err != nil {
			return err
		}
		res, err = w.data.runJob(ctx, tx, job, target, at)
		return err
	})
	return res, err
}

// RunUnit implements state.Warehouse. The window's advisory lock is taken
// first, then the ledger row is written, so the transaction holds both to
// its end: a newer claim of the unit, or another store's claim of the same
// window, waits for this one to end and then sees what it did.
func (w *Warehouse) RunUnit(ctx context.Context, job state.DataJob, u state.LedgerUnit, unrecorded func(context.Context, state.LedgerEntry) (bool, error)) (state.UnitResult, error) {
	if err := job.Check(u.At); err != nil {
		return state.UnitResult{}, err
	}
	target, err := w.data.dataTarget(job)
	if err != nil {
		return state.UnitResult{}, err
	}
	var res state.UnitResult
	err = pgx.BeginTxFunc(ctx, w.data.pool, w.data.begin, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL TIME ZONE 'UTC'`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, windowLockKey(u)); err != nil {
			return err
		}
		var err error
		res, err = state.RunLedgered(ctx, u, state.LedgerSteps{
			Fence:  func() (state.LedgerEntry, error) { return w.fence(ctx, tx, u) },
			Others: func() ([]state.LedgerEntry, error) { return w.others(ctx, tx, u) },
			Run: func() (int64, error) {
				r, err := w.data.runJob(ctx, tx, job, target, u.At)
				return r.Rows, err
			},
			Done:  func(rows int64, takeOver bool) error { return w.done(ctx, tx, u, rows, takeOver) },
			Table: WarehouseSchema + ".ledger",
		}, unrecorded)
		return err
	})
	return res, err
}

// windowLockKey names a unit's window for the advisory lock that
// serializes the transactions of one window, of every store.
func windowLockKey(u state.LedgerUnit) string {
	k := "bollhav ledger|" + u.Env + "|" + u.Model
	if !u.Window.IsZero() {
		k += "|" + state.FormatTime(u.Window.Since) + "|" + state.FormatTime(u.Window.Until)
	}
	return k
}

// ledgerColumns are what scanLedger reads, in its order.
const ledgerColumns = `unit_key, env, model, since, until, store_id, fingerprint, fence, done_fence, done_attempts, rows, done_at`

// scanLedger reads a row of ledgerColumns.
func scanLedger(row pgx.Row) (state.LedgerEntry, error) {
	var (
		e                    state.LedgerEntry
		since, until, doneAt pgtype.Timestamptz
		attempts             int32
	)
	err := row.Scan(&e.Key, &e.Env, &e.Model, &since, &until, &e.Store, &e.Fingerprint, &e.Fence, &e.DoneFence, &attempts, &e.Rows, &doneAt)
	e.DoneAttempts = int(attempts)
	if since.Valid && until.Valid {
		e.Window = state.Window{Since: since.Time.UTC(), Until: until.Time.UTC()}
	}
	if doneAt.Valid {
		e.DoneAt = doneAt.Time
	}
	return e, err
}

// fence writes u's fence into the unit's ledger row and returns the row as
// it was (the key alone when there was none); ErrLeaseLost when the row
// holds a newer fence of the same store. A row of another store is fenced
// over whatever its fence: fences of two stores do not compare.
func (w *Warehouse) fence(ctx context.Context, tx pgx.Tx, u state.LedgerUnit) (state.LedgerEntry, error) {
	prev, err := scanLedger(tx.QueryRow(ctx, w.data.sql(`SELECT `+ledgerColumns+` FROM {schema}.ledger WHERE unit_key = $1 FOR UPDATE`), u.Key))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		prev = state.LedgerEntry{Key: u.Key}
	case err != nil:
		return prev, err
	case prev.Store == u.Store && prev.Fence > u.Fence:
		return prev, fmt.Errorf("the warehouse's ledger holds a newer claim of this unit (fence %s): %w", strconv.FormatInt(u.Fence, 10), state.ErrLeaseLost)
	}
	_, err = tx.Exec(ctx, w.data.sql(`
		INSERT INTO {schema}.ledger AS l (unit_key, env, model, since, until, store_id, fence) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (unit_key) DO UPDATE SET fence = EXCLUDED.fence, store_id = EXCLUDED.store_id`),
		u.Key, u.Env, u.Model, nullTime(u.Window.Since), nullTime(u.Window.Until), u.Store, u.Fence)
	return prev, err
}

// others returns the committed rows of other stores that overlap u's
// window (a timeless unit: the model's timeless rows), u's own row left
// out.
func (w *Warehouse) others(ctx context.Context, tx pgx.Tx, u state.LedgerUnit) ([]state.LedgerEntry, error) {
	q := `SELECT ` + ledgerColumns + ` FROM {schema}.ledger
		WHERE since IS NOT NULL AND tstzrange(since, until) && tstzrange($4, $5) AND env = $2 AND model = $3
		  AND unit_key <> $1 AND store_id <> $6 AND done_fence <> 0 ORDER BY since, unit_key`
	args := []any{u.Key, u.Env, u.Model, u.Window.Since, u.Window.Until, u.Store}
	if u.Window.IsZero() {
		q = `SELECT ` + ledgerColumns + ` FROM {schema}.ledger
		WHERE since IS NULL AND model = $3 AND env = $2 AND unit_key <> $1 AND store_id <> $4 AND done_fence <> 0 ORDER BY unit_key`
		args = []any{u.Key, u.Env, u.Model, u.Store}
	}
	rows, err := tx.Query(ctx, w.data.sql(q), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (state.LedgerEntry, error) { return scanLedger(r) })
}

// done records in the ledger that u's claim holds the unit's committed
// data, under u's store and definition; with takeOver it deletes the
// other stores' rows whose windows lie inside u's, which the job rewrote.
func (w *Warehouse) done(ctx context.Context, tx pgx.Tx, u state.LedgerUnit, rows int64, takeOver bool) error {
	_, err := tx.Exec(ctx, w.data.sql(`
		UPDATE {schema}.ledger SET done_fence = $2, done_attempts = $3, rows = $4, done_at = $5, store_id = $6, fingerprint = $7 WHERE unit_key = $1`),
		u.Key, u.Fence, u.Attempts, rows, u.At, u.Store, u.Fingerprint)
	if err != nil || !takeOver {
		return err
	}
	if u.Window.IsZero() {
		_, err = tx.Exec(ctx, w.data.sql(`DELETE FROM {schema}.ledger WHERE since IS NULL AND model = $2 AND env = $1 AND unit_key <> $3 AND store_id <> $4`),
			u.Env, u.Model, u.Key, u.Store)
		return err
	}
	_, err = tx.Exec(ctx, w.data.sql(`
		DELETE FROM {schema}.ledger WHERE since IS NOT NULL AND tstzrange(since, until) <@ tstzrange($3, $4) AND env = $1 AND model = $2
		  AND unit_key <> $5 AND store_id <> $6`),
		u.Env, u.Model, u.Window.Since, u.Window.Until, u.Key, u.Store)
	return err
}

// Ledger implements state.Warehouse.
func (w *Warehouse) Ledger(ctx context.Context, key string) (state.LedgerEntry, bool, error) {
	e, err := scanLedger(w.data.pool.QueryRow(ctx, w.data.sql(`SELECT `+ledgerColumns+` FROM {schema}.ledger WHERE unit_key = $1`), key))
	if errors.Is(err, pgx.ErrNoRows) {
		return state.LedgerEntry{Key: key}, false, nil
	}
	return e, err == nil, err
}

// WarehouseLocation reads where a DSN points without connecting: the host
// and port, and the database. It never returns the user or the password,
// and its error never holds them.
func WarehouseLocation(dsn string) (state.Location, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return state.Location{}, dsnError(dsn, err)
	}
	c := cfg.ConnConfig.Config
	return state.Location{Driver: "postgres", Host: address(&c), Database: c.Database}, nil
}
