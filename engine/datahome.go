package engine

import (
	"context"
	"encoding/json"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
)

// DataHome says where a model's data lives: the state store's database, or
// the warehouse its connection names (driver, host and database, read from
// the variable's DSN without connecting; never the user or the password).
// A model missing from the spec is read from its registration, so a UI
// opened from the store alone can say it too.
func (e *Engine) DataHome(ctx context.Context, name string) executor.DataHome {
	var m *spec.Model
	if e.spec != nil {
		m = e.spec.Model(name)
	}
	if m == nil {
		if rec, err := e.store.Model(ctx, e.opts.Env.Suffix, name); err == nil {
			var def spec.ModelDefinition
			if json.Unmarshal(rec.Definition, &def) == nil && def.Connection != nil {
				m = &spec.Model{Connection: &spec.Connection{DSNEnvVar: def.Connection.DSNEnvVar}}
			}
		}
	}
	return e.opts.Warehouses.Where(m)
}
