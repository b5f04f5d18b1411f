package cli

import (
	"strings"
	"testing"
)

// A model whose query appends its rows gets the rows of every applied
// window a bulldozer or a torch runs again added once more. The plan says
// so before anything runs — `plan` in its warnings, `run` on stderr before
// it starts — naming the model and how many applied windows; a discover,
// which runs no applied window, says nothing.
func TestPlanWarnsThatAppendRerunsAddRowsAgain(t *testing.T) {
	specPath := writeSpec(t, `models:
  - {name: core.visits, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", end: "2026-01-04T00:00:00Z"},
     run: {query: "SELECT :since AS day, 1 AS n", write: {mode: append}}}
`)
	window := []string{"--since", "2026-01-01", "--until", "2026-01-03"}
	args := func(cmd string, more ...string) []string {
		return append(append([]string{cmd, "--spec", specPath}, window...), more...)
	}
	if code, out, errb := run(t, args("run", "--mode", "discover")...); code != 0 || strings.Contains(errb, "append") {
		t.Fatalf("the first run: exit %d\n%s\n%s", code, out, errb)
	}
	const warning = "core.visits: writes with append: the 2 applied windows it runs again get their rows added once more"
	code, out, errb := run(t, args("plan", "--mode", "bulldozer")...)
	if code != 0 || !strings.Contains(out, "warnings:\n  "+warning) {
		t.Errorf("plan --mode bulldozer: exit %d, no append warning:\n%s\n%s", code, out, errb)
	}
	code, out, errb = run(t, args("plan", "--mode", "torch")...)
	if code != 0 || !strings.Contains(out, warning) || !strings.Contains(out, "(a torch does not delete them)") {
		t.Errorf("plan --mode torch: exit %d, no append warning:\n%s\n%s", code, out, errb)
	}
	if code, out, errb := run(t, args("plan", "--mode", "discover")...); code != 0 || strings.Contains(out, "append") {
		t.Errorf("plan --mode discover warns of append with nothing applied to run again: exit %d\n%s\n%s", code, out, errb)
	}
	code, out, errb = run(t, args("run", "--mode", "bulldozer")...)
	if code != 0 || !strings.Contains(errb, "bollhav run: warning: "+warning) {
		t.Errorf("run --mode bulldozer: exit %d, no append warning before it ran:\n%s\n%s", code, out, errb)
	}
}
