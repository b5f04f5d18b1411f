package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSummaryNamesTheRunForSkippedTasks: a failed load skips its SUCCESS
// dependent; the run ends (exit 1) and its summary names the discover run
// that picks up the skipped task's pending units, and -o json says why a
// task was skipped by another pipeline's outcome.
func TestRunSummaryNamesTheRunForSkippedTasks(t *testing.T) {
	sp := writeSpec(t, `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    run: {command: ["sh", "-c", "echo source down >&2; exit 3"]}
  - name: mart.daily
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    after: [{task: raw.orders, on: success}]
    run: {command: ["true"]}
  - name: ops.alert
    pipeline: ops
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    after: [{task: raw.orders, on: success}]
    run: {command: ["true"]}
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
	// Another pipeline's task on raw.orders' SUCCESS: judged by the shop
	// run's outcome, it can never hold, so the task is skipped with a reason.
	code, out, errOut = run(t, "run", "--pipeline", "ops", "--spec", sp, "--dsn", db, "--since", "2026-01-01", "--until", "2026-01-03", "-o", "json")
	var res struct {
		Tasks []struct{ Task, Status, Reason string } `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, errOut)
	}
	if code != 0 || len(res.Tasks) != 1 || res.Tasks[0].Status != "SKIPPED" || !strings.Contains(res.Tasks[0].Reason, "raw.orders ended FAILED in run 1") {
		t.Errorf("exit %d, tasks %+v: want ops.alert SKIPPED because raw.orders failed in run 1", code, res.Tasks)
	}
}
