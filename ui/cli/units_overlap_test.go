package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

const overlapSpec = `models:
  - {name: stage.f, pipeline: stage, chunking: {interval: 6h, start: "2026-01-01T00:00:00Z", flexibility: flex}, run: {command: ["true"]}}
`

// units names the overlap lock: a pending unit of a flexible model that a
// running unit overlaps lists an "overlap" reason naming the running
// window, in JSON and in the text's detail; the pending unit beside it,
// which nothing overlaps, lists none.
func TestUnitsNameTheOverlapLock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	specPath, db := factoryWorld(t, overlapSpec, t0,
		enginetest.UnitOpts{Model: "stage.f", Window: state.MustWindow(at(0), at(12)), Status: state.Running},
		enginetest.UnitOpts{Model: "stage.f", Window: state.MustWindow(at(6), at(18))},
		enginetest.UnitOpts{Model: "stage.f", Window: state.MustWindow(at(18), at(24))},
	)
	world := []string{"--spec", specPath, "--dsn", db}
	code, out, errOut := run(t, append([]string{"units", "stage.f", "-o", "json"}, world...)...)
	var got struct {
		Units []struct {
			Since   string `json:"since"`
			Status  string `json:"status"`
			Reasons []struct {
				Kind   string `json:"kind"`
				Detail string `json:"detail"`
			} `json:"reasons"`
		} `json:"units"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK {
		t.Fatalf("units -o json: exit %d, %v, %s\n%s", code, err, errOut, out)
	}
	lock := "the running unit [2026-01-01T00:00:00Z, 2026-01-01T12:00:00Z) of this flexible model overlaps it"
	kinds := map[string][]string{}
	for _, u := range got.Units {
		for _, r := range u.Reasons {
			kinds[u.Since] = append(kinds[u.Since], r.Kind)
			if r.Kind == "overlap" && !strings.Contains(r.Detail, lock) {
				t.Errorf("the overlap reason %q does not name the running window", r.Detail)
			}
		}
	}
	if k := kinds["2026-01-01T06:00:00Z"]; len(k) != 1 || k[0] != "overlap" {
		t.Errorf("the pending unit under the running one lists %v, want [overlap]", k)
	}
	if k := kinds["2026-01-01T18:00:00Z"]; len(k) != 0 {
		t.Errorf("the pending unit nothing overlaps lists %v, want none", k)
	}
	code, out, _ = run(t, append([]string{"units", "stage.f"}, world...)...)
	if code != ExitOK || !strings.Contains(out, "waits: "+lock) {
		t.Errorf("units (text) does not show the lock:\n%s", out)
	}
}
