package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// odSpec: raw.orders loads hours, core.daily reads a day of them; the
// loader's argument is the definition a test changes.
const odSpec = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true", "v1"]} # the loader
  - {name: core.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`

// odWorld is a spec file and a store (SQLite, or a PostgreSQL schema of its
// own) that the CLI runs against.
type odWorld struct{ spec, dsn string }

func (w odWorld) args(cmd string, more ...string) []string {
	return append([]string{cmd, "--spec", w.spec, "--dsn", w.dsn}, more...)
}

func (w odWorld) write(t *testing.T, body string) {
	t.Helper()
	if err := os.WriteFile(w.spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w odWorld) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

func odEach(t *testing.T, f func(t *testing.T, w odWorld)) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			w := odWorld{spec: filepath.Join(dir, "bollhav.yaml"), dsn: filepath.Join(dir, "state.db")}
			if backend == "postgres" {
				w.dsn = pgtest.DSN(t)
				t.Setenv("BOLLHAV_PG_SCHEMA", pgtest.Schema(t, w.dsn))
			}
			t.Setenv("BOLLHAV_ACTOR", "tester")
			w.write(t, odSpec)
			f(t, w)
		})
	}
}

// outdatedOf reads status -o json's outdated count per model.
func outdatedOf(t *testing.T, w odWorld) map[string]int {
	t.Helper()
	var st struct {
		Models []struct {
			Name     string
			Outdated int
		}
	}
	if err := json.Unmarshal([]byte(w.ok(t, w.args("status", "-o", "json")...)), &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range st.Models {
		out[m.Name] = m.Outdated
	}
	return out
}

// definitions reads units -o json's definition and built_on_outdated per
// unit, as "definition" or "definition+built-on".
func definitions(t *testing.T, w odWorld, model string) []string {
	t.Helper()
	var us struct {
		Units []struct {
			Definition *string
			BuiltOn    bool `json:"built_on_outdated"`
		}
	}
	if err := json.Unmarshal([]byte(w.ok(t, w.args("units", model, "-o", "json")...)), &us); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range us.Units {
		d := "-"
		if u.Definition != nil {
			d = *u.Definition
		}
		if u.BuiltOn {
			d += "+built-on"
		}
		out = append(out, d)
	}
	return out
}

func countOf(ds []string, d string) int {
	n := 0
	for _, x := range ds {
		if x == d {
			n++
		}
	}
	return n
}

// Through the CLI on both stores: a comment changes nothing; a changed
// command outdates exactly the loader's applied hours (status counts them),
// the daily window reading them is built on outdated (units, why), plan
// --outdated --downstream lists both by model, run rebuilds them and
// everything is current again.
func TestOutdatedThroughTheCLI(t *testing.T) {
	odEach(t, func(t *testing.T, w odWorld) {
		w.ok(t, w.args("run", "--since", "2026-01-01", "--until", "2026-01-03")...)
		w.write(t, strings.Replace(odSpec, "# the loader", "# loads the orders", 1))
		if got := outdatedOf(t, w); got["raw.orders"] != 0 || got["core.daily"] != 0 {
			t.Fatalf("after a comment: outdated %v, want none", got)
		}
		w.write(t, strings.Replace(odSpec, `"v1"`, `"v2"`, 1))
		if got := outdatedOf(t, w); got["raw.orders"] != 48 || got["core.daily"] != 0 {
			t.Fatalf("after the command changed: outdated %v, want raw.orders' 48 hours", got)
		}
		whyRaw := w.ok(t, w.args("why", "raw.orders", "--at", "2026-01-01T03:00:00Z")...)
		containsAll(t, "why raw.orders", whyRaw, "definition: applied under an earlier definition (changed in the spec, not registered yet: run.command); bollhav run raw.orders --outdated rebuilds it",
			"    run.command: true v1 → true v2")
		w.ok(t, w.args("apply")...)
		var whyJSON struct {
			Change *struct {
				ChangedAt *string `json:"changed_at"`
				Changes   []struct{ Field, Old, New string }
			} `json:"definition_change"`
		}
		if err := json.Unmarshal([]byte(w.ok(t, w.args("why", "raw.orders", "--at", "2026-01-01T03:00:00Z", "-o", "json")...)), &whyJSON); err != nil {
			t.Fatal(err)
		}
		if c := whyJSON.Change; c == nil || c.ChangedAt == nil || len(c.Changes) != 1 || c.Changes[0].Field != "run.command" ||
			c.Changes[0].Old != "true v1" || c.Changes[0].New != "true v2" {
			t.Errorf("why -o json definition_change after apply: %+v", c)
		}
		raw := definitions(t, w, "raw.orders")
		if len(raw) != 48 || countOf(raw, "outdated") != 48 {
			t.Errorf("raw.orders' definitions %v; want 48 outdated", raw)
		}
		if got := definitions(t, w, "core.daily"); strings.Join(got, " ") != "current+built-on current+built-on" {
			t.Errorf("core.daily's definitions %v; want both days current and built on outdated", got)
		}
		text := w.ok(t, w.args("units", "core.daily")...)
		if strings.Count(text, " built-on-outdated ") != 2 {
			t.Errorf("units core.daily text:\n%s", text)
		}
		var why struct {
			BuiltOn []struct {
				Model   string
				Windows [][2]string
				More    int
			} `json:"built_on_outdated"`
		}
		if err := json.Unmarshal([]byte(w.ok(t, w.args("why", "core.daily", "--at", "2026-01-02T05:00:00Z", "-o", "json")...)), &why); err != nil {
			t.Fatal(err)
		}
		if len(why.BuiltOn) != 1 || why.BuiltOn[0].Model != "raw.orders" || len(why.BuiltOn[0].Windows) != 1 ||
			why.BuiltOn[0].Windows[0] != [2]string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"} {
			t.Errorf("why core.daily day two: built_on_outdated %+v", why.BuiltOn)
		}
		why2 := w.ok(t, w.args("why", "core.daily", "--at", "2026-01-02T05:00:00Z")...)
		if !strings.Contains(why2, "built on outdated windows of raw.orders: [2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z)") {
			t.Errorf("why text:\n%s", why2)
		}

		var pj struct {
			Models []struct {
				Name     string
				Outdated int
				BuiltOn  int `json:"built_on_outdated"`
				Reset    int
			}
		}
		if err := json.Unmarshal([]byte(w.ok(t, w.args("plan", "--outdated", "-o", "json")...)), &pj); err != nil {
			t.Fatal(err)
		}
		if len(pj.Models) != 1 || pj.Models[0].Name != "raw.orders" || pj.Models[0].Outdated != 48 || pj.Models[0].Reset != 48 || pj.Models[0].BuiltOn != 0 {
			t.Errorf("plan --outdated -o json: %+v; want raw.orders' 48 outdated hours alone", pj.Models)
		}
		plan := w.ok(t, w.args("plan", "--outdated", "--downstream")...)
		containsAll(t, "plan --outdated --downstream", plan, "raw.orders  0       48     0       48", "48 outdated, 0 built on outdated",
			"core.daily  0       2      0       2", "0 outdated, 2 built on outdated")
		w.ok(t, w.args("run", "--outdated", "--downstream")...)
		if got := outdatedOf(t, w); got["raw.orders"] != 0 {
			t.Errorf("after run --outdated: outdated %v", got)
		}
		if got := definitions(t, w, "core.daily"); strings.Join(got, " ") != "current current" {
			t.Errorf("core.daily after the rebuild: %v", got)
		}
	})
}
