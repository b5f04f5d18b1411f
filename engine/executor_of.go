package engine

// Executor returns the executor a run of e uses for every model: it picks
// by the model's run block, so one run can mix command, sql, query and view
// models. sql, query and view models run in the state store's database.
func (e *Engine) Executor() Executor { return newDispatcher(e.Store, &CommandExecutor{Logger: e.Log}) }
