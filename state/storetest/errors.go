package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// errorTests pin the text of the refusals an operator reads, word for word:
// both backends build them with state's error builders, and a backend that
// words one its own way (or wraps it in a prefix of its own) fails here.
var errorTests = []test{
	{"ModelNotFound", testErrModelNotFound},
	{"RunAndAttemptNotFound", testErrRunNotFound},
	{"EmptyWindow", testErrEmptyWindow},
	{"UnitsRunning", testErrUnitsRunning},
	{"UncoverOntoAnotherUnit", testErrUncoverCollides},
	{"LeaseLost", testErrLeaseLost},
	{"NotAnOutcome", testErrNotAnOutcome},
	{"StatusChangeRefused", testErrStatusChange},
	{"ClaimRefused", testErrClaim},
}

// wantError checks that err is sentinel (when not nil) and reads exactly text.
func wantError(t testing.TB, what string, err, sentinel error, text string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s succeeded, want the error %q", what, text)
	case sentinel != nil && !errors.Is(err, sentinel):
		t.Errorf("%s: err = %v, want one that is %v", what, err, sentinel)
	case err.Error() != text:
		t.Errorf("%s: the operator reads\n\t%s\nwant\n\t%s", what, err, text)
	}
}

// testErrModelNotFound: every model-scoped call on an unregistered model
// says which model, in which environment, and how to register it.
func testErrModelNotFound(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("ghost"))
	for _, env := range []string{"", "pr1"} {
		want := "model nobody: not found: it is not registered; bollhav apply registers the models of a spec"
		if env != "" {
			want = "model nobody in environment pr1: not found: it is not registered; bollhav apply registers the models of a spec"
		}
		_, err := s.Model(ctx, env, "nobody")
		wantError(t, "Model", err, state.ErrNotFound, want)
		_, err = s.Prefill(ctx, state.PrefillRequest{Env: env, Model: "nobody", Windows: hourly(0, 1), Now: clock(1)})
		wantError(t, "Prefill", err, state.ErrNotFound, want)
		err = s.ScanUnits(ctx, state.UnitQuery{Env: env, Model: "nobody"}, func(state.Unit) error { return nil })
		wantError(t, "ScanUnits", err, state.ErrNotFound, want)
		_, err = s.Stats(ctx, env, "nobody")
		wantError(t, "Stats", err, state.ErrNotFound, want)
		_, err = s.Applied(ctx, env, "nobody", state.Window{})
		wantError(t, "Applied", err, state.ErrNotFound, want)
		_, err = s.Coverage(ctx, env, "nobody", state.Window{})
		wantError(t, "Coverage", err, state.ErrNotFound, want)
		_, err = s.SetStatus(ctx, state.StatusChange{Env: env, Model: "nobody", From: []state.UnitStatus{state.Pending}, To: state.Applied, Now: clock(1)})
		wantError(t, "SetStatus", err, state.ErrNotFound, want)
		_, err = s.Delete(ctx, state.RemoveRequest{Env: env, Model: "nobody", Now: clock(1)})
		wantError(t, "Delete", err, state.ErrNotFound, want)
		_, err = s.Uncover(ctx, state.RemoveRequest{Env: env, Model: "nobody", Window: win(0, 1), Now: clock(1)})
		wantError(t, "Uncover", err, state.ErrNotFound, want)
	}
}

// testErrRunNotFound: an unknown run, or an attempt never started, is named
// with its ids.
func testErrRunNotFound(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	const want = "run 999: not found: this store holds no run with that id; the runs view of bollhav ui lists those it holds"
	_, err := s.GetRun(ctx, 999)
	wantError(t, "GetRun", err, state.ErrNotFound, want)
	wantError(t, "FinishRun", s.FinishRun(ctx, 999, state.RunSucceeded, clock(1)), state.ErrNotFound, want)
	_, err = s.StartTask(ctx, 999, 1, clock(1))
	wantError(t, "StartTask", err, state.ErrNotFound, want)

	id, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(1)})
	must(t, "CreateRun", err)
	_, err = s.StartTask(ctx, id, 3, clock(1))
	must(t, "StartTask", err)
	err = s.FinishTask(ctx, state.TaskRunEntry{RunID: id, TaskID: 3, Attempt: 2, Status: "SUCCESS", FinishedAt: ptr(clock(2))})
	wantError(t, "FinishTask of an attempt never started", err, state.ErrNotFound,
		fmt.Sprintf("attempt 2 of task 3 in run %d: not found: it was never started (StartTask opens attempts)", id))
}

// testErrEmptyWindow: every write given an empty or reversed window refuses
// it with the same words, before it changes anything.
func testErrEmptyWindow(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"), flexModel("f"))
	prefill(t, s, "", "a", hourly(0, 3), clock(0))
	prefill(t, s, "", "f", hourly(0, 3), clock(0))
	const bounds = "[2026-01-01T02:00:00Z, 2026-01-01T01:00:00Z) is empty: until must be after since"
	reversed := state.Window{Since: at(2), Until: at(1)}
	empty := state.Window{Since: at(1), Until: at(1)}

	_, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: []state.Window{win(5, 6), reversed}, Now: clock(1)})
	wantError(t, "Prefill", err, nil, "prefill a: window "+bounds)
	_, err = s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: []state.Window{empty}, Now: clock(1)})
	wantError(t, "Prefill of an empty window", err, nil,
		"prefill a: window [2026-01-01T01:00:00Z, 2026-01-01T01:00:00Z) is empty: until must be after since")
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "a", Window: reversed, From: []state.UnitStatus{state.Pending}, To: state.Applied, Now: clock(1)})
	wantError(t, "SetStatus", err, nil, "set status of a: window "+bounds)
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "a", Window: reversed, Now: clock(1)})
	wantError(t, "Delete", err, nil, "delete units of a: window "+bounds)
	_, err = s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: reversed, Now: clock(1)})
	wantError(t, "Uncover", err, nil, "uncover f: window "+bounds)
	_, err = s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Window: reversed, Worker: "w1", Lease: time.Minute, Limit: 1, Now: clock(1)})
	wantError(t, "Claim", err, nil, "claim: window "+bounds)

	eq(t, "units after the refusals", briefs(scan(t, s, "", "")), []string{
		"a [0h,1h) pending", "a [1h,2h) pending", "a [2h,3h) pending",
		"f [0h,1h) pending", "f [1h,2h) pending", "f [2h,3h) pending"})
}

// testErrUnitsRunning: a torch over running units says how many, of which
// model, where, and what to do.
func testErrUnitsRunning(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("a"), flexModel("f"))
	prefill(t, s, "", "a", hourly(0, 4), clock(0))
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(2, 4)}, clock(0))
	claim(t, s, "", "a", 2, clock(1))
	claim(t, s, "", "f", 2, clock(1))
	const next = "units are running; wait for their workers to finish (or their leases to expire), then try again"

	_, err := s.Delete(ctx, state.RemoveRequest{Model: "a", Now: clock(2)})
	wantError(t, "Delete of everything", err, state.ErrUnitsRunning,
		"2 unit(s) of a in [2026-01-01T00:00:00Z, 2026-01-01T02:00:00Z): "+next)
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "a", Window: win(1, 4), Now: clock(2)})
	wantError(t, "Delete of [1h,4h)", err, state.ErrUnitsRunning,
		"1 unit(s) of a in [2026-01-01T01:00:00Z, 2026-01-01T02:00:00Z): "+next)
	// [1h,3h) cuts both running units of f: one on each edge.
	_, err = s.Uncover(ctx, state.RemoveRequest{Model: "f", Window: win(1, 3), Now: clock(2)})
	wantError(t, "Uncover of [1h,3h)", err, state.ErrUnitsRunning,
		"2 unit(s) of f in [2026-01-01T00:00:00Z, 2026-01-01T04:00:00Z): "+next)
	eq(t, "units after the refusals", briefs(scan(t, s, "", "")), []string{
		"a [0h,1h) running", "a [1h,2h) running", "a [2h,3h) pending", "a [3h,4h) pending",
		"f [0h,2h) running", "f [2h,4h) running"})
}

// testErrLeaseLost: a worker whose claim was taken over reads which unit,
// under which fence, and that the outcome is no longer its to record.
// testErrUncoverCollides: an Uncover whose trimmed part would have the
// window of another unit of a flexible model is refused alike on every
// store (ErrWindowTaken, the same words; PostgreSQL once gave its raw
// duplicate-key error), and changes nothing.
func testErrUncoverCollides(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 3), win(2, 3)}, clock(1))
	before := briefs(scan(t, s, "", "f"))
	_, err := s.Uncover(t.Context(), state.RemoveRequest{Model: "f", Window: win(0, 2), Now: clock(2)})
	wantError(t, "Uncover [0h,2h)", err, state.ErrWindowTaken,
		"uncover "+win(0, 2).String()+" of f: the part of a unit left outside it would have the window of another unit of the model: the window is another unit's; uncover a window that covers both units, or mark the other unit first")
	eq(t, "units after the refused uncover", briefs(scan(t, s, "", "f")), before)
}

func testErrLeaseLost(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(0))
	old := claim(t, s, "", "a", 1, clock(0))[0]
	_, err := s.ReleaseExpired(ctx, clock(30))
	must(t, "ReleaseExpired", err)
	claim(t, s, "", "a", 1, clock(31))
	const want = "unit a [2026-01-01T00:00:00Z, 2026-01-01T01:00:00Z) (fence 1): lease lost: the unit is no longer held by this claim; its outcome is another worker's to record now"
	wantError(t, "Heartbeat", s.Heartbeat(ctx, old, clock(40)), state.ErrLeaseLost, want)
	wantError(t, "Complete", s.Complete(ctx, old, state.Outcome{Status: state.Applied, At: clock(40)}), state.ErrLeaseLost, want)
	errs, err := s.CompleteBatch(ctx, []state.Completion{{Claim: old, Outcome: state.Outcome{Status: state.Failed, At: clock(40)}}})
	must(t, "CompleteBatch", err)
	wantError(t, "CompleteBatch item", errs[0], state.ErrLeaseLost, want)
}

// testErrNotAnOutcome: Complete with a status no claim ends in names the
// unit and the statuses it takes.
func testErrNotAnOutcome(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(0))
	c := claim(t, s, "", "a", 1, clock(0))[0]
	const want = `complete a [2026-01-01T00:00:00Z, 2026-01-01T01:00:00Z): "running" is not an outcome; use applied, failed, blocked or pending`
	wantError(t, "Complete", s.Complete(ctx, c, state.Outcome{Status: state.Running, At: clock(1)}), nil, want)
	errs, err := s.CompleteBatch(ctx, []state.Completion{{Claim: c, Outcome: state.Outcome{Status: state.Running, At: clock(1)}}})
	must(t, "CompleteBatch", err)
	wantError(t, "CompleteBatch item", errs[0], nil, want)
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) running"})
}

// testErrStatusChange: SetStatus refuses, in the same words on every
// backend, what only a claim may do and what would re-pend history.
func testErrStatusChange(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(0))
	for _, tc := range []struct {
		req  state.StatusChange
		want string
	}{
		{state.StatusChange{Model: "a", From: []state.UnitStatus{state.Pending}, To: state.Running},
			"set status of a: units become running only by a claim, which gives them a lease"},
		{state.StatusChange{Model: "a", From: []state.UnitStatus{state.Pending}, To: "done"},
			`set status of a: unknown status "done"; use pending, applied, blocked or failed`},
		{state.StatusChange{Model: "a", To: state.Applied},
			"set status of a: no statuses to move from; name them (every status must be asked for)"},
		{state.StatusChange{Model: "a", From: []state.UnitStatus{"done"}, To: state.Applied},
			`set status of a: unknown status "done" to move from`},
	} {
		tc.req.Now = clock(1)
		_, err := s.SetStatus(ctx, tc.req)
		wantError(t, "SetStatus "+string(tc.req.To), err, nil, tc.want)
	}
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) pending"})
}

// testErrClaim: a claim with no room or no lease is refused, in the same
// words on every backend, and claims nothing.
func testErrClaim(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(0))
	for _, tc := range []struct {
		limit int
		lease time.Duration
		want  string
	}{
		{0, time.Minute, "claim: limit 0; ask for at least one unit"},
		{-1, time.Minute, "claim: limit -1; ask for at least one unit"},
		{1, 0, "claim: the lease must be positive, not 0s"},
		{1, -time.Second, "claim: the lease must be positive, not -1s"},
	} {
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w1", Lease: tc.lease, Limit: tc.limit, Now: clock(1)})
		wantError(t, fmt.Sprintf("Claim limit %d lease %s", tc.limit, tc.lease), err, nil, tc.want)
		eq(t, "claims", len(cs), 0)
	}
	eq(t, "units", briefs(scan(t, s, "", "a")), []string{"a [0h,1h) pending"})
}
