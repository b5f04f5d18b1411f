package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// perWindowSpec: pipeline y copies x.a's days once x.a succeeded over them.
const perWindowSpec = `models:
  - {name: x.a, pipeline: x, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: y.copy, pipeline: y, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: x.a, on: success}], run: {command: ["true"]}}
`

// unitsOf lists a model's units as "window status reason", in window order.
func unitsOf(t *testing.T, s state.Store, model string) []string {
	t.Helper()
	var out []string
	err := s.ScanUnits(t.Context(), state.UnitQuery{Model: model}, func(u state.Unit) error {
		out = append(out, fmt.Sprintf("%s %s %s", u.Window, u.Status, u.BlockedReason))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCrossPipelineAfterEdgeIsJudgedPerWindowWithOrWithoutARunWindow: x.a
// ran over two of six days; a run of pipeline y applies exactly those two
// days and holds the other four, each naming its window — whether the run
// has no window (discover up to today) or one over all six days. Before,
// a run without a window took x.a's newest run and applied every day.
func TestCrossPipelineAfterEdgeIsJudgedPerWindowWithOrWithoutARunWindow(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		now := func() time.Time { return t0.Add(6 * 24 * time.Hour) }
		e := New(s, mustParse(t, perWindowSpec), Options{SpecDir: t.TempDir(), Actor: "test", Now: now})
		two := days(0, 2)
		if _, err := e.Run(t.Context(), RunRequest{Models: []string{"x.a"}, Window: &two}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		var want []string
		for d := range 6 {
			w := days(d, d+1)
			if d < 2 {
				want = append(want, fmt.Sprintf("%s applied ", w))
			} else {
				want = append(want, fmt.Sprintf("%s blocked x.a (after SUCCESS): has not run over %s", w, w))
			}
		}
		for _, tc := range []struct {
			name   string
			window *state.Window
		}{{"no window", nil}, {"a window over six days", func() *state.Window { w := days(0, 6); return &w }()}} {
			exec := &fakeExec{}
			res, err := e.Run(t.Context(), RunRequest{Pipeline: "y", Window: tc.window, Mode: "discover"}, exec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := unitsOf(t, s, "y.copy"); !slices.Equal(got, want) {
				t.Errorf("%s: y.copy's units\n%v\nwant\n%v", tc.name, got, want)
			}
			if res.Failed() || taskStatus(res, "y.copy") != "SUCCESS" {
				t.Errorf("%s: y.copy %s, failed %v: held windows are not failures", tc.name, taskStatus(res, "y.copy"), res.Failed())
			}
			if exec.count("y.copy") > 2 {
				t.Errorf("%s: y.copy ran %d units, want at most the 2 days x.a ran over", tc.name, exec.count("y.copy"))
			}
		}
	})
}

// skipSpecAfter: p.on_success waits on p.a's success, p.alert on its
// failure.
const skipSpecAfter = `models:
  - {name: p.a, pipeline: p, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: p.on_success, pipeline: p, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: p.a, on: success}], run: {command: ["true"]}}
`

// TestASkippedTaskHoldsItsUnitsWithTheReasonEverywhere: p.a fails one of
// two days for good, so p.on_success is SKIPPED (seed 002). Its days are
// held in the store with the edge, the upstream and the run; `blocked`
// lists them, `why` traces them to p.a's failed day, the incident of p.a
// counts them and the live gate calls them waiting, not released. Once a
// retry fixes p.a they are released everywhere, and the retry's summary
// names the task to pick them up.
func TestASkippedTaskHoldsItsUnitsWithTheReasonEverywhere(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, skipSpecAfter)
		ctx := t.Context()
		failing := &fakeExec{fail: func(model string, w *state.Window) error {
			if model == "p.a" && w.Equal(days(1, 2)) {
				return errors.New("exit status 1: source down")
			}
			return nil
		}}
		two := days(0, 2)
		res, err := e.Run(ctx, RunRequest{Window: &two}, failing, nil)
		if err != nil {
			t.Fatal(err)
		}
		reason := fmt.Sprintf("p.a (after SUCCESS): ended FAILED in run %d", res.RunID)
		if taskStatus(res, "p.on_success") != "SKIPPED" || failing.count("p.on_success") != 0 {
			t.Fatalf("p.on_success %s, ran %d: want SKIPPED, never run", taskStatus(res, "p.on_success"), failing.count("p.on_success"))
		}
		want := []string{fmt.Sprintf("%s blocked %s", days(0, 1), reason), fmt.Sprintf("%s blocked %s", days(1, 2), reason)}
		if got := unitsOf(t, s, "p.on_success"); !slices.Equal(got, want) {
			t.Errorf("p.on_success's units %v, want %v", got, want)
		}
		if got := res.SkippedPending(); !slices.Equal(got, []string{"p.on_success"}) {
			t.Errorf("skipped tasks to pick up %v, want p.on_success", got)
		}

		blocked, err := e.Blocked(ctx, gate.BlockedFilter{})
		if err != nil || len(blocked) != 2 || blocked[0].Reason != reason {
			t.Errorf("blocked %+v %v: want both days with %q", blocked, err, reason)
		}
		why, err := e.Why(ctx, "p.on_success", t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		last := why.RootCause[len(why.RootCause)-1]
		if why.Satisfied || !why.AfterHeld || len(why.After) != 1 || why.After[0].Outcome != "FAILED" || why.After[0].Run != res.RunID ||
			last.Model != "p.a" || last.Status != state.Failed || !last.Window.Equal(days(1, 2)) {
			t.Errorf("why: satisfied %v, held %v, after %+v, root %+v: want held by p.a's FAILED in run %d, root p.a's failed day",
				why.Satisfied, why.AfterHeld, why.After, last, res.RunID)
		}
		rep, err := e.Incidents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Incidents) != 1 || rep.Incidents[0].Model != "p.a" || rep.Incidents[0].Blocked != 2 ||
			!slices.Equal(rep.Incidents[0].BlockedModels, []string{"p.on_success"}) {
			t.Errorf("incidents %+v: want one, p.a's failure, holding p.on_success's 2 days", rep.Incidents)
		}
		live, err := e.LiveGate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lr, _ := live.Report(gate.BlockedFilter{Model: "p.on_success"})
		if len(lr.Models) != 1 || lr.Models[0].Waiting != 2 || lr.Models[0].Released != 0 {
			t.Errorf("live gate %+v: want p.on_success's 2 days waiting, none released", lr.Models)
		}

		// The fix: a retry reruns p.a's failed day; the held days are
		// released (the next run applies them), and the retry says which
		// task picks them up.
		fixed := &fakeExec{}
		res2, err := e.Retry(ctx, res.RunID, fixed, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res2.SkippedPending(); !slices.Equal(got, []string{"p.on_success"}) {
			t.Errorf("after the retry, skipped tasks to pick up %v, want p.on_success", got)
		}
		why, err = e.Why(ctx, "p.on_success", t0.Add(time.Hour))
		if err != nil || !why.Satisfied || why.AfterHeld {
			t.Errorf("after the fix, why: satisfied %v, held %v (%v): want released", why.Satisfied, why.AfterHeld, err)
		}
		rep, err = e.Incidents(ctx)
		if err != nil || len(rep.Incidents) != 1 || rep.Incidents[0].Kind != gate.IncidentReleased || rep.Incidents[0].Model != "p.on_success" {
			t.Errorf("after the fix, incidents %+v %v: want p.on_success released", rep.Incidents, err)
		}
		live, err = e.LiveGate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lr, _ = live.Report(gate.BlockedFilter{Model: "p.on_success"})
		if len(lr.Models) != 1 || lr.Models[0].Released != 2 {
			t.Errorf("after the fix, live gate %+v: want p.on_success's 2 days released", lr.Models)
		}
		if _, err := e.Run(ctx, RunRequest{Models: []string{"p.on_success"}, Window: &two, Mode: "discover"}, fixed, nil); err != nil {
			t.Fatal(err)
		}
		if c := statuses(t, s, "p.on_success"); c[state.Applied] != 2 {
			t.Errorf("after the discover run p.on_success is %v, want both days applied", c)
		}
	})
}

// TestAnAlertThatDidNotFireIsHeldButIsNoIncident: on a good day a FAILURE
// edge's task is SKIPPED; its units are held saying so, but nothing is
// broken: no incident, and the summary gives no command to run it.
func TestAnAlertThatDidNotFireIsHeldButIsNoIncident(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - {name: p.a, pipeline: p, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - name: p.alert
    pipeline: p
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    after: [{task: p.a, on: failure}]
    run: {command: ["true"]}
`)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if taskStatus(res, "p.alert") != "SKIPPED" || len(res.SkippedPending()) != 0 {
			t.Errorf("p.alert %s, to pick up %v: want SKIPPED and nothing to pick up", taskStatus(res, "p.alert"), res.SkippedPending())
		}
		want := fmt.Sprintf("p.a (after FAILURE): ended SUCCESS in run %d", res.RunID)
		if u := unit(t, s, "p.alert", *firstDay()); u.Status != state.Blocked || u.BlockedReason != want {
			t.Errorf("p.alert's day %s %q, want held with %q", u.Status, u.BlockedReason, want)
		}
		rep, err := e.Incidents(t.Context())
		if err != nil || len(rep.Incidents) != 0 || rep.Untraced != 0 {
			t.Errorf("incidents %+v (untraced %d) %v: an alert that did not fire is no incident", rep.Incidents, rep.Untraced, err)
		}
	})
}
