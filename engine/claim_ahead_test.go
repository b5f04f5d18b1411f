package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
)

// claimAheadSpec is one quarter-hourly command model without upstreams:
// many small units, for the tests of how workers take them.
const claimAheadSpec = `models:
  - {name: raw.ticks, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

// stopAt is an instant executor that calls stop during its n-th execution;
// with interrupt set, that execution then waits for its context to end and
// fails with its error, as an executor interrupted by a cancelled run does.
type stopAt struct {
	n         int
	stop      context.CancelFunc
	interrupt bool

	mu    sync.Mutex
	count int
	calls map[string]int
}

func (x *stopAt) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	x.mu.Lock()
	x.count++
	k := x.count
	if x.calls == nil {
		x.calls = map[string]int{}
	}
	x.calls[u.Window.String()]++
	x.mu.Unlock()
	if k == x.n {
		x.stop()
		if x.interrupt {
			<-ctx.Done()
			return executor.Result{}, ctx.Err()
		}
	}
	return executor.Result{}, nil
}

// transitions counts the change feed's unit transitions of model by
// "from>to".
func transitions(t *testing.T, s state.Store, model string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, c := range changesSince(t, s, 0) {
		if c.Model == model {
			out[string(c.From)+">"+string(c.To)] += c.Count
		}
	}
	return out
}

// unitsByStatus checks that every unit of model has the attempts its status
// implies after one pass with no failures — 1 when applied, 0 when pending
// (released unrun or interrupted: neither is an attempt) — and that no unit
// is in another status; it returns the counts.
func unitsByStatus(t *testing.T, s state.Store, model string) map[state.UnitStatus]int {
	t.Helper()
	got := map[state.UnitStatus]int{}
	err := s.ScanUnits(t.Context(), state.UnitQuery{Model: model}, func(u state.Unit) error {
		got[u.Status]++
		switch {
		case u.Status == state.Applied && u.Attempts == 1, u.Status == state.Pending && u.Attempts == 0:
		default:
			t.Errorf("unit %s is %s after %d attempt(s)", u.Window, u.Status, u.Attempts)
		}
		return nil
	})
	must(t, err)
	return got
}

// A run cancelled while its worker holds units claimed ahead gives every one
// of them back: the one interrupted mid-work and the ones never started go
// to pending without an attempt counted, none is left running, and only the
// units that finished before the cancellation are applied.
func TestRunCancelledReleasesUnitsClaimedAhead(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, claimAheadSpec)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		x := &stopAt{n: 10, stop: cancel, interrupt: true}
		w := days(0, 2) // 192 quarter hours
		res, _ := e.Run(ctx, RunRequest{Window: &w, Workers: 1}, x, nil)
		if res == nil || !res.Failed() {
			t.Fatalf("a cancelled run: %+v, want it failed", res)
		}
		moves := checkClaimedAheadReleased(t, s, x, 9)
		eq(t, "units applied", moves["running>applied"], 9)
	})
}

// TestWorkStopReleasesUnitsClaimedAhead: a worker told to stop (SIGTERM)
// finishes the unit it is running and hands back the units it claimed
// ahead and never started — pending at once, no attempt counted, for
// another worker to take — instead of running them all first. Every unit
// runs at most once and none is left running.
func TestWorkStopReleasesUnitsClaimedAhead(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := workerWorld(t, s)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		x := &stopAt{n: 10, stop: cancel}
		must(t, e.Work(ctx, x, WorkOptions{Workers: 1, Poll: 20 * time.Millisecond}))
		checkClaimedAheadReleased(t, s, x, 10)
		var attempts int
		_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.ticks", Statuses: []state.UnitStatus{state.Pending}}, func(u state.Unit) error {
			attempts += u.Attempts
			return nil
		})
		eq(t, "attempts counted on released units", attempts, 0)
	})
}

// gateExec runs the first fast units at once, then blocks the next one
// until release is closed, so the loop has claimed ahead while it waits.
type gateExec struct {
	fast    int
	release chan struct{}
	blocked chan struct{}
	once    sync.Once
	mu      sync.Mutex
	ran     int
	// slow is the window of the unit it blocks on, set before blocked
	// is closed.
	slow state.Window
}

func (g *gateExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	g.mu.Lock()
	g.ran++
	n := g.ran
	g.mu.Unlock()
	if n > g.fast {
		g.once.Do(func() {
			if u.Window != nil {
				g.slow = *u.Window
			}
			close(g.blocked)
		})
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return executor.Result{}, nil
}

// TestUnitsClaimedAheadHoldShortLeases: what a worker killed outright
// leaves behind is what it held, until the leases expire. Units claimed
// ahead are leased for claimAheadLease (renewed like any lease), not the
// two-minute default, so a SIGKILL strands them for seconds, not minutes.
// The one unit executing is exempt: it may have been claimed for the idle
// worker rather than ahead of it.
func TestUnitsClaimedAheadHoldShortLeases(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := workerWorld(t, s)
		x, cancel, done := startGatedWorker(t, e)
		defer func() {
			cancel()
			close(x.release)
			must(t, <-done)
		}()
		select {
		case <-x.blocked:
		case <-time.After(30 * time.Second):
			t.Fatal("the worker never reached its slow unit")
		}
		time.Sleep(200 * time.Millisecond)
		var held []state.Unit
		must(t, s.ScanUnits(t.Context(), state.UnitQuery{Model: "raw.ticks", Statuses: []state.UnitStatus{state.Running}},
			func(u state.Unit) error { held = append(held, u); return nil }))
		if len(held) < 2 {
			t.Fatalf("%d units held: the worker claimed nothing ahead, so this test shows nothing", len(held))
		}
		limit := leaseClock().Add(claimAheadLease + 5*time.Second)
		for _, u := range held {
			// The unit executing may have been claimed for the idle
			// worker, not ahead of it, with the normal lease: on a loaded
			// machine the pace of the first units says "slow", and the
			// loop claims only for its one worker until it learns better.
			if u.Window.Equal(x.slow) {
				continue
			}
			if u.LeaseUntil == nil || u.LeaseUntil.After(limit) {
				t.Errorf("unit %s leased until %v, past %v: claimed ahead under the long lease", u.Window, u.LeaseUntil, limit)
			}
		}
	})
}

// workerWorld is an engine over claimAheadSpec with two days of raw.ticks'
// quarter hours registered and pending: work for a worker.
func workerWorld(t *testing.T, s state.Store) *Engine {
	t.Helper()
	e := runEngine(t, s, claimAheadSpec)
	_, err := e.Apply(t.Context())
	must(t, err)
	g, err := state.NewGrid(t0, state.MustInterval("15m"), time.UTC)
	must(t, err)
	_, err = s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.ticks", Windows: g.Windows(days(0, 2)), Now: e.now()})
	must(t, err)
	return e
}

// startGatedWorker starts e.Work with one slot over a gateExec that runs 20
// units fast and then blocks, so the worker has claimed ahead while it
// waits; cancel stops the worker, done has its result.
func startGatedWorker(t *testing.T, e *Engine) (x *gateExec, cancel context.CancelFunc, done chan error) {
	t.Helper()
	x = &gateExec{fast: 20, release: make(chan struct{}), blocked: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	done = make(chan error, 1)
	go func() { done <- e.Work(ctx, x, WorkOptions{Workers: 1, Poll: 20 * time.Millisecond}) }()
	return x, cancel, done
}

// A worker count past MaxWorkers is refused by every door that starts
// workers — Plan (so run), Run, Retry and Work — with an error that names
// the ceiling, before anything is recorded; MaxWorkers itself is taken.
func TestWorkersPastTheCeilingAreRefused(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		refused := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrWorkers) || !strings.Contains(err.Error(), "1024") || !strings.Contains(err.Error(), "10000000") {
				t.Errorf("%s with 10,000,000 workers: %v; want ErrWorkers naming the count and the ceiling 1024", what, err)
			}
		}
		hour := firstDay()
		_, err := e.Plan(t.Context(), RunRequest{Window: hour, Workers: 10_000_000})
		refused("plan", err)
		_, err = e.Run(t.Context(), RunRequest{Window: hour, Workers: 10_000_000}, &fakeExec{}, nil)
		refused("run", err)
		_, err = e.Retry(t.Context(), 1, &fakeExec{}, 10_000_000, nil)
		refused("retry", err)
		refused("work", e.Work(t.Context(), &fakeExec{}, WorkOptions{Workers: 10_000_000}))
		if _, err := e.Plan(t.Context(), RunRequest{Window: hour, Workers: -1}); !errors.Is(err, ErrWorkers) {
			t.Errorf("plan with -1 workers: %v, want ErrWorkers", err)
		}
		runs, err := s.Runs(t.Context(), "", 10)
		if err != nil || len(runs) != 0 {
			t.Errorf("runs after the refusals: %d, %v; want none", len(runs), err)
		}
		if n := statuses(t, s, "raw.orders")[state.Applied]; n != 0 {
			t.Errorf("%d raw.orders units applied after the refusals, want 0", n)
		}
		if _, err := e.Plan(t.Context(), RunRequest{Window: hour, Workers: MaxWorkers}); err != nil {
			t.Errorf("plan with MaxWorkers: %v", err)
		}
	})
}

// goroutineCounter is an executor that notes how many goroutines the
// process has while it runs a unit.
type goroutineCounter struct {
	mu  sync.Mutex
	max int
}

func (g *goroutineCounter) Execute(_ context.Context, _ executor.UnitRun) (executor.Result, error) {
	n := runtime.NumGoroutine()
	g.mu.Lock()
	g.max = max(g.max, n)
	g.mu.Unlock()
	one := int64(1)
	return executor.Result{RowsWritten: &one}, nil
}

// A run starts a worker for a unit it has to run, never more than there
// are units: one hour with --workers 1024 runs with about the goroutines
// one worker needs, where starting every worker up front added 1,023.
func TestARunStartsNoMoreWorkersThanUnits(t *testing.T) {
	s := enginetest.Open(t, "sqlite")
	e := runEngine(t, s, chainSpec)
	one, many := &goroutineCounter{}, &goroutineCounter{}
	for i, c := range []struct {
		exec    *goroutineCounter
		workers int
	}{{one, 1}, {many, MaxWorkers}} {
		hour := &state.Window{Since: t0.Add(time.Duration(i) * time.Hour), Until: t0.Add(time.Duration(i+1) * time.Hour)}
		res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: hour, Workers: c.workers}, c.exec, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run with %d workers: %v %+v", c.workers, err, res)
		}
	}
	if one.max == 0 || many.max == 0 {
		t.Fatal("the units did not run")
	}
	if extra := many.max - one.max; extra > 50 {
		t.Errorf("one unit with %d workers ran beside %d goroutines, with 1 worker beside %d: %d more", MaxWorkers, many.max, one.max, extra)
	}
}

// checkClaimedAheadReleased checks raw.ticks' 192 quarter hours after an
// executor stopped at its 10th execution: each unit ran at most once,
// applied of them are applied and the rest pending, and every unit claimed
// beyond those was handed back (running>pending). A run that never
// claimed ahead fails it, since then there was nothing to hand back and
// the test shows nothing. It returns the transitions counted.
func checkClaimedAheadReleased(t *testing.T, s state.Store, x *stopAt, applied int) map[string]int {
	t.Helper()
	eq(t, "executions", x.count, 10)
	for k, n := range x.calls {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
	got := unitsByStatus(t, s, "raw.ticks")
	eq(t, "units", fmt.Sprint(got), fmt.Sprint(map[state.UnitStatus]int{state.Applied: applied, state.Pending: 192 - applied}))
	moves := transitions(t, s, "raw.ticks")
	claimed := moves["pending>running"]
	if claimed <= x.count {
		t.Fatalf("%d units claimed for %d executions: nothing was claimed ahead, so this test shows nothing", claimed, x.count)
	}
	eq(t, "units handed back (claimed ahead, never applied)", moves["running>pending"], claimed-applied)
	return moves
}

// heldCounter is an executor that, at each unit, counts the units the
// store holds running — claimed, by any task, ahead of its workers or not
// — and the run's tasks in progress, and keeps the most of each it saw.
type heldCounter struct {
	s          state.Store
	mu         sync.Mutex
	most, busy int
	ran        int
}

func (h *heldCounter) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	counts, err := h.s.StatusCounts(ctx, "")
	if err != nil {
		return executor.Result{}, err
	}
	running := 0
	for _, c := range counts {
		running += c.Counts[state.Running]
	}
	log, err := h.s.TaskLog(ctx, u.RunID)
	if err != nil {
		return executor.Result{}, err
	}
	busy := 0
	for _, l := range log {
		if l.Status == "IN_PROGRESS" {
			busy++
		}
	}
	time.Sleep(time.Millisecond) // long enough for the other tasks to claim
	h.mu.Lock()
	defer h.mu.Unlock()
	h.most, h.busy, h.ran = max(h.most, running), max(h.busy, busy), h.ran+1
	one := int64(1)
	return executor.Result{RowsWritten: &one}, nil
}

// A run holds no more units at once than a process runs (the ceiling,
// lowered here to 4), however many of its tasks are ready and however far
// they would claim ahead: six independent tasks of twelve fast units each
// start four at a time (one worker each), and share the four units between
// them. Starting every ready task, each claiming ahead, a run of a
// 60,000-model spec held 11,000 units and 16,000 goroutines (issue 35).
func TestARunHoldsNoMoreUnitsThanTheCeiling(t *testing.T) {
	was := unitsAtOnce
	unitsAtOnce = 4
	t.Cleanup(func() { unitsAtOnce = was })
	var yaml strings.Builder
	yaml.WriteString("models:\n")
	for i := range 6 {
		fmt.Fprintf(&yaml, "  - name: raw.m%d\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n", i)
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, yaml.String())
		h := &heldCounter{s: s}
		w := &state.Window{Since: t0, Until: t0.Add(12 * time.Hour)}
		res, err := e.Run(t.Context(), RunRequest{Window: w}, h, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run: %v %+v", err, res)
		}
		if h.ran != 72 {
			t.Fatalf("ran %d units, want 72", h.ran)
		}
		if h.most > 4 {
			t.Errorf("the run held %d units at once, over the ceiling of 4", h.most)
		}
		if h.busy > 4 {
			t.Errorf("%d tasks were in progress at once; with one worker each, at most 4 fit under the ceiling", h.busy)
		}
		if h.most < 2 {
			t.Errorf("the run held at most %d unit at once: its tasks never ran side by side, so the bound was not tried", h.most)
		}
	})
}
