package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// fakeExec is an in-process executor: it records every unit it runs and
// fails or reports rows as a test tells it.
type fakeExec struct {
	mu    sync.Mutex
	calls map[string]int // "model window" → times run
	fail  func(model string, w *state.Window) error
	rows  func(model string) *int64
	delay time.Duration
}

func (f *fakeExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	key := u.Model.Name
	if u.Window != nil {
		key += " " + u.Window.String()
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[key]++
	f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(u.Model.Name, u.Window); err != nil {
			return executor.Result{}, err
		}
	}
	if f.rows != nil {
		return executor.Result{RowsWritten: f.rows(u.Model.Name)}, nil
	}
	n := int64(1)
	return executor.Result{RowsWritten: &n}, nil
}

func (f *fakeExec) count(model string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, c := range f.calls {
		if len(k) >= len(model) && k[:len(model)] == model {
			n += c
		}
	}
	return n
}

// runEngine is an engine over spec and store at a fixed clock: two days
// after 2026-01-01, so the hourly models' contract range is 48 windows.
func runEngine(t *testing.T, s state.Store, yaml string) *Engine {
	t.Helper()
	return New(s, mustParse(t, yaml), Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return t0.Add(48 * time.Hour) }})
}

const chainSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`

func firstDay() *state.Window { w := days(0, 1); return &w }

func statuses(t *testing.T, s state.Store, model string) map[state.UnitStatus]int {
	return enginetest.Statuses(t, s, model)
}

func taskStatus(r *RunResult, model string) string {
	for _, tr := range r.Tasks {
		if tr.Model == model {
			return tr.Outcome()
		}
	}
	return "absent"
}

func TestRunChainAppliesUpstreamFirst(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		exec := &fakeExec{}
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() || taskStatus(res, "raw.orders") != "SUCCESS" || taskStatus(res, "mart.daily") != "SUCCESS" {
			t.Fatalf("tasks %+v", res.Tasks)
		}
		// Execution is window-scoped: 24 hours of raw, one day of mart.
		if got := statuses(t, s, "raw.orders")[state.Applied]; got != 24 {
			t.Errorf("raw applied %d, want 24", got)
		}
		if got := statuses(t, s, "mart.daily")[state.Applied]; got != 1 {
			t.Errorf("mart applied %d, want 1 (its upstream was applied first)", got)
		}
		if exec.count("raw.orders") != 24 || exec.count("mart.daily") != 1 {
			t.Errorf("calls %v", exec.calls)
		}
		for _, tr := range res.Tasks {
			if tr.RowsWritten == nil || (tr.Model == "raw.orders" && *tr.RowsWritten != 24) {
				t.Errorf("%s rows_written %v", tr.Model, tr.RowsWritten)
			}
		}
		run, err := s.GetRun(t.Context(), res.RunID)
		if err != nil || run.Status != state.RunSucceeded {
			t.Errorf("run %+v %v", run, err)
		}
	})
}

// skipSpec is a load with a SUCCESS dependent (an explicit after: edge, on
// top of its gated upstream), an ALWAYS cleanup behind that dependent and a
// FAILURE alert on the load.
const skipSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: raw.orders, contract: encapsulate}], after: [{task: raw.orders, on: success}], run: {command: ["true"]}}
  - {name: ops.cleanup, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: mart.daily, on: always}], run: {command: ["true"]}}
  - {name: ops.alert, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: raw.orders, on: failure}], run: {command: ["true"]}}
`

// failingHour is an executor under which raw.orders fails over bad.
func failingHour(bad state.Window) *fakeExec {
	return &fakeExec{fail: func(model string, w *state.Window) error {
		if model == "raw.orders" && w.Equal(bad) {
			return errors.New("exit status 3: source unavailable")
		}
		return nil
	}}
}

// TestRunFailureSkipsSuccessDependents: a failed hour with no attempt left
// in the run is final for it, so the SUCCESS dependent is SKIPPED (and never
// runs), the ALWAYS cleanup behind it and the FAILURE alert run, and the run
// ends, failed, instead of leaving tasks waiting.
func TestRunFailureSkipsSuccessDependents(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, skipSpec)
		bad := hours(5, 6)
		exec := failingHour(bad)
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"raw.orders": "FAILED", "mart.daily": "SKIPPED", "ops.cleanup": "SUCCESS", "ops.alert": "SUCCESS"}
		for model, st := range want {
			if got := taskStatus(res, model); got != st {
				t.Errorf("%s: %s, want %s", model, got, st)
			}
		}
		if !res.Failed() {
			t.Error("a run with a failed task must report failure (exit 1)")
		}
		if c := statuses(t, s, "raw.orders"); c[state.Applied] != 23 || c[state.Failed] != 1 {
			t.Errorf("raw units %v, want 23 applied and 1 failed", c)
		}
		if exec.count("mart.daily") != 0 {
			t.Error("a SKIPPED task must not run")
		}
		if exec.count("ops.cleanup") != 1 || exec.count("ops.alert") != 1 {
			t.Errorf("cleanup ran %d, alert %d: both must run once", exec.count("ops.cleanup"), exec.count("ops.alert"))
		}
		if u := unit(t, s, "mart.daily", *firstDay()); u.Status != state.Blocked || u.BlockedReason != fmt.Sprintf("raw.orders (after SUCCESS): ended FAILED in run %d", res.RunID) {
			t.Errorf("mart's day is %s (%q): the skipped task's day is held, naming raw.orders' failure", u.Status, u.BlockedReason)
		}
		log, _ := s.TaskLog(t.Context(), res.RunID)
		byStatus := map[string]int{}
		for _, entry := range log {
			byStatus[entry.Status]++
			if entry.Status == "FAILED" && entry.Error == "" {
				t.Error("the failed task's log row keeps the error")
			}
		}
		if byStatus["FAILED"] != 1 || byStatus["SKIPPED"] != 1 || byStatus["SUCCESS"] != 2 {
			t.Errorf("task log %+v: one FAILED, one SKIPPED, two SUCCESS", log)
		}
		if run, _ := s.GetRun(t.Context(), res.RunID); run.Status != state.RunFailed {
			t.Errorf("run status %s, want failed", run.Status)
		}

		t.Run("a retry resumes the failed task and never reruns the skipped one", func(t *testing.T) {
			fixed := &fakeExec{}
			res2, err := e.Retry(t.Context(), res.RunID, fixed, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res2.Failed() || taskStatus(res2, "raw.orders") != "SUCCESS" || taskStatus(res2, "mart.daily") != "SKIPPED" {
				t.Fatalf("retry tasks %+v", res2.Tasks)
			}
			if fixed.count("raw.orders") != 1 || fixed.calls["raw.orders "+bad.String()] != 1 {
				t.Errorf("retry ran %v, want only %s of raw", fixed.calls, bad)
			}
			if fixed.count("mart.daily") != 0 || fixed.count("ops.cleanup") != 0 || fixed.count("ops.alert") != 0 {
				t.Errorf("retry ran %v: SKIPPED and SUCCESS tasks never run again", fixed.calls)
			}
			if got := res2.SkippedPending(); len(got) != 1 || got[0] != "mart.daily" {
				t.Errorf("skipped tasks with pending units %v, want mart.daily", got)
			}
			if run, _ := s.GetRun(t.Context(), res.RunID); run.Status != state.RunSucceeded {
				t.Errorf("run status after the retry %s, want succeeded", run.Status)
			}
			log, _ := s.TaskLog(t.Context(), res.RunID)
			attempts := map[int]int{}
			for _, entry := range log {
				attempts[entry.TaskID] = max(attempts[entry.TaskID], entry.Attempt)
			}
			raw, _ := s.Model(t.Context(), "", "raw.orders")
			if attempts[raw.TaskID] != 2 {
				t.Errorf("raw attempts %d, want 2", attempts[raw.TaskID])
			}
		})
	})
}

// TestRunImplicitEdgeJudgesEachWindow is the failed hour that must not stall
// every window downstream: a gated upstream in the same pipeline only orders
// the tasks, and the gate decides each window — the first day applies, the
// second is blocked naming the missing hour, in the same run, and blocked
// lists it.
func TestRunImplicitEdgeJudgesEachWindow(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - name: s.up
    pipeline: s
    chunking: {interval: 1h, start: "2026-11-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: s.down
    pipeline: s
    chunking: {interval: 1d, start: "2026-11-01T00:00:00Z"}
    upstream: [{name: s.up, contract: encapsulate}]
    run: {command: ["true"]}
`)
		nov := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
		e.opts.Now = func() time.Time { return nov(4, 0) }
		exec := &fakeExec{fail: func(model string, w *state.Window) error {
			if model == "s.up" && w.Since.Equal(nov(2, 5)) {
				return errors.New("exit status 1")
			}
			return nil
		}}
		window := state.MustWindow(nov(1, 0), nov(3, 0))
		res, err := e.Run(t.Context(), RunRequest{Window: &window}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if taskStatus(res, "s.up") != "FAILED" || taskStatus(res, "s.down") != "SUCCESS" {
			t.Fatalf("tasks %+v: the downstream task runs once its upstream's task is done, whatever its outcome", res.Tasks)
		}
		units := map[string]state.Unit{}
		_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "s.down"}, func(u state.Unit) error {
			units[u.Window.Since.Format("Jan 2")] = u
			return nil
		})
		if u := units["Nov 1"]; u.Status != state.Applied {
			t.Errorf("Nov 1 is %s, want applied: every hour it needs is there", u.Status)
		}
		u := units["Nov 2"]
		if u.Status != state.Blocked || !strings.Contains(u.BlockedReason, "s.up") || !strings.Contains(u.BlockedReason, "05:00") {
			t.Errorf("Nov 2 is %s (%q), want blocked naming s.up's missing hour", u.Status, u.BlockedReason)
		}
		blocked, err := e.Blocked(t.Context(), gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(blocked) != 1 || blocked[0].Model != "s.down" || !blocked[0].Window.Equal(state.MustWindow(nov(2, 0), nov(3, 0))) {
			t.Errorf("blocked %+v, want s.down's Nov 2", blocked)
		}
	})
}

const edgeSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: ops.alert, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: raw.orders, on: failure}], run: {command: ["true"]}}
  - {name: mart.copy, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: raw.orders, on: has_data}], run: {command: ["true"]}}
`

func TestRunFailureEdgeRunsOnlyWhenUpstreamFailed(t *testing.T) {
	for _, fails := range []bool{false, true} {
		t.Run(fmt.Sprintf("upstream fails=%v", fails), func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				e := runEngine(t, s, edgeSpec)
				exec := &fakeExec{fail: func(model string, _ *state.Window) error {
					if fails && model == "raw.orders" {
						return errors.New("boom")
					}
					return nil
				}}
				res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool]string{true: "SUCCESS", false: "SKIPPED"}[fails]
				if got := taskStatus(res, "ops.alert"); got != want {
					t.Errorf("alert %s, want %s", got, want)
				}
				if ran := exec.count("ops.alert") > 0; ran != fails {
					t.Errorf("alert ran=%v", ran)
				}
			})
		})
	}
}

func TestRunHasDataWithZeroRowsSkips(t *testing.T) {
	for _, rows := range []int64{0, 5} {
		t.Run(fmt.Sprintf("rows=%d", rows), func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				e := runEngine(t, s, edgeSpec)
				exec := &fakeExec{rows: func(string) *int64 { n := rows; return &n }}
				res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders", "mart.copy"}}, exec, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool]string{true: "SUCCESS", false: "SKIPPED"}[rows > 0]
				if got := taskStatus(res, "mart.copy"); got != want {
					t.Errorf("HAS_DATA task %s with %d rows upstream, want %s", got, rows, want)
				}
			})
		})
	}
}

func TestRunBlockedUnitIsReportedNotFailed(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		// Register, then run only the mart: raw has nothing applied.
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"mart.daily"}}, &fakeExec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() || taskStatus(res, "mart.daily") != "SUCCESS" {
			t.Fatalf("a blocked unit is not a failure: %+v", res.Tasks)
		}
		var units []state.Unit
		_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "mart.daily"}, func(u state.Unit) error { units = append(units, u); return nil })
		if len(units) != 1 || units[0].Status != state.Blocked ||
			units[0].BlockedReason != "raw.orders (ENCAPSULATE): missing [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)" {
			t.Fatalf("units %+v", units)
		}
	})
}

func TestRunHardGateErrorFailsTheUnit(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - name: raw.events
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {command: ["true"]}
  - name: mart.daily
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.events, contract: exact}]
    run: {command: ["true"]}
`)
		e.opts.AllowLintErrors = true // exact-on-flexible, run knowingly to see the gate refuse it unit by unit
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.HardErrors != 1 || !res.Failed() {
			t.Fatalf("want one hard error, got %+v", res)
		}
		if c := statuses(t, s, "mart.daily"); c[state.Failed] != 1 {
			t.Errorf("mart units %v", c)
		}
	})
}

func TestRunRefusedReadOnly(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	e := runEngine(t, s, chainSpec)
	e.opts.ReadOnly = true
	if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("want ErrReadOnly, got %v", err)
	}
	if recs, _ := s.Models(t.Context(), ""); len(recs) != 0 {
		t.Error("a refused run registers nothing")
	}
}

func TestRunFourWorkersApplyEachUnitOnce(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - name: raw.ticks
    chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: raw.flex
    chunking: {interval: 15m, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {command: ["true"]}
`)
		exec := &fakeExec{}
		w := days(0, 2)
		res, err := e.Run(t.Context(), RunRequest{Window: &w, Workers: 4}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() {
			t.Fatalf("%+v", res.Tasks)
		}
		for _, model := range []string{"raw.ticks", "raw.flex"} {
			if c := statuses(t, s, model); c[state.Applied] != 192 {
				t.Errorf("%s applied %v, want 192", model, c)
			}
		}
		for k, n := range exec.calls {
			if n != 1 {
				t.Errorf("%s ran %d times", k, n)
			}
		}
		if len(exec.calls) != 384 {
			t.Errorf("%d distinct units ran, want 384", len(exec.calls))
		}
	})
}

// The scale check: 4 workers, 10,000 units, each applied exactly
// once, on both stores. Under -race a quarter of them (2,500, still four
// workers contending for claims): the pure-Go SQLite half took 80 s of
// CI's race pass at full size; a plain go test runs all 10,000.
func TestRunFourWorkersTenThousandUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 units: skipped under -short")
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, claimAheadSpec)
		n := 10_000
		if enginetest.UnderRace {
			n = 2_500
		}
		w := hours(0, n/4) // n quarter hours
		e.opts.Now = func() time.Time { return w.Until }
		exec := &fakeExec{}
		res, err := e.Run(t.Context(), RunRequest{Window: &w, Workers: 4}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() {
			t.Fatalf("%+v", res.Tasks)
		}
		if c := statuses(t, s, "raw.ticks"); c[state.Applied] != n || len(c) != 1 && c[state.Pending]+c[state.Running]+c[state.Failed]+c[state.Blocked] != 0 {
			t.Errorf("units %v, want %d applied and nothing else", c, n)
		}
		if len(exec.calls) != n {
			t.Errorf("%d distinct units ran, want %d", len(exec.calls), n)
		}
		for k, n := range exec.calls {
			if n != 1 {
				t.Fatalf("%s ran %d times", k, n)
			}
		}
	})
}

// Re-chunking a fixed model is a migration: refused outside torch with a
// message that says so, done by torch.
func TestRunFixedGrainChangeNeedsTorch(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders"}}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		daily := runEngine(t, s, strings.Replace(chainSpec, "interval: 1h", "interval: 1d", 1))
		_, err := daily.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders"}}, &fakeExec{}, nil)
		if err == nil || !strings.Contains(err.Error(), "torch") {
			t.Fatalf("want a refusal naming torch, got %v", err)
		}
		if c := statuses(t, s, "raw.orders"); c[state.Applied] != 24 {
			t.Fatalf("the refusal changed the store: %v", c)
		}
		exec := &fakeExec{}
		res, err := daily.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders"}, Mode: spec.Torch}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() || exec.count("raw.orders") != 1 {
			t.Fatalf("torch ran %v: %+v", exec.calls, res.Tasks)
		}
		// The whole contract range (two days) is re-prefilled at 1d; only
		// the run window's day ran, the other waits for a discover run.
		if c := statuses(t, s, "raw.orders"); c[state.Applied] != 1 || c[state.Pending] != 1 {
			t.Errorf("after torch: %v, want 1 applied and 1 pending daily unit", c)
		}
		rec, err := s.Model(t.Context(), "", "raw.orders")
		if err != nil || rec.Interval != "1d" {
			t.Errorf("registered grain %q (%v), want 1d", rec.Interval, err)
		}
	})
}

// A worker that died mid-unit leaves a lease that expires; the next run takes
// the unit over, and the dead attempt counts.
func TestRunTakesOverExpiredLeases(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if _, err := e.Apply(t.Context()); err != nil {
			t.Fatal(err)
		}
		hour := hours(0, 1)
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{hour}, Now: e.now()}); err != nil {
			t.Fatal(err)
		}
		claims, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{"raw.orders"}, Worker: "dead-worker",
			Lease: time.Minute, Limit: 1, Now: e.now().Add(-10 * time.Minute)})
		if err != nil || len(claims) != 1 {
			t.Fatalf("claim %v %v", claims, err)
		}
		exec := &fakeExec{}
		res, err := e.Run(t.Context(), RunRequest{Window: &hour, Models: []string{"raw.orders"}, Mode: spec.Discover}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() || exec.calls["raw.orders "+hour.String()] != 1 {
			t.Fatalf("the expired unit did not run again: %v %+v", exec.calls, res.Tasks)
		}
		var u state.Unit
		_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.orders"}, func(x state.Unit) error { u = x; return nil })
		if u.Status != state.Applied || u.Attempts < 1 {
			t.Errorf("unit %+v: want applied, with the dead attempt counted", u)
		}
	})
}

// End to end through real commands: a load that succeeds and reports rows, one
// that fails for one chosen window, and a downstream gated on it.
func TestRunRealCommands(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - name: raw.orders
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["./load.sh", "orders"]}
  - name: mart.daily
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["./load.sh", "daily"]}
`)
		script := `#!/bin/sh
if [ "$1" = orders ] && [ "$BOLLHAV_SINCE" = "2026-01-01T03:00:00Z" ]; then
  echo "upstream API returned 503 for $BOLLHAV_SINCE" >&2
  exit 4
fi
echo "loading $BOLLHAV_MODEL [$BOLLHAV_SINCE, $BOLLHAV_UNTIL) into $BOLLHAV_TARGET"
echo rows_written=7
`
		if err := os.WriteFile(filepath.Join(e.opts.SpecDir, "load.sh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &executor.CommandExecutor{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw := res.Tasks[0]
		if raw.Model != "raw.orders" || raw.Status.String() != "FAILED" || raw.Applied != 23 || raw.Failed != 1 ||
			raw.RowsWritten == nil || *raw.RowsWritten != 23*7 {
			t.Fatalf("raw task %+v", raw)
		}
		if len(raw.Errors) != 1 || !strings.Contains(raw.Errors[0], "exit status 4") || !strings.Contains(raw.Errors[0], "503") {
			t.Errorf("raw errors %q: want the exit status and stderr's tail", raw.Errors)
		}
		// mart's one day needs the failed hour: its task runs once raw's is
		// done, and the gate blocks the day, naming raw.orders.
		if taskStatus(res, "mart.daily") != "SUCCESS" {
			t.Errorf("mart %s, want SUCCESS: a gated upstream's failure blocks windows, not the task", taskStatus(res, "mart.daily"))
		}
		var day state.Unit
		_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "mart.daily"}, func(u state.Unit) error { day = u; return nil })
		if day.Status != state.Blocked || !strings.Contains(day.BlockedReason, "raw.orders") {
			t.Errorf("mart's day %s (%q), want blocked naming raw.orders", day.Status, day.BlockedReason)
		}
		var failed state.Unit
		_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.orders", Statuses: []state.UnitStatus{state.Failed}},
			func(u state.Unit) error { failed = u; return nil })
		if !failed.Window.Equal(hours(3, 4)) || !strings.Contains(failed.Error, "503") {
			t.Errorf("failed unit %+v", failed)
		}
	})
}

// A gated upstream in another pipeline, in the same run, still runs first.
func TestRunCrossPipelineUpstreamInTheSameRunRunsFirst(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, strings.Replace(chainSpec, "{name: raw.orders, pipeline: shop,", "{name: raw.orders, pipeline: ingest,", 1))
		if e.spec.Model("raw.orders").Pipeline != "ingest" {
			t.Fatal("test setup: raw.orders must be in another pipeline")
		}
		exec := &fakeExec{delay: time.Millisecond}
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() || statuses(t, s, "mart.daily")[state.Applied] != 1 {
			t.Fatalf("mart must run after its cross-pipeline upstream: %+v, units %v", res.Tasks, statuses(t, s, "mart.daily"))
		}
	})
}

func TestRetryGuards(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	e := runEngine(t, s, chainSpec)
	bad := &fakeExec{fail: func(string, *state.Window) error { return errors.New("boom") }}
	res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders"}}, bad, nil)
	if err != nil || !res.Failed() {
		t.Fatalf("setup: %v %+v", err, res)
	}
	t.Run("another environment's run is refused", func(t *testing.T) {
		dev := runEngine(t, s, chainSpec)
		dev.opts.Env = spec.Env{Suffix: "pr1"}
		if _, err := dev.Retry(t.Context(), res.RunID, &fakeExec{}, 1, nil); err == nil || !strings.Contains(err.Error(), "environment") {
			t.Fatalf("want a refusal naming the environment, got %v", err)
		}
	})
	t.Run("a run stopped before any task ran is refused", func(t *testing.T) {
		id, err := s.CreateRun(t.Context(), state.Run{StateMode: "bulldozer", Status: state.RunRunning, StartedAt: e.now()})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.FinishRun(t.Context(), id, state.RunFailed, e.now())
		if _, err := e.Retry(t.Context(), id, &fakeExec{}, 1, nil); err == nil || !strings.Contains(err.Error(), "new run") {
			t.Fatalf("want a refusal, got %v", err)
		}
	})
}

// Progress reports arrive before Run returns, the last one per task Done.
func TestRunProgressEndsWithDone(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	e := runEngine(t, s, chainSpec)
	var mu sync.Mutex
	last := map[string]Progress{}
	res, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Workers: 4}, &fakeExec{}, func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := last[p.Model]; ok && prev.Done {
			t.Errorf("%s: a report after Done: %+v", p.Model, p)
		}
		last[p.Model] = p
	})
	if err != nil || res.Failed() {
		t.Fatal(err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if p := last["raw.orders"]; !p.Done || p.Applied != 24 || p.Total != 24 {
		t.Errorf("raw's last report %+v", p)
	}
}

// TestClock pins what the front ends read ages and gates by: the set clock,
// in UTC, or the wall clock when none is set.
func TestClock(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	e := New(nil, nil, Options{Now: func() time.Time { return at }})
	if got := e.Clock(); !got.Equal(at) || got.Location() != time.UTC {
		t.Errorf("Clock() with Now set = %v, want %v in UTC", got, at)
	}
	before := time.Now()
	got := New(nil, nil, Options{}).Clock()
	if got.Before(before) || got.After(time.Now()) || got.Location() != time.UTC {
		t.Errorf("Clock() without Now = %v, want the wall clock in UTC", got)
	}
}

func TestResolveRunSettingsFlagsWinOverEnvironment(t *testing.T) {
	env := map[string]string{"STATE_MODE": "torch", "INTERVAL_OVERRIDE": "1d", "SCHEMA_SUFFIX": "pr7"}
	getenv := func(k string) string { return env[k] }

	mode, iv, e, err := ResolveRunSettings(RunFlags{}, getenv)
	if err != nil || mode != spec.Torch || iv == nil || iv.String() != "1d" || e.Suffix != "pr7" {
		t.Fatalf("from the environment: %v %v %v %v", mode, iv, e, err)
	}
	mode, iv, e, err = ResolveRunSettings(RunFlags{Mode: "discover", IntervalOverride: "6h", Env: "", EnvGiven: true}, getenv)
	if err != nil || mode != spec.Discover || iv.String() != "6h" || e.Suffix != "" {
		t.Fatalf("flags win (--env '' means prod): %v %v %v %v", mode, iv, e, err)
	}
	mode, iv, e, err = ResolveRunSettings(RunFlags{}, func(string) string { return "" })
	if err != nil || mode != spec.Bulldozer || iv != nil || e.Suffix != "" {
		t.Fatalf("defaults: %v %v %v %v", mode, iv, e, err)
	}
}

func TestResolveRunSettingsNamesTheBadSource(t *testing.T) {
	cases := []struct {
		flags RunFlags
		env   map[string]string
		want  string
	}{
		{RunFlags{}, map[string]string{"STATE_MODE": "nuke"}, "environment variable STATE_MODE"},
		{RunFlags{Mode: "nuke"}, nil, "--mode"},
		{RunFlags{}, map[string]string{"INTERVAL_OVERRIDE": "1x"}, "environment variable INTERVAL_OVERRIDE"},
		{RunFlags{IntervalOverride: "0h"}, nil, "--interval-override"},
		{RunFlags{}, map[string]string{"SCHEMA_SUFFIX": `x"; DROP TABLE y; --`}, "environment variable SCHEMA_SUFFIX"},
		{RunFlags{Env: "a-b", EnvGiven: true}, nil, "--env"},
	}
	for _, c := range cases {
		_, _, _, err := ResolveRunSettings(c.flags, func(k string) string { return c.env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v %v: got %v, want an error starting %q", c.flags, c.env, err, c.want)
		}
	}
}

// heldExec runs no unit until released, counting the units it holds.
type heldExec struct {
	started atomic.Int32
	release chan struct{}
}

func (h *heldExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	h.started.Add(1)
	select {
	case <-h.release:
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
	return executor.Result{}, nil
}

// A run over a wave of 40 models on PostgreSQL — every task running at
// once — listens for other workers' changes on one connection, not one a
// task: 40 LISTEN connections were 40 of the server's 100.
func TestRunListensOnceForAWholeWave(t *testing.T) {
	s := enginetest.Open(t, enginetest.Postgres)
	schema := s.(interface{ Schema() string }).Schema()
	var b strings.Builder
	b.WriteString("models:\n")
	const models = 40
	for i := range models {
		fmt.Fprintf(&b, "  - name: raw.m%02d\n    pipeline: p\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n", i)
	}
	e := runEngine(t, s, b.String())
	exec := &heldExec{release: make(chan struct{})}
	w := hours(0, 1)
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(t.Context(), RunRequest{Window: &w}, exec, nil)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a speed
	for exec.started.Load() < models {
		if time.Now().After(deadline) {
			close(exec.release)
			t.Fatalf("only %d of %d tasks started", exec.started.Load(), models)
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := pgx.Connect(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var listening int
	err = conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE '%' || $1 || '%'`, schema).Scan(&listening)
	close(exec.release)
	if err != nil {
		t.Fatal(err)
	}
	if listening != 1 {
		t.Errorf("%d LISTEN connections on the schema's channel while %d tasks run, want 1 for the run", listening, models)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := statuses(t, s, "raw.m00"); c[state.Applied] != 1 {
		t.Errorf("raw.m00 %v, want its hour applied", c)
	}
}
