package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// The copy checks (state.StoreCopier, `bollhav store copy`): a store's whole
// state goes into another, empty store of the same backend in one
// transaction. The engine's tests copy across backends.
var copyTests = []test{
	{"MoveKeepsEverything", testCopyMoveKeepsEverything},
	{"SnapshotKeepsItsOwnIdentity", testCopySnapshot},
	{"InterruptedCopyCommitsNothing", testCopyInterrupted},
	{"TargetNotEmptyRefused", testCopyTargetNotEmpty},
	{"MoveWithUnitsRunningRefused", testCopyBusy},
}

// SeedCopySource fills s with a little of everything a copy must carry,
// in two environments: the registry with edges and a definition history,
// applied units in two islands, a failed unit with its attempts, a blocked
// one with its reason, a retry waiting, a flexible model's units and a
// timeless model's existence row, runs with task attempts, and audit rows.
func SeedCopySource(t testing.TB, s state.Store) {
	t.Helper()
	ctx := t.Context()
	for _, env := range []string{"", "dev"} {
		a, b := fixModel("a"), flexModel("b")
		a.Fingerprint, b.Fingerprint = "fa1", "fb1"
		_, err := s.Register(ctx, env, []state.ModelRecord{a, b, timelessModel("c")},
			[]state.EdgeRecord{{Env: env, Task: "b", DependsOn: "a", Type: "SUCCESS"}, {Env: env, Task: "c", DependsOn: "b", Type: "ALWAYS", Implicit: true, Cross: true}}, clock(0))
		must(t, "Register", err)
		must(t, "RecordDefinitions", s.RecordDefinitions(ctx, []state.DefinitionRecord{{Env: env, Model: "a", Fingerprint: "fa0", Definition: []byte(`{"old": true}`), FirstSeen: at(-24)}}))
		prefill(t, s, env, "a", hourly(0, 8), clock(1))
		prefill(t, s, env, "b", []state.Window{win(0, 3), win(2, 5)}, clock(1))
		prefill(t, s, env, "c", []state.Window{{}}, clock(1))
	}
	run, err := s.CreateRun(ctx, state.Run{Pipeline: "core", Models: []string{"a", "b"}, Window: win(0, 8), StateMode: "discover", Actor: "ops", StartedAt: clock(2)})
	must(t, "CreateRun", err)
	attempt, err := s.StartTask(ctx, run, 1, clock(2))
	must(t, "StartTask", err)
	rows := int64(7)
	must(t, "FinishTask", s.FinishTask(ctx, state.TaskRunEntry{RunID: run, TaskID: 1, Attempt: attempt, Status: "FAILED", StartedAt: clock(2), FinishedAt: ptr(clock(3)), RowsWritten: &rows, Error: "exit status 1"}))
	cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w1", Lease: time.Hour, Limit: 6, RunID: run, Now: clock(3)})
	must(t, "Claim", err)
	for i := range cs {
		o := state.Outcome{Status: state.Applied, At: clock(4), RowsWritten: &rows, Fingerprint: "fa1"}
		switch i {
		case 3:
			o = state.Outcome{Status: state.Failed, At: clock(4), Error: "exit status 3: boom", Try: 2}
		case 4:
			o = state.Outcome{Status: state.Blocked, At: clock(4), BlockedReason: "upstream x: missing [0h,1h)"}
		case 5:
			o = state.Outcome{Status: state.Pending, At: clock(4), Error: "exit status 1: flaky", NotBefore: clock(30), Try: 1}
		}
		must(t, "Complete", s.Complete(ctx, cs[i], o))
	}
	cs, err = s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w1", Lease: time.Hour, Limit: 1, RunID: run, Now: clock(5)})
	must(t, "Claim", err)
	must(t, "Complete", s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: clock(6), Fingerprint: "fa1"}))
	_, err = s.SetStatus(ctx, state.StatusChange{Env: "dev", Model: "b", Window: win(0, 3), From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: clock(7), Now: clock(7)})
	must(t, "SetStatus", err)
	must(t, "FinishRun", s.FinishRun(ctx, run, state.RunFailed, clock(8)))
	must(t, "Audit", s.Audit(ctx, state.AuditEntry{At: clock(9), Actor: "ops", Action: "mark", Args: map[string]string{"model": "a"}, Outcome: "ok"}))
	must(t, "Audit", s.Audit(ctx, state.AuditEntry{At: clock(10), Actor: "ops", Action: "torch", Outcome: "refused: read-only"}))
}

// ContentOf is everything s answers about its state, as JSON lines: two
// stores with the same content give the same text, whatever their
// backend. The identity is left out (a snapshot has its own).
func ContentOf(t testing.TB, s state.Store) string {
	t.Helper()
	ctx := t.Context()
	var b strings.Builder
	put := func(what string, v any) {
		j, err := json.Marshal(v)
		must(t, "marshal "+what, err)
		b.WriteString(what + " " + string(j) + "\n")
	}
	for _, env := range []string{"", "dev"} {
		models, err := s.Models(ctx, env)
		must(t, "Models", err)
		put("models", models)
		edges, err := s.Edges(ctx, env)
		must(t, "Edges", err)
		put("edges", edges)
		for _, m := range models {
			defs, err := s.Definitions(ctx, env, m.Name)
			must(t, "Definitions", err)
			put("definitions", defs)
			cov, err := s.Coverage(ctx, env, m.Name, state.Window{})
			must(t, "Coverage", err)
			put("coverage "+m.Name, cov.Windows())
		}
		must(t, "ScanUnits", s.ScanUnits(ctx, state.UnitQuery{Env: env}, func(u state.Unit) error {
			put("unit", u)
			as, err := s.Attempts(ctx, u.ID)
			put("attempts", as)
			return err
		}))
		sums, err := s.Summaries(ctx, env, "")
		must(t, "Summaries", err)
		for _, sum := range sums {
			put("summary", []any{sum.Model, sum.Counts, sum.LastAppliedAt, sum.Coverage.Windows()})
		}
		fc, err := s.FingerprintCounts(ctx, env, "")
		must(t, "FingerprintCounts", err)
		put("fingerprints", fc)
		runs, err := s.Runs(ctx, env, 0)
		must(t, "Runs", err)
		put("runs", runs)
		for _, r := range runs {
			log, err := s.TaskLog(ctx, r.ID)
			must(t, "TaskLog", err)
			put("tasks", log)
		}
	}
	audit, err := s.AuditLog(ctx, 0)
	must(t, "AuditLog", err)
	put("audit", audit)
	return b.String()
}

// Copy copies src into dst, in the engine's order: the target's
// transaction first, then the source's read.
func Copy(ctx context.Context, src, dst state.Store, snapshot, retire *state.Retirement) error {
	return CopyThrough(ctx, src, dst, snapshot, retire, nil)
}

// CopyThrough is Copy with each unit row passed through wrap's writer
// when wrap is set (a test's way to cut a copy off half way).
func CopyThrough(ctx context.Context, src, dst state.Store, snapshot, retire *state.Retirement, wrap func(state.CopyWriter) state.CopyWriter) error {
	w, err := dst.(state.StoreCopier).CopyIn(ctx, state.CopyInOptions{Snapshot: snapshot})
	if err != nil {
		return err
	}
	if wrap != nil {
		w = wrap(w)
	}
	return src.(state.StoreCopier).CopyOut(ctx, w, state.CopyOutOptions{Retire: retire})
}

func copier(t testing.TB, s state.Store) state.StoreCopier {
	return storeAs[state.StoreCopier](t, s, "CopyIn/CopyOut")
}

// CheckRefusesWrites checks that s, retired as r, refuses a write in the
// store itself (not only in the engine): a registration, a unit's mark, an
// audit row and a new run each fail naming r's other store, and every
// read still answers.
func CheckRefusesWrites(t testing.TB, s state.Store, r state.Retirement) {
	t.Helper()
	ctx := t.Context()
	got, err := copier(t, s).Retirement(ctx)
	if err != nil || got == nil || got.Kind != r.Kind || got.Other != r.Other || !got.At.Equal(r.At) {
		t.Errorf("Retirement() = %+v, %v; want %+v", got, err, r)
	}
	writes := map[string]error{}
	_, writes["Register"] = s.Register(ctx, "", []state.ModelRecord{fixModel("z")}, nil, clock(50))
	_, writes["SetStatus"] = s.SetStatus(ctx, state.StatusChange{Model: "a", From: []state.UnitStatus{state.Applied}, To: state.Pending, Now: clock(50)})
	writes["Audit"] = s.Audit(ctx, state.AuditEntry{At: clock(50), Actor: "x", Action: "y", Outcome: "z"})
	_, writes["CreateRun"] = s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(50)})
	for what, err := range writes {
		if err == nil || !strings.Contains(err.Error(), r.Other) {
			t.Errorf("%s on a retired store: %v; want it refused naming %s", what, err, r.Other)
		}
	}
	if _, err := s.Models(ctx, ""); err != nil {
		t.Errorf("reading a retired store: %v", err)
	}
}

// testCopyMoveKeepsEverything: a move carries every row and the identity;
// the target answers every read as the source did, then goes on from the
// copied ids and fences; the source refuses writes, naming the target.
func testCopyMoveKeepsEverything(t *testing.T, src state.Store, c *config) {
	ctx := t.Context()
	SeedCopySource(t, src)
	dst := c.open(t)
	want := ContentOf(t, src)
	srcID, _ := src.Identity(ctx)
	moved := state.Retirement{Kind: state.RetiredMoved, Other: "postgres://db/next", At: clock(60)}
	must(t, "copy", Copy(ctx, src, dst, nil, &moved))
	if got := ContentOf(t, dst); got != want {
		t.Errorf("the target's content differs from the source's:\n got  %s\n want %s", got, want)
	}
	if id, _ := dst.Identity(ctx); id != srcID {
		t.Errorf("the target's identity %q, want the source's %q", id, srcID)
	}
	if r, err := copier(t, dst).Retirement(ctx); r != nil || err != nil {
		t.Errorf("the target after a move: retired %+v, %v; want it live", r, err)
	}
	CheckRefusesWrites(t, src, moved)
	// The target goes on: a new unit takes an id past every copied one,
	// and a claim fences above every fence the source handed out.
	var maxID, maxFence int64
	must(t, "ScanUnits", dst.ScanUnits(ctx, state.UnitQuery{Env: ""}, func(u state.Unit) error {
		maxID, maxFence = max(maxID, u.ID), max(maxFence, u.Fence)
		return nil
	}))
	prefill(t, dst, "", "a", hourly(8, 9), clock(61))
	must(t, "ScanUnits", dst.ScanUnits(ctx, state.UnitQuery{Model: "a", Window: win(8, 9)}, func(u state.Unit) error {
		if u.ID <= maxID {
			t.Errorf("a new unit in the target got id %d, not past the copied %d", u.ID, maxID)
		}
		return nil
	}))
	cs := claimExactly(t, dst, "", "a", 1, clock(62))
	if cs[0].Fence <= maxFence {
		t.Errorf("a claim in the target got fence %d, not above the copied %d", cs[0].Fence, maxFence)
	}
	run, err := dst.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(63)})
	must(t, "CreateRun", err)
	if run <= 1 {
		t.Errorf("a new run in the target got id %d, which the copied run has", run)
	}
	if _, err := copier(t, src).CopyIn(ctx, state.CopyInOptions{}); err == nil {
		t.Error("a retired store took a copy into it")
	}
}

// testCopySnapshot: a snapshot carries every row but keeps its own
// identity and refuses writes; the source goes on as before.
func testCopySnapshot(t *testing.T, src state.Store, c *config) {
	ctx := t.Context()
	SeedCopySource(t, src)
	dst := c.open(t)
	dstID, _ := dst.Identity(ctx)
	want := ContentOf(t, src)
	snap := state.Retirement{Kind: state.RetiredSnapshot, Other: "postgres://prod/state", At: clock(60)}
	must(t, "copy", Copy(ctx, src, dst, &snap, nil))
	if got := ContentOf(t, dst); got != want {
		t.Errorf("the snapshot's content differs from the source's:\n got  %s\n want %s", got, want)
	}
	if id, _ := dst.Identity(ctx); id != dstID {
		t.Errorf("the snapshot's identity %q, want its own %q", id, dstID)
	}
	CheckRefusesWrites(t, dst, snap)
	if r, _ := copier(t, src).Retirement(ctx); r != nil {
		t.Errorf("the source after a snapshot: retired %+v, want it live", r)
	}
	must(t, "a write to the source", src.Audit(ctx, state.AuditEntry{At: clock(61), Actor: "x", Action: "y", Outcome: "z"}))
}

// failingWriter fails the copy at its units' nth row, as a lost connection
// or an interrupt half way would.
type failingWriter struct {
	state.CopyWriter
	n int
}

var errCutOff = errors.New("cut off half way")

func (f *failingWriter) Unit(u state.Unit) error {
	if f.n--; f.n == 0 {
		return errCutOff
	}
	return f.CopyWriter.Unit(u)
}

// testCopyInterrupted: a copy cut off half way commits nothing in the
// target, which then takes a whole copy, and leaves the source live.
func testCopyInterrupted(t *testing.T, src state.Store, c *config) {
	ctx := t.Context()
	SeedCopySource(t, src)
	dst := c.open(t)
	empty := ContentOf(t, dst)
	moved := state.Retirement{Kind: state.RetiredMoved, Other: "postgres://db/next", At: clock(60)}
	err := CopyThrough(ctx, src, dst, nil, &moved, func(w state.CopyWriter) state.CopyWriter { return &failingWriter{w, 5} })
	if !errors.Is(err, errCutOff) {
		t.Fatalf("a copy cut off half way: %v, want its error", err)
	}
	if got := ContentOf(t, dst); got != empty {
		t.Errorf("the target after an interrupted copy holds:\n%s", got)
	}
	if r, _ := copier(t, src).Retirement(ctx); r != nil {
		t.Errorf("the source after an interrupted copy: retired %+v, want it live", r)
	}
	want := ContentOf(t, src)
	must(t, "the copy again", Copy(ctx, src, dst, nil, &moved))
	if got := ContentOf(t, dst); got != want {
		t.Errorf("the target after the second copy differs:\n got  %s\n want %s", got, want)
	}
}

// testCopyTargetNotEmpty: a target that holds state is refused, says what
// it holds, and keeps it.
func testCopyTargetNotEmpty(t *testing.T, src state.Store, c *config) {
	ctx := t.Context()
	SeedCopySource(t, src)
	dst := c.open(t)
	modelA(t, dst, 3, clock(0))
	before := ContentOf(t, dst)
	err := Copy(ctx, src, dst, nil, &state.Retirement{Kind: state.RetiredMoved, Other: "x", At: clock(60)})
	var ne *state.NotEmptyError
	if !errors.As(err, &ne) || ne.Models != 1 || ne.Units != 3 || !strings.Contains(err.Error(), "1 models, 3 units") {
		t.Errorf("a copy into a store holding state: %v, want it refused with what it holds", err)
	}
	if got := ContentOf(t, dst); got != before {
		t.Errorf("the refused target changed:\n got  %s\n want %s", got, before)
	}
	if r, _ := copier(t, src).Retirement(ctx); r != nil {
		t.Errorf("the source after a refused copy: retired %+v", r)
	}
}

// testCopyBusy: a move while a unit runs is refused (its worker would
// finish into a retired store); a snapshot is not.
func testCopyBusy(t *testing.T, src state.Store, c *config) {
	ctx := t.Context()
	modelA(t, src, 2, clock(0))
	claimExactly(t, src, "", "a", 1, clock(1))
	err := Copy(ctx, src, c.open(t), nil, &state.Retirement{Kind: state.RetiredMoved, Other: "x", At: clock(60)})
	var busy *state.CopyBusyError
	if !errors.As(err, &busy) || busy.Running != 1 {
		t.Errorf("a move with a unit running: %v, want it refused", err)
	}
	if r, _ := copier(t, src).Retirement(ctx); r != nil {
		t.Errorf("the source after a refused move: retired %+v", r)
	}
	must(t, "a snapshot with a unit running", Copy(ctx, src, c.open(t), &state.Retirement{Kind: state.RetiredSnapshot, Other: "x", At: clock(60)}, nil))
}
