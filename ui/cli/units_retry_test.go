package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// TestUnitsAndWhyShowRetryTriesAndEarlierErrors: units says "retry 2/5 at
// …" for a unit that failed once and "retry 3/5 at …" with the first try's
// error and time for one that failed twice, in text and JSON; why shows the
// retry line, the error and the earlier attempt with its time and run.
func TestUnitsAndWhyShowRetryTriesAndEarlierErrors(t *testing.T) {
	sp := writeSpec(t, `models:
  - {name: raw.orders, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 5, delay: 5m}, run: {command: ["true"]}}
`)
	db := filepath.Join(filepath.Dir(sp), "state.db")
	if code, _, errOut := run(t, "apply", "--spec", sp, "--dsn", db); code != 0 {
		t.Fatal(errOut)
	}
	seedRetries(t, db)

	code, out, errOut := run(t, "units", "raw.orders", "--spec", sp, "--dsn", db)
	if code != 0 {
		t.Fatalf("units: %d %s", code, errOut)
	}
	containsAll(t, "units text", out,
		"pending  1         -                     -                  retry 2/5 at 2026-01-03T14:05:00Z; try 1 failed: exit status 1: source down\n",
		"pending  2         -                     -                  retry 3/5 at 2026-01-03T14:05:00Z; try 2 failed: exit status 1: still down ⏎ after 30s; earlier: try 1 at 2026-01-03T14:00:00Z: exit status 1: source down\n",
	)

	code, out, errOut = run(t, "units", "raw.orders", "--spec", sp, "--dsn", db, "-o", "json")
	if code != 0 {
		t.Fatalf("units -o json: %d %s", code, errOut)
	}
	var units struct {
		Units []struct {
			NotBefore     string          `json:"not_before"`
			Retry         json.RawMessage `json:"retry"`
			AttemptErrors json.RawMessage `json:"attempt_errors"`
		} `json:"units"`
	}
	if err := json.Unmarshal([]byte(out), &units); err != nil || len(units.Units) != 2 {
		t.Fatalf("units JSON %v:\n%s", err, out)
	}
	day1, day2 := units.Units[0], units.Units[1]
	jsonEq(t, "day 1 retry", day1.Retry, `{"try":2,"of":5,"at":"2026-01-03T14:05:00Z","ended_run":null}`)
	jsonEq(t, "day 1 attempt_errors", day1.AttemptErrors, `[{"number":1,"try":1,"error":"exit status 1: source down","at":"2026-01-03T14:00:00Z","run_id":1}]`)
	jsonEq(t, "day 2 retry", day2.Retry, `{"try":3,"of":5,"at":"2026-01-03T14:05:00Z","ended_run":null}`)
	jsonEq(t, "day 2 attempt_errors", day2.AttemptErrors, `[
		{"number":2,"try":2,"error":"exit status 1: still down\nafter 30s","at":"2026-01-03T14:02:00Z","run_id":1},
		{"number":1,"try":1,"error":"exit status 1: source down","at":"2026-01-03T14:00:00Z","run_id":1}]`)
	if day1.NotBefore != "2026-01-03T14:05:00Z" {
		t.Errorf("not_before = %q", day1.NotBefore)
	}

	why := []string{"why", "raw.orders", "--at", "2026-01-02T12:00:00Z", "--spec", sp, "--dsn", db, "--as-of", "2026-01-03T14:03:00Z"}
	code, out, errOut = run(t, why...)
	if code != 0 {
		t.Fatalf("why: %d %s", code, errOut)
	}
	want := `  retry 3/5 at 2026-01-03T14:05:00Z
  error: exit status 1: still down
after 30s
  earlier attempts, newest first:
    try 1 failed at 2026-01-03T14:00:00Z (run 1): exit status 1: source down
`
	if !strings.Contains(out, want) {
		t.Errorf("why text lacks\n%s\ngot:\n%s", want, out)
	}
	code, out, errOut = run(t, append(why, "-o", "json")...)
	if code != 0 {
		t.Fatalf("why -o json: %d %s", code, errOut)
	}
	var w struct {
		Retry         json.RawMessage `json:"retry"`
		AttemptErrors json.RawMessage `json:"attempt_errors"`
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "why retry", w.Retry, `{"try":3,"of":5,"at":"2026-01-03T14:05:00Z","ended_run":null}`)
	jsonEq(t, "why attempt_errors", w.AttemptErrors, string(day2.AttemptErrors))

	// A unit not waiting: why says no retry, in text and JSON.
	code, out, _ = run(t, "why", "raw.orders", "--at", "2026-01-04T12:00:00Z", "--spec", sp, "--dsn", db, "-o", "json")
	if code != 0 || !strings.Contains(out, `"retry": null`) || !strings.Contains(out, `"attempt_errors": []`) {
		t.Errorf("why of a missing unit: %d\n%s", code, out)
	}
}

// seedRetries fails both days of raw.orders once at 14:00 under run 1 and
// day 2 once more at 14:02, each sent back for a retry at 14:05.
func seedRetries(t *testing.T, db string) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := func(d int) state.Window {
		return state.MustWindow(time.Date(2026, 1, 1+d, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2+d, 0, 0, 0, 0, time.UTC))
	}
	at := func(min int) time.Time { return time.Date(2026, 1, 3, 14, min, 0, 0, time.UTC) }
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{day(0), day(1)}, Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	runID, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: at(0)})
	if err != nil || runID != 1 {
		t.Fatalf("run %d, %v", runID, err)
	}
	fail := func(w state.Window, now, notBefore time.Time, try int, msg string) {
		t.Helper()
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.orders"}, Window: w, Worker: "w", Lease: time.Minute, Limit: 1, RunID: runID, Now: now})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", w, cs, err)
		}
		if err := s.Complete(ctx, cs[0], state.Outcome{Status: state.Pending, Error: msg, At: now, NotBefore: notBefore, Try: try}); err != nil {
			t.Fatal(err)
		}
	}
	fail(day(0), at(0), at(5), 1, "exit status 1: source down")
	fail(day(1), at(0), at(1), 1, "exit status 1: source down")
	fail(day(1), at(2), at(5), 2, "exit status 1: still down\nafter 30s")
}

func jsonEq(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expectation: %v", what, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}
