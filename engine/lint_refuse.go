package engine

import (
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
)

// LintError refuses a spec lint proves wrong before apply or run touch the
// store, so nothing is registered, no run row is written and no unit is
// created for it: a task graph no run can order (a lineage or task cycle,
// a run condition larger than the task's edges), or — unless the caller
// allows them knowingly (Options.AllowLintErrors, --allow-lint-errors) — a
// contract that can never be satisfied (EXACT across grains that never
// coincide, EXACT on a flexible upstream, a window level on a timeless
// upstream, an upstream that starts later). Before, a contract error was
// registered and run, and every unit blocked forever with a reason that
// named a missing range instead of the contract.
type LintError struct {
	Path     string
	Findings []Finding
}

func (e *LintError) Error() string {
	var b strings.Builder
	scheduling := false
	for i, f := range e.Findings {
		scheduling = scheduling || unschedulable[f.Rule]
		if i == maxRefusalFindings {
			fmt.Fprintf(&b, "; and %d more", len(e.Findings)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		where := e.Path
		if f.Pos.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", cmpPath(e.Path, f.Pos), f.Pos.Line, f.Pos.Column)
		}
		fmt.Fprintf(&b, "%s: %s: %s", where, f.Rule, f.Message)
	}
	if scheduling {
		return fmt.Sprintf("refused: the spec's tasks cannot be scheduled, so nothing was changed (bollhav lint lists every finding): %s", b.String())
	}
	return fmt.Sprintf("refused: lint proves a contract can never be satisfied, so nothing was changed (bollhav lint lists every finding; --allow-lint-errors registers and runs it anyway): %s", b.String())
}

// maxRefusalFindings bounds the findings a refusal names: a generated or
// inherited spec can have hundreds, and lint lists them all.
const maxRefusalFindings = 5

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
// store at all. allowContracts lets contract errors through (the operator
// proceeds knowingly); scheduling errors are refused all the same.
func RefuseLintErrors(sp *spec.Spec, allowContracts bool) error {
	var candidates []Finding
	if allowContracts {
		// Only the rules that decide it run — the task graphs and run
		// conditions, not the contract checks that walk windows.
		candidates = lintGraphs(sp)
		for _, m := range sp.Models {
			candidates = append(candidates, lintRunCondition(sp, m)...)
		}
	} else {
		candidates = Lint(sp)
	}
	var errs []Finding
	for _, f := range candidates {
		if f.Severity == SeverityError && (unschedulable[f.Rule] || !allowContracts) {
			errs = append(errs, f)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &LintError{Path: sp.Path, Findings: errs}
}
