package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

const underWayCLISpec = `models:
  - {name: raw.h, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: core.d, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.h, contract: encapsulate}], run: {command: ["true"]}}
`

// `why` on a pending day whose last four hours are running says it waits on
// that work and is not blocked — in text and as JSON under_way — where it
// used to print only the upstream's "missing" range, as for a unit no one
// will ever release.
func TestWhySaysWaitingOnWorkUnderWay(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var units []enginetest.UnitOpts
	for h := range 24 {
		st := state.Applied
		if h >= 20 {
			st = state.Running
		}
		units = append(units, enginetest.UnitOpts{Model: "raw.h", Window: state.MustWindow(t0.Add(time.Duration(h)*time.Hour), t0.Add(time.Duration(h+1)*time.Hour)), Status: st})
	}
	specPath, db := factoryWorld(t, underWayCLISpec, t0, append(units, enginetest.UnitOpts{Model: "core.d", Window: state.MustWindow(t0, t0.Add(24*time.Hour))})...)

	world := []string{"--spec", specPath, "--dsn", db, "--as-of", "2026-01-01T23:30:00Z"}
	code, out, errOut := run(t, append([]string{"why", "core.d", "--at", "2026-01-01"}, world...)...)
	want := "waiting on work under way, not blocked: raw.h (ENCAPSULATE): waiting on 4 running unit(s) under way"
	if code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("why: exit %d, stderr %q; want the line %q in\n%s", code, errOut, want, out)
	}
	code, out, _ = run(t, append([]string{"why", "core.d", "--at", "2026-01-01", "-o", "json"}, world...)...)
	var got struct {
		Status   string  `json:"status"`
		UnderWay *string `json:"under_way"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK {
		t.Fatalf("why -o json: exit %d, %v\n%s", code, err, out)
	}
	if got.Status != "pending" || got.UnderWay == nil || *got.UnderWay != "raw.h (ENCAPSULATE): waiting on 4 running unit(s) under way" {
		t.Errorf("why -o json: status %q, under_way %v", got.Status, got.UnderWay)
	}
	// An hour of raw.h: nothing upstream, so nothing under way.
	code, out, _ = run(t, append([]string{"why", "raw.h", "--at", "2026-01-01T21:00:00Z", "-o", "json"}, world...)...)
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK || got.UnderWay != nil {
		t.Errorf("why raw.h -o json: exit %d, %v, under_way %v; want null", code, err, got.UnderWay)
	}
}

// factoryWorld writes yaml as a spec file beside a new SQLite store that
// the state factory seeds with units (registered at t0), and returns both
// paths: state a run would leave, without running.
func factoryWorld(t *testing.T, yaml string, t0 time.Time, units ...enginetest.UnitOpts) (specPath, db string) {
	t.Helper()
	dir := t.TempDir()
	specPath, db = filepath.Join(dir, "bollhav.yaml"), filepath.Join(dir, "state.db")
	if err := os.WriteFile(specPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	enginetest.RegisterYAML(t, s, yaml, t0)
	enginetest.Units(t, s, units...)
	return specPath, db
}
