package engine

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

const contentionSpec = `models:
  - {name: raw.ticks, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.ticks, contract: encapsulate}], run: {command: ["true"]}}
  - {name: raw.other, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

// TestReliabilitySQLiteReadersDuringARun is issue 9 item 5. While a run
// writes its units into a SQLite store, the UI's reads — Status, Why,
// ScanUnits, the latest change seq, and a change feed follower — loop
// (pausing 50 ms a round: a UI refreshing at 20 Hz) on a store opened
// separately on the same file (`bollhav ui` in another process) and on the
// run's own store (the UI of `bollhav serve`). No read and no write of the
// run meets an error: no "database is locked" (SQLITE_BUSY) reaches
// anyone, and the run applies every unit, each once.
//
// "readers and a run": 21 days, 2,016 ticks and 21 days of a daily model
// gated on them, 2,037 units (-short: 3 days, 291 units; under -race, 7
// days, 679 units: the pure-Go SQLite runs them as long as the plain
// build runs 21, so the readers meet as many of the run's writes).
//
// "readers, a run and a worker process": 2 days (194 units; -short: 1 day),
// with a `bollhav worker`
// process already at work on a model of its own (raw.other) in the same
// file when the run starts, and working on through the run, so two
// processes contend for SQLite's one write lock while the readers read. No
// claim or outcome of the worker meets an error either, every execution of
// the worker is recorded applied, and it ran units during the run. (The
// worker runs a model the run does not: a worker applying units of the
// run's models between the run's plan and its apply makes the run fail
// with "the store changed since the plan was made" — ApplyPlan's check,
// reported separately.)
func TestReliabilitySQLiteReadersDuringARun(t *testing.T) {
	t.Run("readers and a run", func(t *testing.T) {
		n := 21
		switch {
		case testing.Short():
			n = 3
		case enginetest.UnderRace:
			n = 7
		}
		testSQLiteContention(t, n, false)
	})
	t.Run("readers, a run and a worker process", func(t *testing.T) {
		n := 2
		if testing.Short() {
			n = 1
		}
		testSQLiteContention(t, n, true)
	})
}

func testSQLiteContention(t *testing.T, nDays int, withWorker bool) {
	rs := openRelStore(t, "sqlite", "")
	s := rs.Store
	dir := t.TempDir()
	specPath := writeSpec(t, dir, map[string]string{"bollhav.yaml": contentionSpec,
		// The worker runs a model of its own: on the run's models, it
		// would make the run's plan stale before it is applied (see the
		// test's comment).
		"worker.yaml": "models:\n" + contentionSpec[strings.Index(contentionSpec, "  - {name: raw.other"):]})
	sp, err := spec.Load(specPath)
	must(t, err)
	now := func() time.Time { return t0.Add(30 * 24 * time.Hour) }
	e := New(s, sp, Options{SpecDir: dir, Actor: "test", Now: now})
	_, err = e.Apply(t.Context())
	must(t, err)
	ui := New(rs.open(t, ""), sp, Options{SpecDir: dir, Actor: "ui", Now: now, ReadOnly: true})
	shared := New(s, sp, Options{SpecDir: dir, Actor: "ui", Now: now, ReadOnly: true})

	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var (
		mu     sync.Mutex
		errs   []string
		rounds = map[string]int{}
	)
	report := func(who string, err error) {
		if err != nil && ctx.Err() == nil { // not the reads stop() cuts short
			mu.Lock()
			errs = append(errs, who+": "+err.Error())
			mu.Unlock()
		}
	}
	var readers sync.WaitGroup
	for name, r := range map[string]*Engine{"ui process": ui, "serve": shared} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ctx.Err() == nil; i++ {
				_, err := r.Status(ctx)
				report(name+" status", err)
				_, err = r.Why(ctx, "mart.daily", t0.Add(time.Duration(i%nDays)*24*time.Hour+time.Hour))
				report(name+" why", err)
				err = r.ScanUnits(ctx, "raw.ticks", days(i%nDays, i%nDays+1), nil, func(state.Unit) error { return nil })
				report(name+" scan", err)
				_, err = r.LatestChangeSeq(ctx)
				report(name+" seq", err)
				mu.Lock()
				rounds[name]++
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	followed := 0
	readers.Add(1)
	go func() {
		defer readers.Done()
		for range (state.Follower{Store: ui.store, Poll: 50 * time.Millisecond, OnError: func(err error) { report("follower", err) }}).Follow(ctx) {
			followed++
		}
	}()

	var w *relWorker
	log := filepath.Join(dir, "worker.log")
	win := days(0, nDays)
	if withWorker {
		g, err := state.NewGrid(t0, state.MustInterval("15m"), time.UTC)
		must(t, err)
		// Ten days more than the run's: the worker must still be at work
		// when the run starts and while it runs, however fast it is.
		_, err = s.Prefill(t.Context(), state.PrefillRequest{Model: "raw.other", Windows: g.Windows(days(0, nDays+10)), Now: now()})
		must(t, err)
		w = startRelWorker(t, "w", append(rs.workerEnv(""), relEnvSpec+"="+filepath.Join(dir, "worker.yaml"), relEnvLease+"=30s",
			relEnvWorkers+"=2", relEnvExec+"=log", relEnvLog+"="+log)...)
		eventually(t, 60*time.Second, "the worker at work", func() bool { return len(readExecLines(t, log)) >= 20 })
	}
	started := time.Now()
	// Each unit takes a few milliseconds, as a real one would: a run that
	// ends within one reader round proves nothing about reads during it.
	exec := &fakeExec{delay: 5 * time.Millisecond}
	res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.ticks", "mart.daily"}, Window: &win, Workers: 4}, exec, nil)
	ended := time.Now()
	report("run", err)
	took := ended.Sub(started)
	if w != nil {
		w.stop(t, 30*time.Second)
	}
	stop()
	readers.Wait()

	if res != nil {
		for _, tr := range res.Tasks {
			if tr.Status != graph.StatusSuccess {
				t.Errorf("task %s: %s %v", tr.Model, tr.Outcome(), tr.Errors)
			}
		}
	}
	for model, want := range map[string]int{"raw.ticks": nDays * 96, "mart.daily": nDays} {
		if c := statuses(t, s, model); c[state.Applied] != want {
			t.Errorf("%s units %v, want %d applied", model, c, want)
		}
	}
	ran := map[string]int{}
	for k, n := range exec.calls {
		ran[k] += n
	}
	eq(t, "units the run ran", len(ran), nDays*97)
	byWorker := readExecLines(t, log)
	duringRun := 0
	for _, l := range byWorker {
		ran[l.model+" "+l.window.String()]++
		if l.end > started.UnixNano() && l.start < ended.UnixNano() {
			duringRun++
		}
	}
	for k, n := range ran {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
	t.Logf("run of %d units in %s; reader rounds %v; changes followed %d; units run by the worker process %d, %d of them during the run",
		nDays*97, took.Round(time.Millisecond), rounds, followed, len(byWorker), duringRun)
	for name, n := range rounds {
		if n < 3 {
			t.Errorf("reader %s made only %d rounds during the run: too few to prove anything", name, n)
		}
	}
	if w != nil {
		// Every execution the worker finished was recorded applied.
		eq(t, "raw.other units applied by the worker", statuses(t, s, "raw.other")[state.Applied], len(byWorker))
		if duringRun == 0 {
			t.Error("the worker process ran no unit during the run: no write contention was tested")
		}
		for _, l := range strings.Split(w.stderr.String(), "\n") {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				errs = append(errs, "worker: "+l)
			}
		}
	}
	for _, e := range errs {
		if strings.Contains(e, "locked") || strings.Contains(strings.ToLower(e), "busy") {
			t.Errorf("database is locked reached the user: %s", e)
		} else {
			t.Errorf("error during the run: %s", e)
		}
	}
}
