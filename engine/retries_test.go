package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
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
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    retry: {attempts: 3, delay: 20ms, max_delay: 50ms}
    run: {command: ["true"]}
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
		spec := strings.Replace(skipSpec, "    run: {command: [\"true\"]}\n  - name: mart.daily",
			"    retry: {attempts: 2, delay: 20ms}\n    run: {command: [\"true\"]}\n  - name: mart.daily", 1)
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
  - name: raw.orders
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    retry: {attempts: 3, delay: 1s, max_delay: 1s}
    run: {command: ["true"]}
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
