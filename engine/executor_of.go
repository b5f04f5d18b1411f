package engine

import "github.com/bollhav/bollhav/engine/executor"

// Executor returns the executor a run of e uses for every model: it picks
// by the model's run block, so one run can mix command, sql, query and view
// models. sql, query and view models run in the state store's database, or
// in the warehouse their connection names (pools from e.Warehouses).
func (e *Engine) Executor() executor.Executor {
	return executor.NewWith(e.store, &executor.CommandExecutor{Logger: e.opts.Log}, e.now, e.opts.Warehouses)
}
