package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statelessSpec: p.notify runs after each of p.a's runs that succeeds and
// p.alert after one that fails; both keep no state (the shop's
// ops.core_failure_alert). Each appends a line to a file per run.
const statelessSpec = `models:
  - {name: p.a, pipeline: p, chunking: {interval: 1d, start: "2026-11-01"}, run: {command: ["true"]}}
  - {name: p.notify, pipeline: p, temporality: timeless, state: false, after: [{task: p.a, on: success}], run: {command: ["sh", "-c", "echo ran >> notify.txt"]}}
  - {name: p.alert, pipeline: p, temporality: timeless, state: false, after: [{task: p.a, on: failure}], run: {command: ["sh", "-c", "echo ran >> alert.txt"]}}
`

// TestStatelessModelKeepsNoState: a model with state: false runs when its
// task runs, but no run writes a unit of it: status shows it with no
// counts ("no state"), units lists nothing, the plan warns of nothing on
// every run, and the alert that did not fire holds nothing, so incidents
// is all clear. On both stores.
func TestStatelessModelKeepsNoState(t *testing.T) {
	odEach(t, func(t *testing.T, w odWorld) {
		w.write(t, statelessSpec)
		dir := filepath.Dir(w.spec)
		lines := func(name string) int {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if os.IsNotExist(err) {
				return 0
			} else if err != nil {
				t.Fatal(err)
			}
			return strings.Count(string(b), "ran\n")
		}
		for i, window := range [][2]string{{"2026-11-01", "2026-11-03"}, {"2026-11-03", "2026-11-04"}} {
			args := w.args("run", "--since", window[0], "--until", window[1])
			code, out, errOut := run(t, args...)
			if code != 0 || strings.Contains(errOut, "warning") {
				t.Fatalf("run %d: exit %d, stderr %q\n%s", i+1, code, errOut, out)
			}
			for _, want := range []string{"p.notify  SUCCESS", "p.alert   SKIPPED"} {
				if !strings.Contains(out, want) {
					t.Errorf("run %d lacks %q:\n%s", i+1, want, out)
				}
			}
			if got := lines("notify.txt"); got != i+1 {
				t.Errorf("after run %d p.notify ran %d times, want %d", i+1, got, i+1)
			}
		}
		if got := lines("alert.txt"); got != 0 {
			t.Errorf("p.alert ran %d times, want never: p.a never failed", got)
		}

		var st struct {
			Models []struct {
				Name   string
				Counts map[string]int
			}
		}
		wbDecode(t, w.ok(t, w.args("status", "-o", "json")...), &st)
		applied := map[string]int{}
		for _, m := range st.Models {
			n := 0
			for _, c := range m.Counts {
				n += c
			}
			applied[m.Name] = n
		}
		if applied["p.a"] != 3 || applied["p.notify"] != 0 || applied["p.alert"] != 0 {
			t.Errorf("status -o json: units by model %v, want p.a's 3 days and none of p.notify or p.alert", applied)
		}
		text := w.ok(t, w.args("status")...)
		for _, m := range []string{"p.notify", "p.alert"} {
			row := ""
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, m+" ") {
					row = l
				}
			}
			if f := strings.Fields(row); len(f) < 3 || f[2] != "no" || f[3] != "state" || strings.Contains(row, " 1 ") {
				t.Errorf("status row of %s %q, want its shape 'no state' and no count:\n%s", m, row, text)
			}
		}
		if out := w.ok(t, w.args("units", "p.notify", "-o", "json")...); !strings.Contains(out, `"units": []`) {
			t.Errorf("units p.notify -o json: %s, want none", out)
		}

		plan := w.ok(t, w.args("plan", "--since", "2026-11-04", "--until", "2026-11-05")...)
		if strings.Contains(plan, "warning") || strings.Contains(plan, "existence row") {
			t.Errorf("plan warns or plans an existence row:\n%s", plan)
		}
		for _, m := range []string{"p.notify", "p.alert"} {
			if !strings.Contains(plan, m) || !strings.Contains(plan, "no state: its task runs its work, no unit") {
				t.Errorf("plan does not say %s keeps no state:\n%s", m, plan)
			}
		}
		if inc := w.ok(t, w.args("incidents")...); !strings.HasPrefix(inc, "all clear:") {
			t.Errorf("incidents with nothing held:\n%s", inc)
		}
	})
}
