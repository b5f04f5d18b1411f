package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// dataExecutor runs sql, query and view models (docs/design.md, Executors).
// A model without a connection runs in the state store's own database
// through state.DataStore, and its data and applied state commit in one
// transaction. A model whose connection names a warehouse runs there,
// under the warehouse's ledger (warehouse.go): templates are rendered
// here, the SQL of writes is the backend's.
type dataExecutor struct {
	// store is the state store's database as a data database; nil when
	// the store holds no data (then only models with a connection run).
	store state.DataStore
	// state records outcomes and answers the ledger's questions.
	state      state.Store
	warehouses *Warehouses
	loads      sourceLoads
	// now is the engine's clock, for runs outside a claim.
	now func() time.Time
	// archiveClock stamps the name of an archived file that would
	// otherwise take an existing one's: the wall clock.
	archiveClock func() time.Time
	// identity is the state store's, read once (storeIdentity).
	identityMu sync.Mutex
	identity   string
}

// Execute runs the unit's job outside any claim; the caller records the
// outcome. Runs use ExecuteAndApply instead.
func (d *dataExecutor) Execute(ctx context.Context, u UnitRun) (Result, error) {
	return d.run(ctx, u, nil, d.now())
}

// ExecuteAndApply runs the unit's job and records it applied under c in
// the transaction that writes its data, in the store's database. In a
// warehouse (warehouse.go) the data commits there with its ledger row and
// the result is Unrecorded: the caller records the unit applied under c.
// An error means nothing was recorded applied and the unit is still running
// under c (ErrLeaseLost: another worker owns it).
func (d *dataExecutor) ExecuteAndApply(ctx context.Context, u UnitRun, c state.Claim, at time.Time) (Result, error) {
	return d.run(ctx, u, &c, at)
}

func (d *dataExecutor) run(ctx context.Context, u UnitRun, c *state.Claim, at time.Time) (Result, error) {
	m := u.Model
	db, err := d.database(ctx, m)
	if err != nil {
		return Result{}, err
	}
	if err := d.loadSources(ctx, u, db, at); err != nil {
		return Result{}, err
	}
	job, err := dataJob(u, db.quote)
	if err != nil {
		return Result{}, err
	}
	job.Fingerprint = u.Fingerprint
	if m.Run.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Run.Timeout)
		defer cancel()
	}
	var (
		rows       int64
		unrecorded bool
	)
	switch {
	case db.warehouse == nil:
		var res state.DataResult
		res, err = d.store.RunData(ctx, job, c, at)
		rows = res.Rows
	case c == nil:
		var res state.DataResult
		res, err = db.warehouse.RunData(ctx, job, at)
		rows = res.Rows
	default:
		rows, err = d.runInWarehouse(ctx, db.warehouse, job, u, *c, at)
		unrecorded = true
	}
	if err != nil {
		if errors.Is(err, state.ErrLeaseLost) {
			return Result{}, err
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return Result{}, fmt.Errorf("%s %s: stopped: %w", m.Run.Kind, m.Name, ctx.Err())
		}
		return Result{}, fmt.Errorf("%s%s: %w", m.Run.Kind, db.where, err)
	}
	if m.Run.Kind == spec.RunView {
		return Result{Unrecorded: unrecorded}, nil // a view writes no rows: unknown, not zero
	}
	return Result{RowsWritten: &rows, Unrecorded: unrecorded}, nil
}

// database is where m's data lives: the state store's database, or the
// warehouse its connection names.
type database struct {
	// key tells the databases apart in the per-process record of source
	// loads: "" for the store's, the DSN variable for a warehouse.
	key       string
	quote     func(parts ...string) (string, error)
	load      func(ctx context.Context, job state.DataJob, at time.Time) (state.DataResult, error)
	warehouse state.Warehouse
	// where prefixes a unit's error: " (warehouse postgres host/db)".
	where string
}

func (d *dataExecutor) database(ctx context.Context, m *spec.Model) (database, error) {
	if m.Connection == nil {
		if d.store == nil {
			return database{}, fmt.Errorf("model %s: the %s executor needs a store that holds data; this one does not", m.Name, m.Run.Kind)
		}
		load := func(ctx context.Context, job state.DataJob, at time.Time) (state.DataResult, error) {
			return d.store.RunData(ctx, job, nil, at)
		}
		return database{quote: d.store.QuoteTable, load: load}, nil
	}
	wh, err := d.warehouses.Get(ctx, m.Connection)
	if err != nil {
		return database{}, fmt.Errorf("model %s: %w", m.Name, err)
	}
	return database{key: m.Connection.DSNEnvVar, quote: wh.QuoteTable, load: wh.RunData, warehouse: wh,
		where: " (warehouse " + wh.Location().String() + ")"}, nil
}

// dataJob describes u's work for the backend, with every template rendered.
func dataJob(u UnitRun, quote func(parts ...string) (string, error)) (state.DataJob, error) {
	m := u.Model
	job := state.DataJob{Target: []string{u.Env.Schema(m.Schema), m.Table}}
	if u.Window != nil {
		job.Window = *u.Window
	}
	render := func(text string) (string, error) { return spec.RenderSQL(m, u.Env, text, quote) }
	switch m.Run.Kind {
	case spec.RunSQL:
		job.Kind = state.DataStatements
		for _, s := range m.Run.SQL {
			r, err := render(s)
			if err != nil {
				return job, err
			}
			job.Statements = append(job.Statements, r)
		}
	case spec.RunQuery, spec.RunView:
		job.Kind = state.DataView
		if m.Run.Kind == spec.RunQuery {
			job.Kind = state.DataQuery
		}
		q, err := render(m.Run.Query)
		if err != nil {
			return job, err
		}
		job.Query = strings.TrimRight(strings.TrimSpace(q), ";")
		if w := m.Run.Write; w != nil {
			job.Write = state.WriteMode(w.Mode.String())
			job.Keys, job.Column = w.Keys, w.Column
		}
	default:
		return job, fmt.Errorf("model %s: the data executor runs sql, query and view models, not %s", m.Name, m.Run.Kind)
	}
	return job, nil
}
