package cli

import (
	"errors"
	"fmt"

	"github.com/bollhav/bollhav/engine/spec"
)

// loadSpec loads the --spec file. On failure it prints every problem, one
// per line with file:line:col, and returns the exit code to use. A single
// problem is a single line, like every other refusal of a command.
func (c *cmdContext) loadSpec(cmd string) (*spec.Spec, int) {
	sp, err := spec.Load(c.Spec)
	if err == nil {
		return sp, ExitOK
	}
	return nil, c.specFailed(cmd, err)
}

// specFailed prints why the spec did not load — each problem on a line of
// its own, then how many — and returns the exit code.
func (c *cmdContext) specFailed(cmd string, err error) int {
	var errs spec.Errors
	switch {
	case errors.As(err, &errs) && len(errs) == 1:
		fmt.Fprintf(c.Err, "bollhav %s: %s\n", cmd, errs[0].Error())
	case errors.As(err, &errs):
		for _, e := range errs {
			fmt.Fprintln(c.Err, e.Error())
		}
		fmt.Fprintf(c.Err, "bollhav %s: %s has %d problems\n", cmd, c.Spec, len(errs))
	default:
		fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, err)
	}
	return ExitUsage
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
