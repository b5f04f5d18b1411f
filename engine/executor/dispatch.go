package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// New returns the executor that picks by each model's run block, so one run
// can mix command, sql, query and view models: command models go to
// command, and sql, query and view models run in store's database when it
// holds data. now is the engine's clock (the wall clock when nil), which the
// store is given for the loads of hardcoded and file sources.
func New(store state.Store, command Executor, now func() time.Time) Executor {
	return NewWith(store, command, now, nil)
}

// NewWith is New with the registry of warehouse pools that models with a
// connection run on, which its builder owns and closes. With nil
// warehouses a model on a connection fails with ErrNoWarehouses.
func NewWith(store state.Store, command Executor, now func() time.Time, warehouses *Warehouses) Executor {
	if now == nil {
		now = time.Now
	}
	// Archived files are stamped by the wall clock, whatever the engine's
	// clock says (--as-of): the stamp only keeps names apart.
	data := &dataExecutor{state: store, warehouses: warehouses, now: now, archiveClock: time.Now}
	if ds, ok := store.(state.DataStore); ok {
		data.store = ds
	}
	return &dispatcher{command: command, data: data}
}

// runs reports whether the data executor can run m: a sql, query or view
// model whose data lives in a warehouse, or in a store that holds data.
func (d *dataExecutor) runs(m *spec.Model) bool {
	return spec.IsDataRun(m) && (m.Connection != nil || d.store != nil)
}

// RecordedByCaller reports whether ExecuteAndApply leaves m's units to the
// caller to record applied (Result.Unrecorded): a data model on a
// connection, whose data commits in its warehouse.
func RecordedByCaller(m *spec.Model) bool { return spec.IsDataRun(m) && m.Connection != nil }

// dispatcher routes each unit to the executor of its model's run kind.
type dispatcher struct {
	command Executor
	data    *dataExecutor
}

// Applier is an executor that records a unit applied itself, in the
// transaction that wrote its data, for the models it says it applies.
type Applier interface {
	AppliesItself(m *spec.Model) bool
	ExecuteAndApply(ctx context.Context, u UnitRun, c state.Claim, at time.Time) (Result, error)
}

var _ Applier = (*dispatcher)(nil)

func (d *dispatcher) AppliesItself(m *spec.Model) bool { return d.data.runs(m) }

func (d *dispatcher) ExecuteAndApply(ctx context.Context, u UnitRun, c state.Claim, at time.Time) (Result, error) {
	return d.data.ExecuteAndApply(ctx, u, c, at)
}

func (d *dispatcher) Execute(ctx context.Context, u UnitRun) (Result, error) {
	switch {
	case u.Model.Run.Kind == spec.RunCommand:
		return d.command.Execute(ctx, u)
	case u.Model.Run.Kind == spec.RunNone:
		return Result{}, fmt.Errorf("model %s has no run block: its windows are only marked by an operator (bollhav mark)", u.Model.Name)
	case d.data.runs(u.Model):
		return d.data.Execute(ctx, u)
	default:
		return Result{}, fmt.Errorf("model %s: the %s executor needs a store that holds data; this one does not", u.Model.Name, u.Model.Run.Kind)
	}
}
