package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// retrySpec is one source with a retry budget of 5 tries.
const retrySpec = `models:
  - {name: raw.payments, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 5, delay: 5m}, run: {command: ["true"]}}
`

// newRetryWorld seeds retrySpec's store by hand, worked out so (times on
// 2026-01-03, the UI's clock 14:01):
//
//	raw.payments [00h,01h)  applied
//	raw.payments [01h,02h)  failed at 13:50 (run 1, try 1) and 14:00 (run
//	                        1, try 2), waiting for try 3 at 14:05
//	raw.payments [02h,03h)  pending
func newRetryWorld(t *testing.T) *engine.Engine {
	t.Helper()
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, retrySpec)
	at := func(h, m int) time.Time { return time.Date(2026, 1, 3, h, m, 0, 0, time.UTC) }
	e := engine.New(s, sp, engine.Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return at(14, 1) }})
	ctx := t.Context()
	if _, err := e.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.payments", Windows: []state.Window{hours(0, 1), hours(1, 2), hours(2, 3)}, Now: at(13, 0)}); err != nil {
		t.Fatal(err)
	}
	runID, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: at(13, 0), Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	claim := func(w state.Window, now time.Time) state.Claim {
		t.Helper()
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.payments"}, Window: w, Worker: "w", Lease: time.Minute, Limit: 1, RunID: runID, Now: now})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", w, cs, err)
		}
		return cs[0]
	}
	if err := s.Complete(ctx, claim(hours(0, 1), at(13, 10)), state.Outcome{Status: state.Applied, At: at(13, 10)}); err != nil {
		t.Fatal(err)
	}
	retry := func(now, notBefore time.Time, try int, msg string) {
		t.Helper()
		o := state.Outcome{Status: state.Pending, Error: msg, At: now, NotBefore: notBefore, Try: try}
		if err := s.Complete(ctx, claim(hours(1, 2), now), o); err != nil {
			t.Fatal(err)
		}
	}
	retry(at(13, 50), at(13, 55), 1, "exit status 1: GET /settlements: 503 Service Unavailable")
	retry(at(14, 0), at(14, 5), 2, "exit status 1: GET /settlements: 502 Bad Gateway")
	if runID != 1 {
		t.Fatalf("run id %d, want 1", runID)
	}
	return e
}

// TestGoldenRetry draws the why view and the model view of a unit waiting
// for its retry: "retry 3/5 at 2026-01-03 14:05Z (in 4m)", its last error,
// and the earlier attempt with its time and run in why; the retry line and
// the failed try in the model view's unit list.
func TestGoldenRetry(t *testing.T) {
	goldenScreens(t, newRetryWorld(t), []screen{
		{name: "why_retry", opts: Options{View: "why", Model: "raw.payments", At: time.Date(2026, 1, 1, 1, 30, 0, 0, time.UTC)},
			steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewWhy) }},
		{name: "model_retry", opts: Options{View: "model", Model: "raw.payments"},
			steps: func(t *testing.T, r *uiRun) string { return r.waitSettled(t, viewModel) }},
	}, func(t *testing.T, sc screen, frame string) {
		if sc.name != "why_retry" {
			return
		}
		for _, want := range []string{"retry 3/5 at 2026-01-03 14:05Z", "error: exit status 1: GET /settlements: 502",
			"try 1 · 11m ago run 1: exit status 1: GET /settlements: 503"} {
			if !strings.Contains(frame, want) {
				t.Errorf("the why view lacks %q", want)
			}
		}
	})
}
