package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// flakyExec fails each unit's first fails executions, then succeeds, and
// notes when each execution started.
type flakyExec struct {
	fails int
	mu    sync.Mutex
	calls map[string]int
	at    []time.Time
}

func (f *flakyExec) Execute(_ context.Context, u executor.UnitRun) (executor.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	key := u.Model.Name + " " + u.Window.String()
	f.calls[key]++
	f.at = append(f.at, time.Now())
	if f.calls[key] <= f.fails {
		return executor.Result{}, errors.New("exit status 1: source flaky")
	}
	return executor.Result{}, nil
}

const retrySpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 3, delay: 20ms, max_delay: 50ms}, run: {command: ["true"]}}
`

// TestRunRetriesAFailedUnitWithinItsBudget: with attempts: 3, a command
// that fails twice and succeeds on its third try leaves its unit applied
// after 3 attempts and its task SUCCESS, in one run, with each retry after
// its backoff.
func TestRunRetriesAFailedUnitWithinItsBudget(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, retrySpec)
		exec := &flakyExec{fails: 2}
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if taskStatus(res, "raw.orders") != "SUCCESS" || res.Failed() {
			t.Fatalf("tasks %+v, want raw.orders SUCCESS", res.Tasks)
		}
		u := unit(t, s, "raw.orders", days(0, 1))
		if u.Status != state.Applied || u.Attempts != 3 {
			t.Errorf("unit %s after %d attempts, want applied after 3", u.Status, u.Attempts)
		}
		if len(exec.at) != 3 {
			t.Fatalf("%d executions, want 3", len(exec.at))
		}
		for i := 1; i < 3; i++ {
			if gap := exec.at[i].Sub(exec.at[i-1]); gap < 10*time.Millisecond {
				t.Errorf("try %d came %s after the one before: no backoff (at least half of 20ms)", i+1, gap)
			}
		}
	})
}

// TestRunWithABudgetSpentSkipsSuccessDependents: an always-failing load
// with attempts: 2 fails for good after its second try; its SUCCESS
// dependent is SKIPPED, the ALWAYS cleanup behind that and the FAILURE
// alert run, and the run ends failed.
func TestRunWithABudgetSpentSkipsSuccessDependents(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		spec := strings.Replace(skipSpec, "{name: raw.orders, pipeline: shop,", "{name: raw.orders, pipeline: shop, retry: {attempts: 2, delay: 20ms},", 1)
		e := runEngine(t, s, spec)
		bad := hours(5, 6)
		exec := failingHour(bad)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		for model, st := range map[string]string{"raw.orders": "FAILED", "mart.daily": "SKIPPED", "ops.cleanup": "SUCCESS", "ops.alert": "SUCCESS"} {
			if got := taskStatus(res, model); got != st {
				t.Errorf("%s: %s, want %s", model, got, st)
			}
		}
		if !res.Failed() {
			t.Error("the run must end failed (exit 1)")
		}
		if n := exec.calls["raw.orders "+bad.String()]; n != 2 {
			t.Errorf("the failing hour ran %d times, want 2 (its budget)", n)
		}
		if u := unit(t, s, "raw.orders", bad); u.Status != state.Failed || u.Attempts != 2 || u.Error == "" {
			t.Errorf("the failing hour: %s, %d attempts, error %q; want failed after 2 with its error", u.Status, u.Attempts, u.Error)
		}
	})
}

// TestWorkerSuccessorRespectsTheRetryTime: a worker fails a unit with tries
// left and stops (as if killed) while the unit waits for its retry; the
// next worker does not take it before its not-before time, which lives in
// the store.
func TestWorkerSuccessorRespectsTheRetryTime(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - {name: raw.orders, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 3, delay: 1s, max_delay: 1s}, run: {command: ["true"]}}
`)
		if _, err := e.Apply(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{days(0, 1)}, Now: e.now()}); err != nil {
			t.Fatal(err)
		}
		first := &flakyExec{fails: 10}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Work(ctx, first, WorkOptions{Workers: 1, Poll: 20 * time.Millisecond}) }()
		waiting := waitRetrying(t, s, "raw.orders", days(0, 1))
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if waiting.Attempts != 1 || waiting.Error == "" {
			t.Errorf("the waiting unit: %d attempts, error %q; want 1 and the error kept", waiting.Attempts, waiting.Error)
		}
		second := &flakyExec{}
		ctx2, cancel2 := context.WithCancel(t.Context())
		done2 := make(chan error, 1)
		go func() { done2 <- e.Work(ctx2, second, WorkOptions{Workers: 1, Poll: 20 * time.Millisecond}) }()
		deadline := time.Now().Add(20 * time.Second)
		for unit(t, s, "raw.orders", days(0, 1)).Status != state.Applied {
			if time.Now().After(deadline) {
				t.Fatal("the second worker never ran the unit")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel2()
		if err := <-done2; err != nil {
			t.Fatal(err)
		}
		if len(second.at) != 1 || second.at[0].Before(*waiting.NotBefore) {
			t.Errorf("the second worker ran the unit at %v, before its retry time %v", second.at, *waiting.NotBefore)
		}
	})
}

// unit is model's unit over w, read from the store.
func unit(t *testing.T, s state.Store, model string, w state.Window) state.Unit {
	t.Helper()
	var out state.Unit
	err := s.ScanUnits(t.Context(), state.UnitQuery{Model: model, Window: w}, func(u state.Unit) error {
		if u.Window.Equal(w) {
			out = u
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitRetrying waits until model's unit w is pending with a retry time (a
// failure sent back for its next try) and returns it.
func waitRetrying(t *testing.T, s state.Store, model string, w state.Window) state.Unit {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := unit(t, s, model, w)
		if u.Status == state.Pending && u.NotBefore != nil {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s never went back to pending for a retry: %+v", model, w, u)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRetryBudgetStartsAfreshAfterAnEnd: a long-lived worker's budget is
// per unit until the unit ends. Once a failure is final (or the unit
// succeeds), the count is dropped, so an operator who re-pends the unit
// gives it a whole budget again rather than the tries left over.
func TestRetryBudgetStartsAfreshAfterAnEnd(t *testing.T) {
	m := &spec.Model{Name: "raw.orders", Retry: spec.Retry{Attempts: 2, Delay: time.Minute, MaxDelay: time.Hour}}
	c := state.Claim{Unit: state.Unit{ID: 7}}
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	failed := func() unitVerdict {
		return unitVerdict{out: state.Outcome{Status: state.Failed, Error: "exit status 1", At: now}}
	}
	r := newRetries()
	outcomes := func(vs ...unitVerdict) []string {
		var out []string
		for _, v := range vs {
			got := r.apply(m, c, v, now)
			out = append(out, string(got.out.Status))
		}
		return out
	}
	// Try 1 retries, try 2 is final; re-pended, the unit again gets a
	// retry first; after a success, too.
	got := outcomes(failed(), failed(), failed(), failed(),
		unitVerdict{out: state.Outcome{Status: state.Applied, At: now}}, failed())
	want := []string{"pending", "failed", "pending", "failed", "applied", "pending"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("outcome %d: %s, want %s (all %v)", i+1, got[i], want[i], got)
		}
	}
	if n := len(r.tries); n != 1 {
		t.Errorf("%d units counted, want only the one waiting for its retry", n)
	}
}

// retryClockWorld is raw.orders, daily, with three tries 1m apart (up to
// 10m), registered, on a lease clock the test moves by hand from
// 2026-01-05T12:00Z.
func retryClockWorld(t *testing.T, s state.Store) (*Engine, *fakeClock) {
	t.Helper()
	e := runEngine(t, s, `models:
  - {name: raw.orders, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 3, delay: 1m, max_delay: 10m}, run: {command: ["true"]}}
`)
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)}
	e.opts.LeaseClock = clock.Now
	return e, clock
}

// fakeClock is a lease clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// TestRetryBackoffFollowsTheEnginesClock: the backoff is judged on the
// engine's lease clock, not by sleeping. With delay 1m and max_delay 10m,
// the first retry waits between 30 s and 1 m, the second between 1 m and
// 2 m (doubled, jittered into the upper half); the unit is not tried again
// while the clock stands before its time, and is once the clock passes it.
func TestRetryBackoffFollowsTheEnginesClock(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, clock := retryClockWorld(t, s)
		exec := &flakyExec{fails: 2}
		done := make(chan *RunResult, 1)
		go func() {
			res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		for try, bounds := range [][2]time.Duration{{30 * time.Second, time.Minute}, {time.Minute, 2 * time.Minute}} {
			var waiting state.Unit
			deadline := time.Now().Add(20 * time.Second)
			for {
				waiting = unit(t, s, "raw.orders", days(0, 1))
				if waiting.Status == state.Pending && waiting.NotBefore != nil && waiting.Attempts == try+1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("try %d: the unit never went back to pending with a retry time: %+v", try+1, waiting)
				}
				time.Sleep(10 * time.Millisecond)
			}
			wait := waiting.NotBefore.Sub(clock.Now())
			if wait < bounds[0] || wait > bounds[1] {
				t.Errorf("after failure %d the unit waits %s, want between %s and %s", try+1, wait, bounds[0], bounds[1])
			}
			// The loop looks again at least once a second: give it two, and
			// it must not have run the unit before its time.
			time.Sleep(2 * time.Second)
			exec.mu.Lock()
			ran := len(exec.at)
			exec.mu.Unlock()
			if ran != try+1 {
				t.Fatalf("try %d: %d executions while the clock stood before the retry time", try+1, ran)
			}
			clock.set(*waiting.NotBefore)
		}
		select {
		case res := <-done:
			if res == nil || taskStatus(res, "raw.orders") != "SUCCESS" {
				t.Fatalf("run %+v, want raw.orders SUCCESS on its third try", res)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the run did not end after the clock passed the last retry time")
		}
		if u := unit(t, s, "raw.orders", days(0, 1)); u.Status != state.Applied || u.Attempts != 3 {
			t.Errorf("unit %s after %d attempts, want applied after 3", u.Status, u.Attempts)
		}
	})
}

// A unit that failed and waits for its retry is a failed incident that
// says when the next try comes: the store's not-before time.
func TestIncidentsShowTheNextRetry(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, _ := retryClockWorld(t, s)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = e.Run(ctx, RunRequest{Window: firstDay()}, &flakyExec{fails: 5}, nil)
		}()
		t.Cleanup(cancel)
		waiting := waitRetrying(t, s, "raw.orders", days(0, 1))
		rep, err := e.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Incidents) != 1 {
			t.Fatalf("incidents %+v, want the retrying unit", rep.Incidents)
		}
		inc := rep.Incidents[0]
		if inc.Kind != gate.IncidentFailed || inc.Model != "raw.orders" || inc.Units != 1 || inc.Detail != "exit status 1: source flaky" {
			t.Errorf("incident %+v, want raw.orders failed with its error", inc)
		}
		if inc.Retry == nil || !inc.Retry.At.Equal(*waiting.NotBefore) || inc.Retry.Try != 2 || inc.Retry.Of != 3 {
			t.Errorf("retry %+v, want try 2 of 3 at %s", inc.Retry, waiting.NotBefore)
		}
		if got, want := inc.Retry.Line(state.FormatTime), "retry 2/3 at "+state.FormatTime(*waiting.NotBefore); got != want {
			t.Errorf("retry line %q, want %q", got, want)
		}

		// The run is cancelled while the unit waits: no try 2 of 3 comes
		// from it; a new run takes the unit from the same time on, with a
		// fresh budget, and every view says so.
		cancel()
		<-done
		runs, err := s.Runs(t.Context(), "", 1)
		if err != nil || len(runs) != 1 {
			t.Fatal(runs, err)
		}
		if rep, err = e.Incidents(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r := rep.Incidents[0].Retry; r == nil || r.EndedRun != runs[0].ID {
			t.Fatalf("retry after the cancel %+v, want it to name the ended run %d", r, runs[0].ID)
		}
		want := fmt.Sprintf("retry by a new run from %s (run %d that set it ended)", state.FormatTime(*waiting.NotBefore), runs[0].ID)
		if got := rep.Incidents[0].Retry.Line(state.FormatTime); got != want {
			t.Errorf("retry line %q, want %q", got, want)
		}
		why, err := e.Why(t.Context(), "raw.orders", t0)
		if err != nil {
			t.Fatal(err)
		}
		if why.Retry == nil || why.Retry.EndedRun != runs[0].ID {
			t.Errorf("why's retry %+v, want the ended run named", why.Retry)
		}
	})
}

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

type alwaysFail struct{ n atomic.Int32 }

func (a *alwaysFail) Execute(context.Context, executor.UnitRun) (executor.Result, error) {
	a.n.Add(1)
	return executor.Result{}, errors.New("exit status 1: source down")
}

const retryOthersSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     retry: {attempts: 2, delay: 1m, max_delay: 1m}, run: {command: ["true"]}}
`

// A unit this task tried once and sent to backoff is finished (failed for
// good) by a worker: the task must count it.
func TestRetryFinishedByAWorkerCountsForTheTask(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, retryOthersSpec)
		e.opts.Now = nil
		if _, err := e.Apply(t.Context()); err != nil {
			t.Fatal(err)
		}
		runExec := &alwaysFail{}
		done := make(chan *RunResult, 1)
		go func() {
			res, err := e.Run(context.Background(), RunRequest{Window: firstDay()}, runExec, nil)
			if err != nil && !errors.Is(err, state.ErrLeaseLost) {
				// The worker's clock runs hours ahead, so on a loaded
				// machine it can find the run's lease expired and take
				// the unit over while the run still holds it: the run
				// then loses its lease, rightly. Anything else is wrong.
				t.Error(err)
			}
			done <- res
		}()
		deadline := time.Now().Add(20 * time.Second)
		for {
			u := unit(t, s, "raw.orders", days(0, 1))
			if u.Status == state.Pending && u.NotBefore != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no retry wait")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A worker whose lease clock runs an hour further each time it is read.
		w := runEngine(t, s, retryOthersSpec)
		w.opts.Now = nil // a worker judges at the real clock (bollhav worker refuses --as-of)
		var hours atomic.Int64
		w.opts.LeaseClock = func() time.Time { return time.Now().Add(time.Duration(hours.Add(1)) * time.Hour) }
		wctx, stop := context.WithCancel(context.Background())
		wdone := make(chan struct{})
		wexec := &alwaysFail{}
		go func() { _ = w.Work(wctx, wexec, WorkOptions{Poll: 50 * time.Millisecond}); close(wdone) }()
		var res *RunResult
		select {
		case res = <-done:
		case <-time.After(40 * time.Second):
			t.Fatal("run never ended")
		}
		stop()
		<-wdone
		u := unit(t, s, "raw.orders", days(0, 1))
		t.Logf("unit %s attempts %d; run execs %d, worker execs %d", u.Status, u.Attempts, runExec.n.Load(), wexec.n.Load())
		for _, tr := range res.Tasks {
			t.Logf("task %s %s failed=%d errors=%q", tr.Model, tr.Outcome(), tr.Failed, tr.Errors)
		}
		if res == nil {
			t.Fatal("the run returned no result")
		}
		if u.Status == state.Failed && taskStatus(res, "raw.orders") != "FAILED" {
			t.Errorf("the unit ended failed (by the worker) but the run's task is %s", taskStatus(res, "raw.orders"))
		}
	})
}
