package engine

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestRunRefusesAConfirmedPlanTheStoreNoLongerGives: an operator confirms a
// plan (the CLI asks for it on a torch; here a bulldozer, whose reset count
// a concurrent change moves); meanwhile units change. The run refuses, naming the
// change, before it records a run or touches a unit — no "failed" run row
// is left behind — and runs when the plan is made again.
func TestRunRefusesAConfirmedPlanTheStoreNoLongerGives(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		req := RunRequest{Models: []string{"raw.orders"}, Mode: spec.Bulldozer, Window: firstDay()}
		confirmed, err := e.Plan(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		// While the operator reads the plan, another one re-pends two hours.
		if n, err := e.Mark(t.Context(), "raw.orders", hours(0, 2), state.Pending); err != nil || n != 2 {
			t.Fatalf("mark = %d, %v", n, err)
		}
		before := statuses(t, s, "raw.orders")
		runsBefore, _ := s.Runs(t.Context(), "", 10)
		req.Confirmed = confirmed
		if _, err := e.Run(t.Context(), req, &fakeExec{}, nil); err == nil || !strings.Contains(err.Error(), "changed since the plan was made") {
			t.Fatalf("Run = %v, want the confirmed plan refused as stale", err)
		}
		runsAfter, _ := s.Runs(t.Context(), "", 10)
		if len(runsAfter) != len(runsBefore) {
			t.Errorf("the refused run left %d run row(s) behind", len(runsAfter)-len(runsBefore))
		}
		if after := statuses(t, s, "raw.orders"); after[state.Pending] != before[state.Pending] || after[state.Applied] != before[state.Applied] {
			t.Errorf("the refused run changed units: %v, then %v", before, after)
		}
		// Planned again, the run goes ahead.
		if err := runConfirmed(t, e, req); err != nil {
			t.Fatalf("the plan made again: %v", err)
		}
	})
}

// TestConfirmedTorchOnAFreshStoreRuns: the CLI confirms a torch's plan
// before the run registers the spec; that the registration is written
// first is not a change in the store, so the run goes ahead.
func TestConfirmedTorchOnAFreshStoreRuns(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if err := runConfirmed(t, e, RunRequest{Mode: spec.Torch, Window: firstDay()}); err != nil {
			t.Fatalf("fresh store torch, confirmed: %v", err)
		}
	})
}

// TestConfirmedTorchAfterAnEditRuns: the same after the model's command was
// edited (its registration changes when the run registers the spec).
func TestConfirmedTorchAfterAnEditRuns(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e2 := runEngine(t, s, strings.Replace(chainSpec, `["true"]`, `["true", "x"]`, 1))
		if err := runConfirmed(t, e2, RunRequest{Mode: spec.Torch, Window: firstDay(), Models: []string{"raw.orders"}}); err != nil {
			t.Fatalf("torch after editing the command, confirmed: %v", err)
		}
	})
}

// runConfirmed makes req's plan, confirms it as the CLI does (Confirmed)
// and runs req under it at once; it returns the run's error.
func runConfirmed(t *testing.T, e *Engine, req RunRequest) error {
	t.Helper()
	confirmed, err := e.Plan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Confirmed = confirmed
	_, err = e.Run(t.Context(), req, &fakeExec{}, nil)
	return err
}
