package engine

import (
	"errors"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// crossChainSpec: mart.daily (its own pipeline) gated ENCAPSULATE on the
// hourly raw.orders of another: in one run it waits for raw.orders' task
// whatever its outcome, and a failed hour leaves its day blocked.
const crossChainSpec = `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, pipeline: mart, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`

// failHour fails raw.orders' hour bad and runs everything else.
func failHour(bad state.Window) *fakeExec {
	return &fakeExec{fail: func(model string, w *state.Window) error {
		if model == "raw.orders" && w.Equal(bad) {
			return errors.New("exit status 1: source down")
		}
		return nil
	}}
}

// TestARepairReleasesWhatItFixed (issue 32 §5): raw.orders' hour 05 fails,
// so the run leaves mart.daily's day blocked ("missing 05"). A retry reruns
// only the failed task; once the hour is applied the day's stored reason no
// longer holds, so the retry rewrites it — released, the next run applies
// it — and says so, instead of leaving "missing 05" until someone runs a
// discover. The discover run the summary names applies it.
func TestARepairReleasesWhatItFixed(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossChainSpec)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, failHour(hours(5, 6)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if u := unit(t, s, "mart.daily", *firstDay()); u.Status != state.Blocked || gate.IsReleased(u.BlockedReason) || len(res.Released) != 0 {
			t.Fatalf("after the failing run mart.daily's day is %s %q, released %v: want blocked on the hour, nothing released", u.Status, u.BlockedReason, res.Released)
		}
		res2, err := e.Retry(t.Context(), res.RunID, &fakeExec{}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := unit(t, s, "mart.daily", *firstDay())
		if u.Status != state.Blocked || u.BlockedReason != gate.ReleasedReason(res.RunID) {
			t.Errorf("after the repair mart.daily's day is %s %q: want blocked with %q", u.Status, u.BlockedReason, gate.ReleasedReason(res.RunID))
		}
		models, span, n := res2.ReleasedRun()
		if n != 1 || len(models) != 1 || models[0] != "mart.daily" || !span.Equal(*firstDay()) {
			t.Errorf("the retry released %+v, want mart.daily's one day", res2.Released)
		}
		// A second re-judge finds nothing new: a released unit is not
		// released again.
		if again, err := e.gates().CaughtUp(t.Context(), []string{"raw.orders"}); err != nil || len(again) != 0 {
			t.Errorf("caught up again: %v, %v; want none", again, err)
		}
		if _, err := e.Run(t.Context(), RunRequest{Models: models, Window: &span, Mode: "discover"}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		if u := unit(t, s, "mart.daily", *firstDay()); u.Status != state.Applied {
			t.Errorf("after the discover run mart.daily's day is %s, want applied", u.Status)
		}
	})
}

// TestARepairWithDownstreamRunsWhatItReleased: the same failure; a rerun of
// the failed hour alone releases the day behind it, and a rerun with
// Downstream applies it in the same command, whether the plan reaches it or
// the run releases it and runs it next (Then).
func TestARepairWithDownstreamRunsWhatItReleased(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, crossChainSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, failHour(hours(5, 6)), nil); err != nil {
			t.Fatal(err)
		}
		// Without Downstream, a rerun of the hour alone releases the day.
		hour := hours(5, 6)
		res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: &hour}, &fakeExec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, n := res.ReleasedRun(); n != 1 || len(res.Then) != 0 {
			t.Fatalf("the hour's rerun released %d units (then %v), want the day, not run", n, res.Then)
		}
		// With Downstream (over the day: the daily model's grid), the day
		// is applied in the same command.
		res, err = e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: firstDay(), Downstream: true}, &fakeExec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.FailedThen() {
			t.Fatalf("the repair failed: %+v", res)
		}
		if u := unit(t, s, "mart.daily", *firstDay()); u.Status != state.Applied {
			t.Errorf("after the repair with downstream mart.daily's day is %s %q, want applied in the same command (released %v, then %v)",
				u.Status, u.BlockedReason, res.Released, res.Then)
		}
	})
}
