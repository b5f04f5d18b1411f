package storetest

import (
	"cmp"
	"fmt"
	"maps"
	"testing"

	"github.com/bollhav/bollhav/state"
)

var runTests = []test{
	{"RunsRoundTrip", testRunsRoundTrip},
	{"TaskLog", testTaskLog},
	{"AuditLog", testAuditLog},
}

// testRunsRoundTrip: a run reads back as created, finishes once, and the
// runs view lists the newest first per environment.
func testRunsRoundTrip(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	r1 := state.Run{Env: "", Pipeline: "core", Models: []string{"mart.b", "raw.a"}, Window: win(0, 24), StateMode: "bulldozer", Actor: "alice", StartedAt: clock(1)}
	r2 := state.Run{Env: "", StateMode: "discover", Status: state.RunRunning, Actor: "bob", StartedAt: clock(2)}
	r3 := state.Run{Env: "pr1", Pipeline: "core", StateMode: "torch", Actor: "carol", StartedAt: clock(3)}
	var ids []int64
	for _, r := range []state.Run{r1, r2, r3} {
		id, err := s.CreateRun(ctx, r)
		must(t, "CreateRun", err)
		ids = append(ids, id)
	}
	if ids[0] <= 0 || ids[1] <= ids[0] || ids[2] <= ids[1] {
		t.Errorf("run ids %v, want positive and increasing", ids)
	}

	got, err := s.GetRun(ctx, ids[0])
	must(t, "GetRun", err)
	r1.ID, r1.Status = ids[0], state.RunRunning
	checkRun(t, got, r1)

	must(t, "FinishRun", s.FinishRun(ctx, ids[0], state.RunSucceeded, clock(9)))
	got, err = s.GetRun(ctx, ids[0])
	must(t, "GetRun", err)
	r1.Status, r1.FinishedAt = state.RunSucceeded, ptr(clock(9))
	checkRun(t, got, r1)

	got, err = s.GetRun(ctx, ids[1])
	must(t, "GetRun", err)
	r2.ID = ids[1]
	checkRun(t, got, r2)

	list, err := s.Runs(ctx, "", 0)
	must(t, "Runs", err)
	eq(t, "prod runs, newest first", runIDs(list), []int64{ids[1], ids[0]})
	list, err = s.Runs(ctx, "", 1)
	must(t, "Runs", err)
	eq(t, "prod runs, limit 1", runIDs(list), []int64{ids[1]})
	list, err = s.Runs(ctx, "pr1", 10)
	must(t, "Runs", err)
	eq(t, "pr1 runs", runIDs(list), []int64{ids[2]})
	// Run 1 finished; run 2 goes on in prod, run 3 in pr1.
	list, err = s.UnfinishedRuns(ctx, "")
	must(t, "UnfinishedRuns", err)
	eq(t, "unfinished prod runs", runIDs(list), []int64{ids[1]})
	list, err = s.UnfinishedRuns(ctx, "pr1")
	must(t, "UnfinishedRuns", err)
	eq(t, "unfinished pr1 runs", runIDs(list), []int64{ids[2]})
	if len(list) == 1 {
		r3.ID, r3.Status = ids[2], state.RunRunning
		checkRun(t, list[0], r3)
	}
}

func checkRun(t *testing.T, got, want state.Run) {
	t.Helper()
	what := "run " + want.Actor
	eq(t, what+" ID", got.ID, want.ID)
	eq(t, what+" Env", got.Env, want.Env)
	eq(t, what+" Pipeline", got.Pipeline, want.Pipeline)
	eq(t, what+" Models", append([]string{}, got.Models...), append([]string{}, want.Models...))
	eq(t, what+" Window", hw(got.Window), hw(want.Window))
	eq(t, what+" StateMode", got.StateMode, want.StateMode)
	eq(t, what+" Status", got.Status, want.Status)
	eq(t, what+" Actor", got.Actor, want.Actor)
	eqTime(t, what+" StartedAt", got.StartedAt, want.StartedAt)
	eqTimePtr(t, what+" FinishedAt", got.FinishedAt, want.FinishedAt)
	eqTime(t, what+" Heartbeat (its start when none was given)", got.Heartbeat, cmp.Or(want.Heartbeat, want.StartedAt))
}

func runIDs(rs []state.Run) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// testTaskLog: attempts count per task and run (retry-resume reads them),
// and each attempt keeps its own outcome.
func testTaskLog(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	run, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(0)})
	must(t, "CreateRun", err)
	other, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(0)})
	must(t, "CreateRun", err)

	start := func(runID int64, task int, min int) int {
		t.Helper()
		n, err := s.StartTask(ctx, runID, task, clock(min))
		must(t, "StartTask", err)
		return n
	}
	eq(t, "task 2, first attempt", start(run, 2, 1), 1)
	eq(t, "task 1, first attempt", start(run, 1, 1), 1)
	must(t, "FinishTask", s.FinishTask(ctx, state.TaskRunEntry{RunID: run, TaskID: 2, Attempt: 1, Status: "FAILED", FinishedAt: ptr(clock(2)), RowsWritten: ptr(int64(0)), Error: "1 unit failed"}))
	eq(t, "task 2, second attempt", start(run, 2, 3), 2)
	must(t, "FinishTask", s.FinishTask(ctx, state.TaskRunEntry{RunID: run, TaskID: 2, Attempt: 2, Status: "SUCCESS", FinishedAt: ptr(clock(4)), RowsWritten: ptr(int64(10)), TargetCount: ptr(int64(100))}))
	eq(t, "task 2 in another run", start(other, 2, 5), 1)

	log, err := s.TaskLog(ctx, run)
	must(t, "TaskLog", err)
	want := []state.TaskRunEntry{
		{RunID: run, TaskID: 1, Attempt: 1, Status: "IN_PROGRESS", StartedAt: clock(1)},
		{RunID: run, TaskID: 2, Attempt: 1, Status: "FAILED", StartedAt: clock(1), FinishedAt: ptr(clock(2)), RowsWritten: ptr(int64(0)), Error: "1 unit failed"},
		{RunID: run, TaskID: 2, Attempt: 2, Status: "SUCCESS", StartedAt: clock(3), FinishedAt: ptr(clock(4)), RowsWritten: ptr(int64(10)), TargetCount: ptr(int64(100))},
	}
	if len(log) != len(want) {
		t.Fatalf("TaskLog has %d entries, want %d: %+v", len(log), len(want), log)
	}
	for i, w := range want {
		g := log[i]
		what := "entry " + itoa3(w.TaskID, w.Attempt)
		eq(t, what+" key", itoa3(g.TaskID, g.Attempt), itoa3(w.TaskID, w.Attempt))
		eq(t, what+" RunID", g.RunID, w.RunID)
		eq(t, what+" Status", g.Status, w.Status)
		eqTime(t, what+" StartedAt", g.StartedAt, w.StartedAt)
		eqTimePtr(t, what+" FinishedAt", g.FinishedAt, w.FinishedAt)
		eq(t, what+" RowsWritten", fmtPtr(g.RowsWritten), fmtPtr(w.RowsWritten))
		eq(t, what+" TargetCount", fmtPtr(g.TargetCount), fmtPtr(w.TargetCount))
		eq(t, what+" Error", g.Error, w.Error)
	}
}

func itoa3(task, attempt int) string { return fmt.Sprintf("task %d attempt %d", task, attempt) }

// testAuditLog: operator actions read back newest first with their
// arguments.
func testAuditLog(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	mark := state.AuditEntry{At: clock(1), Actor: "alice", Action: "mark", Args: map[string]string{"model": "raw.a", "since": "2026-01-01T00:00:00Z", "status": "applied"}, Outcome: "ok: 3 units"}
	torch := state.AuditEntry{At: clock(2), Actor: "bob", Action: "torch", Outcome: "refused: read-only"}
	must(t, "Audit", s.Audit(ctx, mark))
	must(t, "Audit", s.Audit(ctx, torch))

	log, err := s.AuditLog(ctx, 0)
	must(t, "AuditLog", err)
	if len(log) != 2 {
		t.Fatalf("AuditLog has %d entries, want 2: %+v", len(log), log)
	}
	if log[0].ID <= log[1].ID || log[1].ID <= 0 {
		t.Errorf("audit ids %d, %d: want positive, newest first", log[0].ID, log[1].ID)
	}
	for i, want := range []state.AuditEntry{torch, mark} {
		g := log[i]
		eqTime(t, want.Action+" At", g.At, want.At)
		eq(t, want.Action+" Actor", g.Actor, want.Actor)
		eq(t, want.Action+" Action", g.Action, want.Action)
		eq(t, want.Action+" Outcome", g.Outcome, want.Outcome)
		if !maps.Equal(g.Args, want.Args) {
			t.Errorf("%s Args = %v, want %v", want.Action, g.Args, want.Args)
		}
	}
	log, err = s.AuditLog(ctx, 1)
	must(t, "AuditLog", err)
	if len(log) != 1 || log[0].Action != "torch" {
		t.Errorf("AuditLog(1) = %+v, want the torch entry only", log)
	}
}
