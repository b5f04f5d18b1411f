package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSummaryNamesTheRunForSkippedTasks: a failed load skips its SUCCESS
// dependent; the run ends (exit 1), its summary names the discover run
// that picks up the skipped task's held units, and `blocked` lists them
// with the reason. Another pipeline's dependent is judged per window: its
// units are held with the same reason.
func TestRunSummaryNamesTheRunForSkippedTasks(t *testing.T) {
	sp := writeSpec(t, `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     run: {command: ["sh", "-c", "echo source down >&2; exit 3"]}}
  - {name: mart.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     after: [{task: raw.orders, on: success}], run: {command: ["true"]}}
  - {name: ops.alert, pipeline: ops, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     after: [{task: raw.orders, on: success}], run: {command: ["true"]}}
`)
	db := filepath.Join(filepath.Dir(sp), "state.db")
	code, out, errOut := run(t, "run", "--pipeline", "shop", "--spec", sp, "--dsn", db, "--since", "2026-01-01", "--until", "2026-01-03")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out, errOut)
	}
	want := "bollhav run mart.daily --since 2026-01-01T00:00:00Z --until 2026-01-03T00:00:00Z --mode discover"
	if !strings.Contains(out, "skipped tasks never run again in run 1") || !strings.Contains(out, want) {
		t.Errorf("summary lacks the run for the skipped task (%q):\n%s", want, out)
	}
	// The skipped task's days are held, each saying why, and listed.
	code, out, _ = run(t, "blocked", "--spec", sp, "--dsn", db)
	if code != 0 || strings.Count(out, "raw.orders (after SUCCESS): ended FAILED in run 1") != 2 {
		t.Errorf("blocked exit %d: want mart.daily's two days held by raw.orders' failure:\n%s", code, out)
	}
	// Another pipeline's task on raw.orders' SUCCESS: judged per window by
	// the shop run's outcome, each of its days is held with the reason; the
	// task itself succeeds with nothing applied.
	code, out, errOut = run(t, "run", "--pipeline", "ops", "--spec", sp, "--dsn", db, "--since", "2026-01-01", "--until", "2026-01-03", "-o", "json")
	var res struct {
		Tasks []struct {
			Task, Status string
			Units        struct{ Applied, Blocked int }
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, errOut)
	}
	if code != 0 || len(res.Tasks) != 1 || res.Tasks[0].Status != "SUCCESS" || res.Tasks[0].Units.Applied != 0 || res.Tasks[0].Units.Blocked != 2 {
		t.Errorf("exit %d, tasks %+v: want ops.alert SUCCESS with its 2 days held", code, res.Tasks)
	}
	code, out, _ = run(t, "units", "ops.alert", "--spec", sp, "--dsn", db)
	if code != 0 || strings.Count(out, "raw.orders (after SUCCESS): ended FAILED in run 1") != 2 {
		t.Errorf("units exit %d: want both days of ops.alert held by raw.orders' failure in run 1:\n%s", code, out)
	}
}
