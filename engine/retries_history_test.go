package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// TestRetryHistoryKeepsEachTrysError: a command that fails twice, each time
// with its own error, then succeeds under attempts: 3 — driven by the
// engine's lease clock, not by sleeping out its backoff. While the unit
// waits, its history holds each failure so far with its try number, and
// the retry line reads "retry 2/3" then "retry 3/3" at the not-before
// time; once applied after three attempts, the history still holds both
// errors, tries 1 and 2, under the run that made them.
func TestRetryHistoryKeepsEachTrysError(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		counter := filepath.Join(t.TempDir(), "tries")
		e := runEngine(t, s, fmt.Sprintf(`models:
  - name: raw.orders
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    retry: {attempts: 3, delay: 1m, max_delay: 10m}
    run:
      command:
        - sh
        - -c
        - 'n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s; if [ $n -le 2 ]; then echo "source down on try $n" >&2; exit 1; fi'
`, counter))
		if _, err := e.Apply(t.Context()); err != nil {
			t.Fatal(err)
		}
		clock := &fakeClock{now: time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)}
		e.opts.LeaseClock = clock.Now
		done := make(chan *RunResult, 1)
		go func() {
			res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, e.Executor(), nil)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		for failed := 1; failed <= 2; failed++ {
			waiting := waitForRetry(t, s, failed)
			history, err := s.Attempts(t.Context(), waiting.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(history) != failed {
				t.Fatalf("after failure %d the history holds %d attempts: %+v", failed, len(history), history)
			}
			newest := history[failed-1]
			if newest.Try != failed || newest.Number != failed || !strings.Contains(newest.Error, fmt.Sprintf("source down on try %d", failed)) {
				t.Errorf("failure %d is logged as %+v", failed, newest)
			}
			f, err := e.Failures(t.Context(), waiting, e.RetryBudget(t.Context(), "raw.orders"))
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("retry %d/3 at %s", failed+1, state.FormatTime(*waiting.NotBefore))
			if f.Retry == nil || f.Retry.Line(state.FormatTime) != want {
				t.Errorf("after failure %d the retry line is %+v, want %q", failed, f.Retry, want)
			}
			clock.set(*waiting.NotBefore)
		}
		var res *RunResult
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the run did not end after the clock passed the last retry time")
		}
		if res == nil || taskStatus(res, "raw.orders") != "SUCCESS" {
			t.Fatalf("run %+v, want raw.orders SUCCESS on its third try", res)
		}
		u := unit(t, s, "raw.orders", days(0, 1))
		if u.Status != state.Applied || u.Attempts != 3 {
			t.Fatalf("unit %s after %d attempts, want applied after 3", u.Status, u.Attempts)
		}
		history, err := s.Attempts(t.Context(), u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(history) != 2 {
			t.Fatalf("history after success: %+v, want the two failures", history)
		}
		for i, a := range history {
			if a.Try != i+1 || a.Number != i+1 || a.RunID != res.RunID || !strings.Contains(a.Error, fmt.Sprintf("source down on try %d", i+1)) {
				t.Errorf("attempt %d kept as %+v, want try %d of run %d with its own error", i+1, a, i+1, res.RunID)
			}
		}
	})
}

// waitForRetry waits for raw.orders' first day to be pending with a retry
// time after n failed attempts.
func waitForRetry(t *testing.T, s state.Store, n int) state.Unit {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := unit(t, s, "raw.orders", days(0, 1))
		if u.Status == state.Pending && u.NotBefore != nil && u.Attempts == n {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unit never went back to pending with a retry time after %d failures: %+v", n, u)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
