package engine

import (
	"context"
	"fmt"
)

// Executor returns the executor a run of e uses for every model: it picks
// by the model's run block, so one run can mix command, sql, query and view
// models.
func (e *Engine) Executor() Executor {
	return &dispatcher{command: &CommandExecutor{Logger: e.Log}}
}

// dispatcher routes each unit to the executor of its model's run kind.
type dispatcher struct {
	command Executor
}

func (d *dispatcher) Execute(ctx context.Context, u UnitRun) (Result, error) {
	switch u.Model.Run.Kind {
	case RunCommand:
		return d.command.Execute(ctx, u)
	case RunNone:
		return Result{}, fmt.Errorf("model %s has no run block: its windows are only marked by an operator (bollhav mark)", u.Model.Name)
	default:
		return Result{}, fmt.Errorf("model %s: the %s executor is not available", u.Model.Name, u.Model.Run.Kind)
	}
}
