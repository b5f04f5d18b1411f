package cli

import (
	gocontext "context"
	"fmt"

	"github.com/bollhav/bollhav/engine"
)

func init() {
	register(&command{
		name:    "apply",
		summary: "validate the spec and register it in the state store",
		globals: append(storeGlobals, gReadOnly, gAllowLint),
		long: `apply registers every model of the spec, with its definition, shape and task
edges, in the store of --dsn for the environment of --env. A fixed model whose
grain changed while it has units is refused (nothing is registered): re-chunking
a fixed model is a migration, done by 'bollhav run MODEL --mode torch'.`,
		examples: []string{
			"bollhav apply",
			"bollhav apply --dsn postgres://bollhav@db/warehouse --env pr123",
		},
		run:         runApply,
		memoryLimit: batchMemoryLimit,
	})
}

type applyJSON struct {
	Env    string           `json:"env"`
	Models []applyJSONModel `json:"models"`
}

type applyJSONModel struct {
	Name    string `json:"name"`
	TaskID  int    `json:"task_id"`
	Outcome string `json:"outcome"`
}

func runApply(c *cmdContext, args []string) int {
	return c.withEngine("apply", args, func(ctx gocontext.Context, e *engine.Engine) int {
		res, err := e.Apply(ctx)
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav apply: %v\n", err)
			return ExitUsage
		}
		if c.Output == "json" {
			out := applyJSON{Env: e.Env().Suffix, Models: []applyJSONModel{}}
			for _, group := range []struct {
				outcome string
				models  []engine.AppliedModel
			}{{"created", res.Created}, {"changed", res.Changed}, {"unchanged", res.Unchanged}} {
				for _, m := range group.models {
					out.Models = append(out.Models, applyJSONModel{Name: m.Name, TaskID: m.TaskID, Outcome: group.outcome})
				}
			}
			writeJSON(c.Out, out)
			return ExitOK
		}
		fmt.Fprintf(c.Out, "registered in %s: %d created, %d changed, %d unchanged\n",
			e.Env(), len(res.Created), len(res.Changed), len(res.Unchanged))
		return ExitOK
	})
}
