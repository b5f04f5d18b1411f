package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var abandonTests = []test{
	{"HeartbeatRun", testHeartbeatRun},
	{"AbandonRuns", testAbandonRuns},
	{"AbandonRunsConcurrentlyClosesEachOnce", testAbandonRunsConcurrently},
}

// testHeartbeatRun: a run's heartbeat reads back as beaten; a run created
// without one reads its start; no such run is not found.
func testHeartbeatRun(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	id, err := s.CreateRun(ctx, state.Run{StateMode: "bulldozer", Actor: "a", StartedAt: clock(0)})
	must(t, "CreateRun", err)
	r, err := s.GetRun(ctx, id)
	must(t, "GetRun", err)
	eqTime(t, "heartbeat of a run created without one", r.Heartbeat, clock(0))
	must(t, "HeartbeatRun", s.HeartbeatRun(ctx, id, clock(7)))
	r, err = s.GetRun(ctx, id)
	must(t, "GetRun", err)
	eqTime(t, "heartbeat after a beat", r.Heartbeat, clock(7))
	if err := s.HeartbeatRun(ctx, id+100, clock(8)); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("HeartbeatRun of no run: %v, want ErrNotFound", err)
	}
}

// abandonFixture creates a run of env, running, with the heartbeat beat
// (zero: none, it reads its start at clock(0)).
func abandonRun(t *testing.T, s state.Store, env, actor string, beat time.Time) int64 {
	t.Helper()
	id, err := s.CreateRun(t.Context(), state.Run{Env: env, StateMode: "bulldozer", Actor: actor, StartedAt: clock(0), Heartbeat: beat})
	must(t, "CreateRun "+actor, err)
	return id
}

// claimForRun claims the first pending unit of "a" for run at now under a
// ten-minute lease.
func claimForRun(t *testing.T, s state.Store, run int64, now time.Time) {
	t.Helper()
	cs, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{"a"}, Worker: fmt.Sprint("run", run), Lease: 10 * time.Minute,
		Limit: 1, RunID: run, Now: now})
	must(t, "Claim", err)
	if len(cs) != 1 {
		t.Fatalf("claimed %d units for run %d, want 1", len(cs), run)
	}
}

// testAbandonRuns: with a ten-minute lease at clock(26), a running run
// whose heartbeat is older than clock(16) and that holds no live lease is
// closed abandoned at clock(26), its IN_PROGRESS task attempts FAILED with
// the abandoned error; a fresh heartbeat, one exactly a lease old, a unit
// under a live lease, a finished run and another environment's run are
// left alone. Once the live lease ends, its run is closed too.
func testAbandonRuns(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 3, clock(0))
	dead := abandonRun(t, s, "", "dead", clock(1))
	legacy := abandonRun(t, s, "", "legacy", time.Time{})
	fresh := abandonRun(t, s, "", "fresh", clock(25))
	edge := abandonRun(t, s, "", "edge", clock(16))
	held := abandonRun(t, s, "", "held", clock(1))
	finished := abandonRun(t, s, "", "finished", clock(1))
	must(t, "FinishRun", s.FinishRun(ctx, finished, state.RunFailed, clock(5)))
	other := abandonRun(t, s, "pr1", "other", clock(1))

	// The dead run: one task in progress, one that ended, and a unit whose
	// lease ended at clock(10) that no one has released yet.
	inProgress, err := s.StartTask(ctx, dead, 1, clock(1))
	must(t, "StartTask", err)
	ended, err := s.StartTask(ctx, dead, 2, clock(1))
	must(t, "StartTask", err)
	must(t, "FinishTask", s.FinishTask(ctx, state.TaskRunEntry{RunID: dead, TaskID: 2, Attempt: ended, Status: "SUCCESS",
		StartedAt: clock(1), FinishedAt: ptr(clock(2))}))
	claimForRun(t, s, dead, clock(0))
	// The held run's unit is leased until clock(30).
	claimForRun(t, s, held, clock(20))
	_, err = s.StartTask(ctx, held, 1, clock(1))
	must(t, "StartTask", err)
	_, err = s.StartTask(ctx, fresh, 1, clock(1))
	must(t, "StartTask", err)

	if _, err := s.AbandonRuns(ctx, "", clock(26), 0); err == nil {
		t.Error("AbandonRuns with no lease: nil error, want a refusal")
	}
	ids, err := s.AbandonRuns(ctx, "", clock(26), 10*time.Minute)
	must(t, "AbandonRuns", err)
	eq(t, "abandoned at clock(26)", ids, []int64{dead, legacy})

	for _, id := range []int64{dead, legacy} {
		r, err := s.GetRun(ctx, id)
		must(t, "GetRun", err)
		eq(t, r.Actor+" status", r.Status, state.RunAbandoned)
		eqTimePtr(t, r.Actor+" finished", r.FinishedAt, ptr(clock(26)))
	}
	for _, id := range []int64{fresh, edge, held, other} {
		r, err := s.GetRun(ctx, id)
		must(t, "GetRun", err)
		eq(t, r.Actor+" status", r.Status, state.RunRunning)
		eqTimePtr(t, r.Actor+" finished", r.FinishedAt, nil)
	}
	r, err := s.GetRun(ctx, finished)
	must(t, "GetRun", err)
	eq(t, "finished run status", r.Status, state.RunFailed)
	eqTimePtr(t, "finished run finished", r.FinishedAt, ptr(clock(5)))

	log, err := s.TaskLog(ctx, dead)
	must(t, "TaskLog", err)
	if len(log) != 2 {
		t.Fatalf("dead run's log %+v, want 2 attempts", log)
	}
	eq(t, "task in progress: status", log[0].Status, "FAILED")
	eq(t, "task in progress: attempt", log[0].Attempt, inProgress)
	eq(t, "task in progress: error", log[0].Error, state.AbandonedTask)
	eqTimePtr(t, "task in progress: finished", log[0].FinishedAt, ptr(clock(26)))
	eq(t, "ended task: status", log[1].Status, "SUCCESS")
	eq(t, "ended task: error", log[1].Error, "")
	eqTimePtr(t, "ended task: finished", log[1].FinishedAt, ptr(clock(2)))
	log, err = s.TaskLog(ctx, fresh)
	must(t, "TaskLog", err)
	eq(t, "fresh run's task", log[0].Status, "IN_PROGRESS")

	ids, err = s.AbandonRuns(ctx, "", clock(26), 10*time.Minute)
	must(t, "AbandonRuns again", err)
	eq(t, "abandoned again at clock(26)", len(ids), 0)

	// clock(31): the held run's lease ended at clock(30), and the edge
	// run's heartbeat is now older than a lease.
	ids, err = s.AbandonRuns(ctx, "", clock(31), 10*time.Minute)
	must(t, "AbandonRuns", err)
	eq(t, "abandoned at clock(31)", ids, []int64{edge, held})
	log, err = s.TaskLog(ctx, held)
	must(t, "TaskLog", err)
	eq(t, "held run's task", log[0].Status, "FAILED")

	ids, err = s.AbandonRuns(ctx, "pr1", clock(31), 10*time.Minute)
	must(t, "AbandonRuns pr1", err)
	eq(t, "abandoned in pr1", ids, []int64{other})
}

// testAbandonRunsConcurrently: closers racing over the same dead runs, on
// two handles where the backend has them, close each run exactly once
// between them.
func testAbandonRunsConcurrently(t *testing.T, s state.Store, c *config) {
	const runs = 12
	var want []int64
	for i := range runs {
		id := abandonRun(t, s, "", fmt.Sprint("r", i), clock(1))
		_, err := s.StartTask(t.Context(), id, 1, clock(1))
		must(t, "StartTask", err)
		want = append(want, id)
	}
	var mu sync.Mutex
	var got []int64
	concurrently(t, s, c, 6, func(st state.Store, name string) error {
		ids, err := st.AbandonRuns(t.Context(), "", clock(30), 10*time.Minute)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		mu.Lock()
		got = append(got, ids...)
		mu.Unlock()
		return nil
	})
	slices.Sort(got)
	eq(t, "runs closed, each once", got, want)
	for _, id := range want {
		log, err := s.TaskLog(t.Context(), id)
		must(t, "TaskLog", err)
		if len(log) != 1 || log[0].Status != "FAILED" || log[0].Error != state.AbandonedTask {
			t.Errorf("run %d's log %+v, want one FAILED attempt, abandoned", id, log)
		}
	}
}
