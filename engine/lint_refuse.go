package engine

import (
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
)

// LintError refuses a spec whose task graph lint proves unschedulable — a
// lineage or task cycle, a run condition larger than the task's edges —
// before apply or run touch the store, so nothing is registered, no run row
// is written and no unit is created for a spec that cannot run at all.
//
// Lint's other errors are about contracts (EXACT on a flexible upstream, a
// window level on a timeless one, an upstream that starts later): the
// design makes those hard errors at gate time, unit by unit, which the run
// reports and the rest of the pipeline survives, so they do not stop a
// registration.
type LintError struct {
	Path     string
	Findings []Finding
}

func (e *LintError) Error() string {
	var b strings.Builder
	for i, f := range e.Findings {
		if i > 0 {
			b.WriteString("; ")
		}
		where := e.Path
		if f.Pos.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", cmpPath(e.Path, f.Pos), f.Pos.Line, f.Pos.Column)
		}
		fmt.Fprintf(&b, "%s: %s: %s", where, f.Rule, f.Message)
	}
	return fmt.Sprintf("refused: the spec's tasks cannot be scheduled, so nothing was changed (bollhav lint lists every finding): %s", b.String())
}

func cmpPath(path string, p spec.Position) string {
	if p.File != "" {
		return p.File
	}
	return path
}

// unschedulable are the lint rules whose errors mean no run can order the
// spec's tasks.
var unschedulable = map[string]bool{"lineage-cycle": true, "task-cycle": true, "n-exceeds-edges": true}

// RefuseLintErrors is a LintError for sp when lint finds an error, else nil:
// what apply and run refuse, which a front end can ask before it opens the
// store at all.
func RefuseLintErrors(sp *spec.Spec) error {
	// Only the rules that decide it run — the task graphs and run
	// conditions, not the contract checks that walk hundreds of windows
	// per edge — since apply and run ask on every call.
	candidates := lintGraphs(sp)
	for _, m := range sp.Models {
		candidates = append(candidates, lintRunCondition(sp, m)...)
	}
	var errs []Finding
	for _, f := range candidates {
		if f.Severity == SeverityError && unschedulable[f.Rule] {
			errs = append(errs, f)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &LintError{Path: sp.Path, Findings: errs}
}
