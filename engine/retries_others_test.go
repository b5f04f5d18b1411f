package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
)

type alwaysFail struct{ n atomic.Int32 }

func (a *alwaysFail) Execute(context.Context, executor.UnitRun) (executor.Result, error) {
	a.n.Add(1)
	return executor.Result{}, errors.New("exit status 1: source down")
}

const retryOthersSpec = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    retry: {attempts: 2, delay: 1m, max_delay: 1m}
    run: {command: ["true"]}
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
			if err != nil {
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
		if u.Status == state.Failed && taskStatus(res, "raw.orders") != "FAILED" {
			t.Errorf("the unit ended failed (by the worker) but the run's task is %s", taskStatus(res, "raw.orders"))
		}
	})
}
