package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

const oneModelSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

// repended is an engine over oneModelSpec whose first day ran, with the
// first n hours of raw.orders marked pending again: units for another
// worker to hold while a run waits for them.
func repended(t *testing.T, s state.Store, n int) *Engine {
	t.Helper()
	e := runEngine(t, s, oneModelSpec)
	if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Mark(t.Context(), "raw.orders", hours(0, n), state.Pending); err != nil || got != n {
		t.Fatalf("Mark = %d, %v; want %d units re-pended", got, err, n)
	}
	return e
}

// TestRunWaitsForUnitsHeldByOtherWorkers: a run whose units another worker
// holds waits for them instead of ending early. A unit the other worker
// fails fails the task; a unit whose worker died is run once its lease
// expires.
func TestRunWaitsForUnitsHeldByOtherWorkers(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := repended(t, s, 2)
		other := func(lease time.Duration) state.Claim {
			cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.orders"}, Worker: "other", Lease: lease, Limit: 1, Now: leaseClock()})
			if err != nil || len(cs) != 1 {
				t.Fatalf("external claim = %v, %v", cs, err)
			}
			return cs[0]
		}
		failing := other(time.Minute)      // hour 0: the other worker fails it
		_ = other(1500 * time.Millisecond) // hour 1: its worker dies

		exec := &fakeExec{}
		done := make(chan *RunResult, 1)
		go func() {
			res, err := e.Run(ctx, RunRequest{Window: firstDay(), Mode: spec.Discover}, exec, nil)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		select {
		case res := <-done:
			t.Fatalf("the run ended while units were held elsewhere: %+v", res.Tasks)
		case <-time.After(300 * time.Millisecond):
		}
		if err := s.Complete(ctx, failing, state.Outcome{Status: state.Failed, Error: "disk full", At: leaseClock()}); err != nil {
			t.Fatal(err)
		}
		var res *RunResult
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the run did not finish after the other worker's lease expired")
		}
		tr := res.Tasks[0]
		if tr.Status != graph.StatusFailed || tr.Failed != 1 || tr.Applied != 1 {
			t.Errorf("task = %s applied %d failed %d, want FAILED with the dead worker's unit applied here and the other's failure counted",
				tr.Outcome(), tr.Applied, tr.Failed)
		}
		if len(tr.Errors) != 1 || !strings.Contains(tr.Errors[0], "another worker") || !strings.Contains(tr.Errors[0], "disk full") {
			t.Errorf("errors = %q, want the other worker's failure", tr.Errors)
		}
		if got := exec.count("raw.orders"); got != 1 {
			t.Errorf("this run executed %d units, want 1 (the expired one)", got)
		}
		st := statuses(t, s, "raw.orders")
		if st[state.Applied] != 23 || st[state.Failed] != 1 {
			t.Errorf("statuses = %v, want 23 applied and 1 failed", st)
		}
	})
}

const crossSpec = `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`

// TestCrossPipelineUpstreamFailureBlocksInsteadOfWaiting: a gated upstream
// in another pipeline is settled by the contract gate. When its task fails
// in the same run, the downstream task still runs after it, and the units
// the failed hour holds back are blocked with a reason (not left pending,
// never evaluated); the other day is applied.
func TestCrossPipelineUpstreamFailureBlocksInsteadOfWaiting(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossSpec)
		w := days(0, 2)
		exec := &fakeExec{fail: func(model string, w *state.Window) error {
			if model == "raw.orders" && w.Since.Equal(t0.Add(5*time.Hour)) {
				return errors.New("boom")
			}
			return nil
		}}
		res, err := e.Run(t.Context(), RunRequest{Window: &w}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := taskStatus(res, "raw.orders"); got != "FAILED" {
			t.Errorf("raw.orders = %s, want FAILED", got)
		}
		if got := taskStatus(res, "mart.daily"); got != "SUCCESS" {
			t.Errorf("mart.daily = %s, want SUCCESS (blocked units are reported, not failures)", got)
		}
		st := statuses(t, s, "mart.daily")
		if st[state.Blocked] != 1 || st[state.Applied] != 1 {
			t.Errorf("mart.daily units %v, want day 1 blocked by the failed hour and day 2 applied", st)
		}
	})
}
