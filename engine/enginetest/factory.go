package enginetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// The factory builds state for a test without running the engine, the way
// River's testfactory inserts a job in any state straight through its
// driver: a spec registered as the engine's Apply registers it, units in any
// status with the applied_at, blocked reason, error, fingerprint and failed
// attempts a test needs, runs and task-log entries. Everything goes through
// the state.Store API, so it works on either backend and cannot write a
// state the store itself would refuse. The gate, the UI and the CLI are
// tested on seeded state in their own packages; engine's
// factory_matches_run_test proves real runs leave what the fixtures seed.

// Parse parses a bollhav.yaml for a test, failing t when it does not parse.
func Parse(t testing.TB, yaml string) *spec.Spec {
	t.Helper()
	sp, err := spec.Parse("bollhav.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("enginetest: parse spec: %v", err)
	}
	return sp
}

// Register registers every model of sp and its task edges in env at now,
// with the records the engine's Apply writes (spec.ModelRecord,
// spec.EdgeRecords) in one Store.Register call, which keeps each
// definition in the model's history under its fingerprint. Registering a
// changed spec again is a definition change, as a new apply is. It
// returns the task ids.
func Register(t testing.TB, s state.Store, env string, sp *spec.Spec, now time.Time) map[string]int {
	t.Helper()
	recs, edges := Records(env, sp)
	ids, err := s.Register(t.Context(), env, recs, edges, now)
	if err != nil {
		t.Fatalf("enginetest: register: %v", err)
	}
	return ids.TaskIDs
}

// Records are the registration records of every model of sp in env and
// their task edges, as the engine's Apply writes them: what Register
// registers, for a caller that has no testing.TB (a rapid.T).
func Records(env string, sp *spec.Spec) ([]state.ModelRecord, []state.EdgeRecord) {
	recs := make([]state.ModelRecord, 0, len(sp.Models))
	var edges []state.EdgeRecord
	for _, m := range sp.Models {
		recs = append(recs, spec.ModelRecord(env, m, state.Interval{}))
		edges = append(edges, spec.EdgeRecords(env, sp, m)...)
	}
	return recs, edges
}

// RegisterYAML parses yaml, registers it in the default environment at now
// and returns the spec.
func RegisterYAML(t testing.TB, s state.Store, yaml string, now time.Time) *spec.Spec {
	t.Helper()
	sp := Parse(t, yaml)
	Register(t, s, "", sp, now)
	return sp
}

// UnknownFingerprint, as UnitOpts.Fingerprint, seeds an applied unit whose
// definition is not known (marked applied by an operator, or applied
// before the store recorded fingerprints).
const UnknownFingerprint = "-"

// UnitOpts is one unit to seed. Only Model is required: the zero value of
// the rest is a pending unit of a timeless model, seeded at T0.
type UnitOpts struct {
	Env, Model string
	// Window is the unit's window; zero for a timeless model's existence
	// row.
	Window state.Window
	// Status is the unit's status; pending when empty.
	Status state.UnitStatus
	// At is when the unit reached its status: created, claimed and
	// completed then (its updated_at); T0 when zero.
	At time.Time
	// AppliedAt is an applied unit's applied_at; At when zero.
	AppliedAt time.Time
	// BlockedReason is a blocked unit's reason, as the gate words it.
	BlockedReason string
	// Error is a failed unit's error, or the error of a pending unit that
	// waits for its retry (with NotBefore).
	Error string
	// NotBefore, for a pending unit with an Error, is when its retry may
	// be claimed.
	NotBefore time.Time
	// Fingerprint is the definition an applied unit was built under:
	// the model's registered definition when empty, UnknownFingerprint for
	// none.
	Fingerprint string
	// RunID is the run that claimed the unit (0: none).
	RunID int64
	// Tries are failed attempts before the unit reached its status, oldest
	// first: each is claimed and sent back to pending with its error, as a
	// retried failure is, and lands in the unit's attempt history.
	Tries []TryOpts
	// Lease is how long a running unit's claim lasts from At; an hour when
	// zero.
	Lease time.Duration
	// RowsWritten is what an applied unit wrote.
	RowsWritten *int64
}

// TryOpts is one failed attempt of a seeded unit.
type TryOpts struct {
	Error string
	// At is when the attempt failed; the unit's At when zero.
	At time.Time
	// Try is its number in its retry budget, from 1; 0 is read as 1.
	Try int
}

// Unit seeds one unit and returns it as the store holds it; see Units.
func Unit(t testing.TB, s state.Store, o UnitOpts) state.Unit {
	t.Helper()
	Units(t, s, o)
	var got state.Unit
	found := false
	err := s.ScanUnits(t.Context(), state.UnitQuery{Env: o.Env, Model: o.Model, Window: o.Window}, func(u state.Unit) error {
		if u.Window.Equal(o.Window) {
			got, found = u, true
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("enginetest: reading the seeded unit %s %s back: found %v, %v", o.Model, o.Window, found, err)
	}
	return got
}

// Units seeds units through the Store API as a run would leave them: each
// is prefilled, claimed (under RunID) and completed with its outcome, so
// its attempts, change feed entries, kept counts and coverage are what the
// store derives from a real transition. A model's units are prefilled in
// one call, and runs of adjacent units claimed and completed in batches,
// so a fixture of thousands of units seeds in a few round trips. A unit
// that already exists, or a model that is not registered, fails t.
func Units(t testing.TB, s state.Store, units ...UnitOpts) {
	t.Helper()
	if err := seedUnits(t, s, units); err != nil {
		t.Fatalf("enginetest: seeding units: %v", err)
	}
}

// unitKey is a model of an environment.
type unitKey struct{ env, model string }

func seedUnits(t testing.TB, s state.Store, units []UnitOpts) error {
	ctx := t.Context()
	byModel := map[unitKey][]UnitOpts{}
	var order []unitKey
	for _, o := range units {
		if o.Model == "" {
			return errors.New("a unit without a model")
		}
		k := unitKey{o.Env, o.Model}
		if o.At.IsZero() {
			o.At = T0
		}
		if _, ok := byModel[k]; !ok {
			order = append(order, k)
		}
		byModel[k] = append(byModel[k], o)
	}
	for _, k := range order {
		us := byModel[k]
		slices.SortStableFunc(us, func(a, b UnitOpts) int {
			return cmp.Or(a.Window.Since.Compare(b.Window.Since), a.Window.Until.Compare(b.Window.Until))
		})
		fp, err := registeredFingerprint(t, s, k)
		if err != nil {
			return err
		}
		ws := make([]state.Window, len(us))
		first := us[0].At
		for i, o := range us {
			ws[i] = o.Window
			if o.At.Before(first) {
				first = o.At
			}
		}
		n, err := s.Prefill(ctx, state.PrefillRequest{Env: k.env, Model: k.model, Windows: ws, Now: first})
		if err != nil {
			return fmt.Errorf("prefill %s: %w", k.model, err)
		}
		if n != len(us) {
			return fmt.Errorf("prefill %s created %d units of %d: a window is repeated or already has a unit", k.model, n, len(us))
		}
		// A unit with tries is seeded alone; the others in runs of
		// adjacent windows sharing a run and a claim time, so one claim of
		// the run's hull takes exactly them.
		for i := 0; i < len(us); {
			j := i + 1
			if len(us[i].Tries) == 0 && us[i].Status != "" && us[i].Status != state.Pending {
				for j < len(us) && len(us[j].Tries) == 0 && us[j].Status != "" && us[j].Status != state.Pending &&
					us[j].RunID == us[i].RunID && us[j].At.Equal(us[i].At) && us[j].Lease == us[i].Lease &&
					(us[j].Status == state.Running) == (us[i].Status == state.Running) && // a running unit stays claimed
					us[j].Window.Since.Equal(us[j-1].Window.Until) && !us[j].Window.IsZero() {
					j++
				}
			}
			if err := seedRun(t, s, k, fp, us[i:j]); err != nil {
				return err
			}
			i = j
		}
	}
	return nil
}

// registeredFingerprint is the fingerprint of the model's registered
// definition, what the engine records on the units it applies.
func registeredFingerprint(t testing.TB, s state.Store, k unitKey) (string, error) {
	rec, err := s.Model(t.Context(), k.env, k.model)
	if err != nil {
		return "", fmt.Errorf("model %s is not registered (register the spec first): %w", k.model, err)
	}
	return spec.RecordFingerprint(rec)
}

// completeBatch keeps a CompleteBatch to the few hundred items the store
// asks for.
const completeBatch = 200

// seedRun claims and completes a run of adjacent prefilled units (or one
// unit with its tries).
func seedRun(t testing.TB, s state.Store, k unitKey, fp string, run []UnitOpts) error {
	ctx := t.Context()
	o := run[0]
	claim := func(at time.Time, lease time.Duration, w state.Window, n int) ([]state.Claim, error) {
		cs, err := s.Claim(ctx, state.ClaimRequest{Env: k.env, Models: []string{k.model}, Window: w, Worker: "enginetest",
			Lease: cmp.Or(lease, time.Hour), Limit: n, RunID: o.RunID, Now: at})
		if err != nil {
			return nil, fmt.Errorf("claim %s %s: %w", k.model, w, err)
		}
		if len(cs) != n {
			return nil, fmt.Errorf("claim %s %s took %d units, want %d", k.model, w, len(cs), n)
		}
		return cs, nil
	}
	for _, try := range o.Tries {
		at := cmp.Or(try.At, o.At)
		cs, err := claim(at, 0, o.Window, 1)
		if err != nil {
			return err
		}
		if err := s.Complete(ctx, cs[0], state.Outcome{Status: state.Pending, At: at, Error: try.Error, Try: try.Try}); err != nil {
			return fmt.Errorf("a try of %s %s: %w", k.model, o.Window, err)
		}
	}
	if o.Status == "" || o.Status == state.Pending {
		if o.Error == "" {
			return nil
		}
		cs, err := claim(o.At, 0, o.Window, 1)
		if err != nil {
			return err
		}
		return s.Complete(ctx, cs[0], state.Outcome{Status: state.Pending, At: o.At, Error: o.Error, NotBefore: o.NotBefore, Try: len(o.Tries) + 1})
	}
	hull := o.Window
	if !hull.IsZero() {
		hull.Until = run[len(run)-1].Window.Until
	}
	cs, err := claim(o.At, o.Lease, hull, len(run))
	if err != nil {
		return err
	}
	if o.Status == state.Running {
		return nil
	}
	items := make([]state.Completion, 0, len(run))
	for i, c := range cs {
		u := run[i]
		if !c.Unit.Window.Equal(u.Window) {
			return fmt.Errorf("claim %s %s took %s, want %s", k.model, hull, c.Unit.Window, u.Window)
		}
		out := state.Outcome{Status: u.Status, At: u.At, BlockedReason: u.BlockedReason, Error: u.Error, RowsWritten: u.RowsWritten, Try: len(u.Tries) + 1}
		if u.Status == state.Applied {
			out.At = cmp.Or(u.AppliedAt, u.At)
			switch u.Fingerprint {
			case "":
				out.Fingerprint = fp
			case UnknownFingerprint:
			default:
				out.Fingerprint = u.Fingerprint
			}
		}
		items = append(items, state.Completion{Claim: c, Outcome: out})
	}
	for len(items) > 0 {
		batch := items[:min(len(items), completeBatch)]
		items = items[len(batch):]
		errs, err := s.CompleteBatch(ctx, batch)
		if err != nil {
			return fmt.Errorf("complete %s: %w", k.model, err)
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("complete %s: %w", k.model, err)
		}
	}
	return nil
}

// RunOpts is a run to seed in the run log.
type RunOpts struct {
	Env      string
	Pipeline string
	Models   []string
	Window   state.Window
	// StateMode is the run's STATE_MODE; "bulldozer" when empty.
	StateMode string
	// Status is how the run ended; RunRunning leaves it unfinished (as a
	// crash does), RunSucceeded when empty.
	Status     state.RunStatus
	Actor      string
	StartedAt  time.Time
	FinishedAt time.Time // StartedAt when zero
}

// Run seeds a run and returns its id.
func Run(t testing.TB, s state.Store, o RunOpts) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := s.CreateRun(ctx, state.Run{Env: o.Env, Pipeline: o.Pipeline, Models: o.Models, Window: o.Window,
		StateMode: cmp.Or(o.StateMode, "bulldozer"), Status: state.RunRunning, Actor: cmp.Or(o.Actor, "test"), StartedAt: o.StartedAt})
	if err != nil {
		t.Fatalf("enginetest: create run: %v", err)
	}
	if st := cmp.Or(o.Status, state.RunSucceeded); st != state.RunRunning {
		at := o.FinishedAt
		if at.IsZero() {
			at = o.StartedAt
		}
		if err := s.FinishRun(ctx, id, st, at); err != nil {
			t.Fatalf("enginetest: finish run %d: %v", id, err)
		}
	}
	return id
}

// TaskOpts is one attempt of a task under a run, a task-log entry.
type TaskOpts struct {
	RunID  int64
	TaskID int
	// Status is SUCCESS, FAILED, SKIPPED or IN_PROGRESS (left open);
	// SUCCESS when empty.
	Status      string
	StartedAt   time.Time
	FinishedAt  time.Time // StartedAt when zero
	RowsWritten *int64
	TargetCount *int64
	Error       string
}

// Task seeds a task attempt under a run and returns its attempt number.
func Task(t testing.TB, s state.Store, o TaskOpts) int {
	t.Helper()
	ctx := t.Context()
	attempt, err := s.StartTask(ctx, o.RunID, o.TaskID, o.StartedAt)
	if err != nil {
		t.Fatalf("enginetest: start task %d of run %d: %v", o.TaskID, o.RunID, err)
	}
	st := cmp.Or(o.Status, "SUCCESS")
	if st == "IN_PROGRESS" {
		return attempt
	}
	at := o.FinishedAt
	if at.IsZero() {
		at = o.StartedAt
	}
	if err := s.FinishTask(ctx, state.TaskRunEntry{RunID: o.RunID, TaskID: o.TaskID, Attempt: attempt, Status: st, StartedAt: o.StartedAt,
		FinishedAt: &at, RowsWritten: o.RowsWritten, TargetCount: o.TargetCount, Error: o.Error}); err != nil {
		t.Fatalf("enginetest: finish task %d of run %d: %v", o.TaskID, o.RunID, err)
	}
	return attempt
}

// Statuses counts model's units in s (the default environment) by status.
func Statuses(t testing.TB, s state.Store, model string) map[state.UnitStatus]int {
	t.Helper()
	st, err := s.Stats(t.Context(), "", model)
	if err != nil {
		t.Fatalf("enginetest: stats of %s: %v", model, err)
	}
	return st.Counts
}

// Models is every model registered in s's default environment.
func Models(t testing.TB, s state.Store) []state.ModelRecord {
	t.Helper()
	recs, err := s.Models(t.Context(), "")
	if err != nil {
		t.Fatalf("enginetest: registered models: %v", err)
	}
	return recs
}

// EachUnit calls fn with every unit q selects, in the store's order.
func EachUnit(t testing.TB, s state.Store, q state.UnitQuery, fn func(u state.Unit)) {
	t.Helper()
	err := s.ScanUnits(t.Context(), q, func(u state.Unit) error { fn(u); return nil })
	if err != nil {
		t.Fatalf("enginetest: units of %s: %v", q.Model, err)
	}
}
