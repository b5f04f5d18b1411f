package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// TestUnitsShowARetryWait: a failed unit waiting for its retry says so —
// "retry at …" and the error in units' text, not_before in its JSON, and
// the retry line in why.
func TestUnitsShowARetryWait(t *testing.T) {
	sp := writeSpec(t, `models:
  - name: raw.orders
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    retry: {attempts: 3, delay: 5m}
    run: {command: ["true"]}
`)
	db := filepath.Join(filepath.Dir(sp), "state.db")
	if code, _, errOut := run(t, "apply", "--spec", sp, "--dsn", db); code != 0 {
		t.Fatal(errOut)
	}
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	day := state.MustWindow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 1, 3, 14, 0, 0, 0, time.UTC)
	if _, err := s.Prefill(context.Background(), state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{day}, Now: now}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(context.Background(), state.ClaimRequest{Models: []string{"raw.orders"}, Worker: "w", Lease: time.Minute, Limit: 1, Now: now})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim %v %v", cs, err)
	}
	if err := s.Complete(context.Background(), cs[0], state.Outcome{Status: state.Pending, Error: "exit status 1: source down", At: now,
		NotBefore: now.Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, out, errOut := run(t, "units", "raw.orders", "--spec", sp, "--dsn", db)
	if !strings.Contains(out, "retry at 2026-01-03T14:05:00Z after attempt 1 failed: exit status 1: source down") {
		t.Errorf("units text does not show the retry wait:\n%s%s", out, errOut)
	}
	_, out, _ = run(t, "units", "raw.orders", "--spec", sp, "--dsn", db, "-o", "json")
	if !strings.Contains(out, `"not_before":"2026-01-03T14:05:00Z"`) {
		t.Errorf("units JSON lacks not_before:\n%s", out)
	}
	_, out, errOut = run(t, "why", "raw.orders", "--at", "2026-01-01T12:00:00Z", "--spec", sp, "--dsn", db, "--as-of", "2026-01-03T14:01:00Z")
	if !strings.Contains(out, "retry: at 2026-01-03T14:05:00Z, after attempt 1 failed") || !strings.Contains(out, "source down") {
		t.Errorf("why does not show the retry wait:\n%s%s", out, errOut)
	}
}
