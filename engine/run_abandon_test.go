package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

const abandonSpec = `models:
  - {name: raw.orders, pipeline: shop, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: raw.other, pipeline: ops, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

// TestRunWhoseProcessDiedIsClosedAbandonedAndRetries: a run whose process
// died (its run row running, its task in progress, its unit claimed; no
// heartbeat since) is left alone by another engine's run while its
// heartbeat and lease are younger than a lease, and closed abandoned — at
// that engine's lease clock, its task FAILED with the abandoned error, its
// unit back to pending — by the next run once both are older. A retry of
// it then runs its task again like a failed run's.
func TestRunWhoseProcessDiedIsClosedAbandonedAndRetries(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		started := t0.Add(48 * time.Hour)
		died := time.Now().UTC().Truncate(time.Millisecond)
		var now atomic.Int64
		now.Store(died.Add(90 * time.Second).UnixMicro())
		b := New(s, mustParse(t, abandonSpec), Options{SpecDir: t.TempDir(), Actor: "b", Now: func() time.Time { return started },
			LeaseClock: func() time.Time { return time.UnixMicro(now.Load()) }})
		if _, err := b.ApplyFor(ctx, RunRequest{Models: []string{"raw.orders"}, Window: firstDay()}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{days(0, 1)}, Now: started}); err != nil {
			t.Fatal(err)
		}
		taskID := 0
		for _, m := range enginetest.Models(t, s) {
			if m.Name == "raw.orders" {
				taskID = m.TaskID
			}
		}

		// The dead process: what a run left when it was SIGKILLed with
		// its one unit in flight.
		dead, err := s.CreateRun(ctx, state.Run{Models: []string{"raw.orders"}, Window: days(0, 1), StateMode: "bulldozer",
			Actor: "dead", StartedAt: started, Heartbeat: died})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartTask(ctx, dead, taskID, started); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.orders"}, Window: days(0, 1), Worker: workerName(dead),
			Lease: DefaultLease, Limit: 5, RunID: dead, Now: died})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claimed %d units for the dead run: %v", len(cs), err)
		}

		other := func() {
			t.Helper()
			if _, err := b.Run(ctx, RunRequest{Models: []string{"raw.other"}, Window: firstDay()}, &fakeExec{}, nil); err != nil {
				t.Fatal(err)
			}
		}
		other() // 90s after the death: heartbeat and lease are younger than a lease
		r, err := s.GetRun(ctx, dead)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != state.RunRunning {
			t.Fatalf("90s after its process died, run is %s, want running (its lease is live)", r.Status)
		}

		noticed := died.Add(3 * time.Minute)
		now.Store(noticed.UnixMicro())
		other()
		r, err = s.GetRun(ctx, dead)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != state.RunAbandoned || r.FinishedAt == nil || !r.FinishedAt.Equal(noticed) {
			t.Fatalf("run %s finished %v, want abandoned at %s", r.Status, r.FinishedAt, noticed)
		}
		log, err := s.TaskLog(ctx, dead)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].Status != "FAILED" || log[0].Error != state.AbandonedTask {
			t.Fatalf("the dead run's log %+v, want its task FAILED %q", log, state.AbandonedTask)
		}
		if u := unit(t, s, "raw.orders", days(0, 1)); u.Status != state.Pending || u.Attempts != 1 {
			t.Fatalf("its unit %s after %d attempts, want pending after 1 (the expired lease)", u.Status, u.Attempts)
		}

		res, err := b.Retry(ctx, dead, &fakeExec{}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if taskStatus(res, "raw.orders") != "SUCCESS" || res.Failed() {
			t.Fatalf("retry tasks %+v, want raw.orders SUCCESS", res.Tasks)
		}
		if u := unit(t, s, "raw.orders", days(0, 1)); u.Status != state.Applied {
			t.Errorf("after the retry the unit is %s, want applied", u.Status)
		}
		if r, _ = s.GetRun(ctx, dead); r.Status != state.RunSucceeded {
			t.Errorf("after the retry the run is %s, want succeeded", r.Status)
		}
	})
}

// TestRunBeatsItsHeartbeatWhileItRuns: a run whose unit takes six beats
// moves its heartbeat on while it runs, so no rescuer takes it for dead.
func TestRunBeatsItsHeartbeatWhileItRuns(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := New(s, mustParse(t, abandonSpec), Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return t0.Add(48 * time.Hour) },
			Lease: 300 * time.Millisecond})
		before := time.Now().UTC()
		res, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Window: firstDay()}, &fakeExec{delay: 600 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.GetRun(t.Context(), res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if beat := r.Heartbeat.Sub(before); beat < 300*time.Millisecond {
			t.Errorf("the last heartbeat came %s after the run began, want at least 300ms (beats every 100ms over a 600ms unit)", beat)
		}
	})
}
