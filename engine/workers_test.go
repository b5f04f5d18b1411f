package engine

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
)

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
