package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// dataExecutor runs sql, query and view models (docs/design.md, Executors) in
// the state store's own database through state.DataStore: templates are
// rendered here, the SQL of writes is the backend's. Run inside a claim, a
// unit's data and its applied state commit in one transaction.
type dataExecutor struct {
	store state.DataStore
	loads sourceLoads
	// now is the engine's clock, for runs outside a claim.
	now func() time.Time
}

// Execute runs the unit's job outside any claim; the caller records the
// outcome. Runs use ExecuteAndApply instead.
func (d *dataExecutor) Execute(ctx context.Context, u UnitRun) (Result, error) {
	return d.run(ctx, u, nil, d.now())
}

// ExecuteAndApply runs the unit's job and records it applied under c, in
// one transaction. An error means nothing was written and the unit is still
// running under c (ErrLeaseLost: another worker owns it).
func (d *dataExecutor) ExecuteAndApply(ctx context.Context, u UnitRun, c state.Claim, at time.Time) (Result, error) {
	return d.run(ctx, u, &c, at)
}

func (d *dataExecutor) run(ctx context.Context, u UnitRun, c *state.Claim, at time.Time) (Result, error) {
	m := u.Model
	if m.Connection != nil {
		return Result{}, fmt.Errorf("model %s: connection.dsn_env_var is not supported by the %s executor yet: its data must live in the state store's database", m.Name, m.Run.Kind)
	}
	if err := d.loadSources(ctx, u, at); err != nil {
		return Result{}, err
	}
	job, err := dataJob(u, d.store.QuoteTable)
	if err != nil {
		return Result{}, err
	}
	job.Fingerprint = u.Fingerprint
	if m.Run.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Run.Timeout)
		defer cancel()
	}
	res, err := d.store.RunData(ctx, job, c, at)
	if err != nil {
		if errors.Is(err, state.ErrLeaseLost) {
			return Result{}, err
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return Result{}, fmt.Errorf("%s %s: stopped: %w", m.Run.Kind, m.Name, ctx.Err())
		}
		return Result{}, fmt.Errorf("%s: %w", m.Run.Kind, err)
	}
	rows := res.Rows
	if m.Run.Kind == spec.RunView {
		return Result{}, nil // a view writes no rows: unknown, not zero
	}
	return Result{RowsWritten: &rows}, nil
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
