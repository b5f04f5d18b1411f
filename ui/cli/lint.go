package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
)

func init() {
	register(&command{
		name:    "lint",
		summary: "check the spec: definition-time errors, contracts that can never be satisfied, silent data hazards",
		globals: []string{gSpec, gOutput},
		long: `lint needs no state store. It loads the spec (every definition-time error is
reported with file:line:col, exit 2), then proves what it can before anything
runs: contracts that can never be satisfied by construction (EXACT between
grids that share no window, a window-scoped level on a timeless upstream, an
upstream that starts after its downstream, N larger than a task's edges, a
task that needs two upstreams to fail where one needs the other's success)
are errors (exit 1); the design's silent combinations (flexible + append,
flexible + upsert, a flexible model with an aggregating query, freshness
shorter than the upstream's grain) are warnings (exit 0).`,
		examples: []string{
			"bollhav lint",
			"bollhav lint --spec examples/shop/bollhav.yaml",
			"bollhav lint -o json | jq '.findings[] | select(.severity==\"error\")'",
		},
		run: runLint,
	})
}

type lintJSON struct {
	Findings []lintFinding `json:"findings"`
}

type lintFinding struct {
	Model    string `json:"model"`
	Severity string `json:"severity"`
	Rule     string `json:"rule"`
	Message  string `json:"message"`
}

func runLint(c *cmdContext, args []string) int {
	if len(args) > 0 {
		return c.fail("lint", &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	}
	sp, err := spec.Load(c.Spec)
	if err != nil {
		var errs spec.Errors
		if c.Output == "json" && errors.As(err, &errs) {
			out := lintJSON{Findings: []lintFinding{}}
			for _, e := range errs {
				out.Findings = append(out.Findings, lintFinding{Model: e.Model, Severity: "error", Rule: "definition", Message: e.Error()})
			}
			writeJSON(c.Out, out)
			return ExitUsage
		}
		_, code := c.loadSpec("lint")
		return code
	}
	findings := engine.Lint(sp)
	code := ExitOK
	for _, f := range findings {
		if f.Severity == engine.SeverityError {
			code = ExitFailure
		}
	}
	if c.Output == "json" {
		out := lintJSON{Findings: []lintFinding{}}
		for _, f := range findings {
			out.Findings = append(out.Findings, lintFinding{Model: f.Model, Severity: string(f.Severity), Rule: f.Rule, Message: f.Message})
		}
		writeJSON(c.Out, out)
		return code
	}
	if len(findings) == 0 {
		fmt.Fprintf(c.Out, "%s: %d models, no findings\n", c.Spec, len(sp.Models))
		return code
	}
	tw := tabwriter.NewWriter(c.Out, 0, 0, 2, ' ', 0)
	errs, warns := 0, 0
	for _, f := range findings {
		where := c.Spec
		if f.Pos.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", c.Spec, f.Pos.Line, f.Pos.Column)
		}
		model := cmp.Or(f.Model, "-")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", where, f.Severity, f.Rule, model, f.Message)
		if f.Severity == engine.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	tw.Flush()
	fmt.Fprintf(c.Out, "%d error%s, %d warning%s in %d models\n", errs, plural(errs), warns, plural(warns), len(sp.Models))
	return code
}

func writeJSON(w io.Writer, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // only our own plain structs are written
	}
	w.Write(append(b, '\n'))
}
