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

// RunUnit implements state.Warehouse. The ledger row is written first, so
// it holds the row lock for the whole transaction: a newer claim's
// transaction waits for this one to end and then sees what it did.
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
		var err error
		res, err = state.RunLedgered(ctx, u, state.LedgerSteps{
			Fence: func() (state.LedgerEntry, error) { return w.fence(ctx, tx, u) },
			Run: func() (int64, error) {
				r, err := w.data.runJob(ctx, tx, job, target, u.At)
				return r.Rows, err
			},
			Done: func(rows int64) error { return w.done(ctx, tx, u, rows) },
		}, unrecorded)
		return err
	})
	return res, err
}

// fence writes u's fence into the unit's ledger row and returns the row as
// it was; ErrLeaseLost when the row holds a newer fence.
func (w *Warehouse) fence(ctx context.Context, tx pgx.Tx, u state.LedgerUnit) (state.LedgerEntry, error) {
	e := state.LedgerEntry{Key: u.Key}
	var doneAt pgtype.Timestamptz
	var attempts int32
	err := tx.QueryRow(ctx, w.data.sql(`
		INSERT INTO {schema}.ledger AS l (unit_key, fence) VALUES ($1, $2)
		ON CONFLICT (unit_key) DO UPDATE SET fence = EXCLUDED.fence WHERE l.fence <= EXCLUDED.fence
		RETURNING fence, done_fence, done_attempts, rows, done_at`), u.Key, u.Fence).
		Scan(&e.Fence, &e.DoneFence, &attempts, &e.Rows, &doneAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, fmt.Errorf("the warehouse's ledger holds a newer claim of this unit (fence %s): %w", strconv.FormatInt(u.Fence, 10), state.ErrLeaseLost)
	}
	e.DoneAttempts = int(attempts)
	if doneAt.Valid {
		e.DoneAt = doneAt.Time
	}
	return e, err
}

// done records in the ledger that u's claim holds the unit's committed data.
func (w *Warehouse) done(ctx context.Context, tx pgx.Tx, u state.LedgerUnit, rows int64) error {
	_, err := tx.Exec(ctx, w.data.sql(`
		UPDATE {schema}.ledger SET done_fence = $2, done_attempts = $3, rows = $4, done_at = $5 WHERE unit_key = $1`),
		u.Key, u.Fence, u.Attempts, rows, u.At)
	return err
}

// Ledger implements state.Warehouse.
func (w *Warehouse) Ledger(ctx context.Context, key string) (state.LedgerEntry, bool, error) {
	e := state.LedgerEntry{Key: key}
	var doneAt pgtype.Timestamptz
	var attempts int32
	err := w.data.pool.QueryRow(ctx, w.data.sql(`
		SELECT fence, done_fence, done_attempts, rows, done_at FROM {schema}.ledger WHERE unit_key = $1`), key).
		Scan(&e.Fence, &e.DoneFence, &attempts, &e.Rows, &doneAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, false, nil
	}
	e.DoneAttempts = int(attempts)
	if doneAt.Valid {
		e.DoneAt = doneAt.Time
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
