package engine

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// auditSince is the audit entries written after the first n, oldest first.
func auditSince(t *testing.T, s state.Store, n int) []state.AuditEntry {
	t.Helper()
	log, err := s.AuditLog(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []state.AuditEntry
	for i := len(log) - n - 1; i >= 0; i-- { // AuditLog is newest first
		out = append(out, log[i])
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func auditCount(t *testing.T, s state.Store) int {
	t.Helper()
	log, err := s.AuditLog(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

// TestEveryRunIsAuditedOnce: a discover run, which changes no unit before
// it executes, is in the audit log like a bulldozer one, and each run is
// there exactly once — the spec registered ahead of it adds nothing when
// it did not change, and a bulldozer's resets are part of the run's own
// entry, not a second one. A run refused before it started is audited
// with its error.
func TestEveryRunIsAuditedOnce(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		e.opts.Actor = "alice@host"
		exec := &fakeExec{}
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Mode: spec.Discover}, exec, nil); err != nil {
			t.Fatal(err)
		}
		// The first run registered the spec: that changed something, so
		// it is an entry of its own, then the run's.
		got := auditSince(t, s, 0)
		if len(got) != 2 || got[0].Action != "apply" || got[1].Action != "run" {
			t.Fatalf("first run: audit %+v, want apply then run", got)
		}

		n := auditCount(t, s)
		res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: firstDay(), Mode: spec.Discover}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = auditSince(t, s, n)
		if len(got) != 1 {
			t.Fatalf("a discover run with the spec unchanged wrote %d audit entries, want 1: %+v", len(got), got)
		}
		a := got[0]
		if a.Action != "run" || a.Actor != "alice@host" || a.Args["mode"] != "discover" || a.Args["models"] != "raw.orders" ||
			a.Args["run_id"] != itoa(res.RunID) || a.Outcome != "ok: discover run "+itoa(res.RunID)+" started" {
			t.Errorf("discover run audited as %+v", a)
		}

		n = auditCount(t, s)
		w := state.MustWindow(t0, t0.Add(2*time.Hour))
		res, err = e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: &w, Mode: spec.Bulldozer}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = auditSince(t, s, n)
		if len(got) != 1 || got[0].Action != "run" || got[0].Args["mode"] != "bulldozer" ||
			got[0].Outcome != "ok: bulldozer run "+itoa(res.RunID)+" started; raw.orders: reset 2" {
			t.Errorf("a bulldozer run's audit %+v, want one run entry naming its 2 resets", got)
		}

		n = auditCount(t, s)
		if _, err := e.Run(t.Context(), RunRequest{Models: []string{"no.such"}, Mode: spec.Discover}, exec, nil); err == nil {
			t.Fatal("a run of an unknown model did not fail")
		}
		got = auditSince(t, s, n)
		if len(got) != 1 || got[0].Action != "run" || !strings.HasPrefix(got[0].Outcome, "error: ") || !strings.Contains(got[0].Outcome, "no.such") {
			t.Errorf("a refused run's audit %+v, want one error entry naming the model", got)
		}
	})
}

// TestRetryIsAuditedOnce: a retry is a run of its own in the audit log,
// with the failed units it puts back.
func TestRetryIsAuditedOnce(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		fail := true
		exec := &fakeExec{fail: func(model string, w *state.Window) error {
			if fail && model == "raw.orders" && w.Since.Equal(t0) {
				return errors.New("503 the provider is down")
			}
			return nil
		}}
		res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: firstDay(), Mode: spec.Discover}, exec, nil)
		if err != nil || !res.Failed() {
			t.Fatalf("first run %+v %v, want one failed unit", res, err)
		}
		fail = false
		n := auditCount(t, s)
		if _, err := e.Retry(t.Context(), res.RunID, exec, 1, nil); err != nil {
			t.Fatal(err)
		}
		got := auditSince(t, s, n)
		if len(got) != 1 || got[0].Action != "retry" || got[0].Args["run_id"] != itoa(res.RunID) ||
			got[0].Outcome != "ok: discover run "+itoa(res.RunID)+" retried; raw.orders: reset 1 failed" {
			t.Errorf("retry audit %+v", got)
		}
	})
}

// TestRunDurationsAreReal: under a fixed clock (--as-of, the demo's past)
// a run and its tasks still take the time they took in the run log, so
// the runs view does not say every run took 0s.
func TestRunDurationsAreReal(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		exec := &fakeExec{delay: 20 * time.Millisecond}
		w := state.MustWindow(t0, t0.Add(2*time.Hour))
		res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: &w, Mode: spec.Discover, Workers: 1}, exec, nil)
		if err != nil {
			t.Fatal(err)
		}
		run, err := s.GetRun(t.Context(), res.RunID)
		if err != nil || run.FinishedAt == nil {
			t.Fatalf("run %+v %v", run, err)
		}
		// The run starts at the engine's (fixed) clock: runs under one
		// clock keep one start and are ordered by id.
		if !run.StartedAt.Equal(e.now()) {
			t.Errorf("run started at %s, want the engine's clock %s", run.StartedAt, e.now())
		}
		// Two units of 20 ms each, one after the other.
		if took := run.FinishedAt.Sub(run.StartedAt); took < 40*time.Millisecond || took > time.Minute {
			t.Errorf("the run took %s in its record, want at least 40ms", took)
		}
		log, err := s.TaskLog(t.Context(), res.RunID)
		if err != nil || len(log) != 1 || log[0].FinishedAt == nil {
			t.Fatalf("task log %+v %v", log, err)
		}
		if took := log[0].FinishedAt.Sub(log[0].StartedAt); took < 40*time.Millisecond {
			t.Errorf("the task took %s in the run log, want at least 40ms", took)
		}
	})
}
