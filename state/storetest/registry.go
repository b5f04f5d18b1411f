package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var registryTests = []test{
	{"RoundTrip", testRegistryRoundTrip},
	{"StableTaskIDs", testStableTaskIDs},
	{"EnvironmentsIsolated", testEnvironmentsIsolated},
	{"EdgesReplaced", testEdgesReplaced},
	{"NotFound", testNotFound},
	{"RegisterSaysWhatItCreatedAndChanged", testRegisterOutcome},
	{"ConcurrentRegistersCreateEachModelOnce", testConcurrentRegisters},
	{"RegisterSeqIsRegister", testRegisterSeq},
}

// testRegistryRoundTrip: everything a UI needs to open a model from the
// store alone comes back as registered.
func testRegistryRoundTrip(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	b := flexModel("mart.b")
	b.Timezone = "Europe/Stockholm"
	b.Interval = "1d"
	b.End = ptr(at(24 * 365))
	a := fixModel("raw.a")
	a.Pipeline = "ingest"
	v := timelessModel("ref.v")

	ids, err := s.Register(ctx, "", []state.ModelRecord{b, a, v}, nil, clock(1))
	must(t, "Register", err)
	// New models take the next free ids in the order given.
	eq(t, "task ids", ids.TaskIDs, map[string]int{"mart.b": 1, "raw.a": 2, "ref.v": 3})

	got, err := s.Models(ctx, "")
	must(t, "Models", err)
	names := make([]string, len(got))
	for i, m := range got {
		names[i] = m.Name
	}
	eq(t, "Models by name", names, []string{"mart.b", "raw.a", "ref.v"})
	if len(got) != 3 {
		t.FailNow()
	}
	b.TaskID, a.TaskID, v.TaskID = 1, 2, 3
	for i, want := range []state.ModelRecord{b, a, v} {
		checkModel(t, got[i], want, clock(1))
	}

	one, err := s.Model(ctx, "", "raw.a")
	must(t, "Model", err)
	checkModel(t, one, a, clock(1))

	// The heads are the same records without their definitions.
	heads, err := s.ModelHeads(ctx, "")
	must(t, "ModelHeads", err)
	if len(heads) != 3 {
		t.Fatalf("ModelHeads gave %d records, want 3", len(heads))
	}
	for i, want := range []state.ModelRecord{b, a, v} {
		h := heads[i]
		if h.Definition != nil {
			t.Errorf("head of %s has a definition: %s", want.Name, h.Definition)
		}
		h.Definition = want.Definition // the rest as Models gives it
		checkModel(t, h, want, clock(1))
	}
	if other, err := s.ModelHeads(ctx, "pr1"); err != nil || len(other) != 0 {
		t.Errorf("ModelHeads(pr1) = %d models, %v; want none", len(other), err)
	}

	if other, err := s.Models(ctx, "pr1"); err != nil || len(other) != 0 {
		t.Errorf("Models(pr1) = %d models, %v; want none", len(other), err)
	}
}

func checkModel(t *testing.T, got, want state.ModelRecord, registeredAt time.Time) {
	t.Helper()
	what := "model " + want.Name
	eq(t, what+" Env", got.Env, want.Env)
	eq(t, what+" Name", got.Name, want.Name)
	eq(t, what+" Pipeline", got.Pipeline, want.Pipeline)
	eq(t, what+" Temporality", got.Temporality, want.Temporality)
	eq(t, what+" Flexibility", got.Flexibility, want.Flexibility)
	eq(t, what+" Interval", got.Interval, want.Interval)
	eq(t, what+" Timezone", got.Timezone, want.Timezone)
	eqTime(t, what+" Start", got.Start, want.Start)
	eqTimePtr(t, what+" End", got.End, want.End)
	eqJSON(t, what+" Definition", got.Definition, want.Definition)
	eq(t, what+" ContentHash", got.ContentHash, want.ContentHash)
	eqTime(t, what+" RegisteredAt", got.RegisteredAt, registeredAt)
	eq(t, what+" TaskID", got.TaskID, want.TaskID)
}

// testStableTaskIDs: a task keeps its id for as long as it is registered, so
// run logs stay readable across spec changes; an unchanged definition keeps
// its registration time, a changed one replaces the definition.
func testStableTaskIDs(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	a, b, c := fixModel("a"), fixModel("b"), fixModel("c")
	ids, err := s.Register(ctx, "", []state.ModelRecord{a, b}, nil, clock(1))
	must(t, "Register a, b", err)
	eq(t, "first ids", ids.TaskIDs, map[string]int{"a": 1, "b": 2})

	ids, err = s.Register(ctx, "", []state.ModelRecord{c, b}, nil, clock(2))
	must(t, "Register c, b", err)
	eq(t, "ids after adding c", ids.TaskIDs, map[string]int{"b": 2, "c": 3})

	got, err := s.Model(ctx, "", "b")
	must(t, "Model b", err)
	eqTime(t, "unchanged b RegisteredAt", got.RegisteredAt, clock(1))
	got, err = s.Model(ctx, "", "a")
	must(t, "Model a", err)
	eq(t, "a, not named, keeps its id", got.TaskID, 1)

	a2 := a
	a2.Definition = []byte(`{"name": "a", "chunking": {"interval": "1d"}}`)
	a2.ContentHash = hash(string(a2.Definition))
	a2.Interval = "1d"
	ids, err = s.Register(ctx, "", []state.ModelRecord{a2}, nil, clock(3))
	must(t, "Register changed a", err)
	eq(t, "changed a keeps its id", ids.TaskIDs, map[string]int{"a": 1})
	got, err = s.Model(ctx, "", "a")
	must(t, "Model a", err)
	a2.TaskID = 1
	checkModel(t, got, a2, clock(3))

	// The next new model still gets the next free id.
	ids, err = s.Register(ctx, "", []state.ModelRecord{fixModel("d")}, nil, clock(4))
	must(t, "Register d", err)
	eq(t, "d", ids.TaskIDs, map[string]int{"d": 4})
}

// testEnvironmentsIsolated: a dev environment (SCHEMA_SUFFIX) has its own
// registrations, ids, edges and units; nothing leaks between environments.
func testEnvironmentsIsolated(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	eq(t, "prod ids", register(t, s, "", fixModel("a")), map[string]int{"a": 1})
	eq(t, "pr1 ids", register(t, s, "pr1", fixModel("z"), fixModel("a")), map[string]int{"z": 1, "a": 2})

	prod, err := s.Models(ctx, "")
	must(t, "Models prod", err)
	if len(prod) != 1 || prod[0].Name != "a" || prod[0].TaskID != 1 || prod[0].Env != "" {
		t.Errorf("Models(prod) = %+v, want only a with id 1", prod)
	}
	pr, err := s.Model(ctx, "pr1", "a")
	must(t, "Model pr1/a", err)
	eq(t, "pr1/a Env", pr.Env, "pr1")
	eq(t, "pr1/a TaskID", pr.TaskID, 2)
	_, err = s.Model(ctx, "", "z")
	wantNotFound(t, "Model(prod, z)", err)

	prefill(t, s, "", "a", hourly(0, 3), clock(1))
	prefill(t, s, "pr1", "a", hourly(0, 1), clock(1))
	eq(t, "prod units", len(scan(t, s, "", "a")), 3)
	eq(t, "pr1 units", briefs(scan(t, s, "pr1", "a")), []string{"a [0h,1h) pending"})
	cs := claim(t, s, "pr1", "", 10, clock(2))
	eq(t, "pr1 claims", claimBriefs(cs), []string{"a [0h,1h) running"})
	for _, c := range cs {
		eq(t, "claimed unit Env", c.Unit.Env, "pr1")
	}
	st, err := s.Stats(ctx, "", "a")
	must(t, "Stats", err)
	eq(t, "prod pending after pr1 claim", st.Counts[state.Pending], 3)
}

// testEdgesReplaced: registering a model replaces its outgoing edges and
// leaves the other models' edges alone.
func testEdgesReplaced(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	models := []state.ModelRecord{fixModel("a"), fixModel("b"), fixModel("c")}
	edges := []state.EdgeRecord{
		{Task: "c", DependsOn: "b", Type: "FAILURE"},
		{Task: "b", DependsOn: "a", Type: "SUCCESS", Implicit: true},
		{Task: "c", DependsOn: "a", Type: "ALWAYS"},
	}
	_, err := s.Register(ctx, "", models, edges, clock(1))
	must(t, "Register", err)
	got, err := s.Edges(ctx, "")
	must(t, "Edges", err)
	eq(t, "edges by task, then depends_on", got, []state.EdgeRecord{
		{Task: "b", DependsOn: "a", Type: "SUCCESS", Implicit: true},
		{Task: "c", DependsOn: "a", Type: "ALWAYS"},
		{Task: "c", DependsOn: "b", Type: "FAILURE"},
	})

	_, err = s.Register(ctx, "", models[2:], []state.EdgeRecord{{Task: "c", DependsOn: "other.x", Type: "HAS_DATA", Cross: true}}, clock(2))
	must(t, "Register c", err)
	got, err = s.Edges(ctx, "")
	must(t, "Edges", err)
	eq(t, "edges after re-registering c", got, []state.EdgeRecord{
		{Task: "b", DependsOn: "a", Type: "SUCCESS", Implicit: true},
		{Task: "c", DependsOn: "other.x", Type: "HAS_DATA", Cross: true},
	})

	_, err = s.Register(ctx, "", models[1:2], nil, clock(3))
	must(t, "Register b without edges", err)
	got, err = s.Edges(ctx, "")
	must(t, "Edges", err)
	eq(t, "edges after re-registering b without edges", got, []state.EdgeRecord{
		{Task: "c", DependsOn: "other.x", Type: "HAS_DATA", Cross: true},
	})

	_, err = s.Register(ctx, "pr1", models[:1], nil, clock(4))
	must(t, "Register pr1", err)
	got, err = s.Edges(ctx, "pr1")
	must(t, "Edges pr1", err)
	eq(t, "pr1 edges", len(got), 0)
}

// testNotFound: a model or run that does not exist is ErrNotFound, never an
// empty success a caller could mistake for "nothing to do".
func testNotFound(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "pr1", fixModel("ghost"))
	_, err := s.Model(ctx, "", "ghost")
	wantNotFound(t, "Model", err)
	_, err = s.Prefill(ctx, state.PrefillRequest{Model: "ghost", Windows: hourly(0, 1), Now: clock(1)})
	wantNotFound(t, "Prefill", err)
	err = s.ScanUnits(ctx, state.UnitQuery{Env: "", Model: "ghost"}, func(state.Unit) error { return nil })
	wantNotFound(t, "ScanUnits", err)
	_, err = s.Stats(ctx, "", "ghost")
	wantNotFound(t, "Stats", err)
	_, err = s.Applied(ctx, "", "ghost", state.Window{})
	wantNotFound(t, "Applied", err)
	_, err = s.Coverage(ctx, "", "ghost", state.Window{})
	wantNotFound(t, "Coverage", err)
	_, err = s.SetStatus(ctx, state.StatusChange{Model: "ghost", From: []state.UnitStatus{state.Pending}, To: state.Applied, Now: clock(1)})
	wantNotFound(t, "SetStatus", err)
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "ghost", Now: clock(1)})
	wantNotFound(t, "Delete", err)
	_, err = s.Uncover(ctx, state.RemoveRequest{Model: "ghost", Now: clock(1)})
	wantNotFound(t, "Uncover", err)

	_, err = s.GetRun(ctx, 999)
	wantNotFound(t, "GetRun", err)
	wantNotFound(t, "FinishRun", s.FinishRun(ctx, 999, state.RunSucceeded, clock(1)))
	_, err = s.StartTask(ctx, 999, 1, clock(1))
	wantNotFound(t, "StartTask", err)
	id, err := s.CreateRun(ctx, state.Run{StateMode: "discover", StartedAt: clock(1)})
	must(t, "CreateRun", err)
	wantNotFound(t, "FinishTask of an attempt never started", s.FinishTask(ctx, state.TaskRunEntry{RunID: id, TaskID: 1, Attempt: 1, Status: "SUCCESS", FinishedAt: ptr(clock(2))}))
}

// testRegisterOutcome: Register says which of the models it was given it
// created (no registration before, in this environment) and which it
// changed (another content hash, pipeline or shape); the rest it left as
// they were, a second registration of the same records included.
func testRegisterOutcome(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	a, b, c := fixModel("a"), fixModel("b"), fixModel("c")
	reg, err := s.Register(ctx, "", []state.ModelRecord{b, a}, nil, clock(1))
	must(t, "Register b, a", err)
	eq(t, "created on an empty store, in the order given", reg.Created, []string{"b", "a"})
	eq(t, "changed on an empty store", len(reg.Changed), 0)

	reg, err = s.Register(ctx, "", []state.ModelRecord{a, b}, nil, clock(2))
	must(t, "Register a, b again", err)
	eq(t, "created by the same records again", len(reg.Created), 0)
	eq(t, "changed by the same records again", len(reg.Changed), 0)
	eq(t, "ids of the same records again", reg.TaskIDs, map[string]int{"b": 1, "a": 2})

	// A new definition (content hash); a new grain under the same hash (a
	// record written by hand, not by the engine); the same again; a new
	// model; and one in another environment, new there.
	b2 := b
	b2.Definition = []byte(`{"name": "b", "v": 2}`)
	b2.ContentHash = hash(string(b2.Definition))
	a2 := a
	a2.Interval, a2.Start = "1d", t0.Add(time.Microsecond)
	reg, err = s.Register(ctx, "", []state.ModelRecord{c, b2, a2}, nil, clock(3))
	must(t, "Register c, b2, a2", err)
	eq(t, "created: the new model", reg.Created, []string{"c"})
	eq(t, "changed: a new definition, a new shape", reg.Changed, []string{"b", "a"})
	eq(t, "ids", reg.TaskIDs, map[string]int{"a": 2, "b": 1, "c": 3})

	reg, err = s.Register(ctx, "", []state.ModelRecord{a2, b2, c}, nil, clock(4))
	must(t, "Register a2, b2, c again", err)
	if len(reg.Created)+len(reg.Changed) != 0 {
		t.Errorf("registering the stored records again created %v, changed %v; want neither", reg.Created, reg.Changed)
	}
	reg, err = s.Register(ctx, "pr1", []state.ModelRecord{a}, nil, clock(5))
	must(t, "Register a in pr1", err)
	eq(t, "created in pr1", reg.Created, []string{"a"})
}

// testConcurrentRegisters: four registrations of the same three new models
// at once (on two handles where the backend can open a second, as two
// processes would) create each model exactly once between them, and give
// every caller the same task ids: the store says what it created from what
// it found under its register lock, not from what a caller read before.
func testConcurrentRegisters(t *testing.T, s state.Store, c *config) {
	models := []state.ModelRecord{fixModel("a"), flexModel("b"), timelessModel("c")}
	for round := range 5 {
		env := fmt.Sprint("r", round)
		var mu sync.Mutex
		var created []string
		ids := map[string]map[string]int{}
		concurrently(t, s, c, 4, func(st state.Store, name string) error {
			reg, err := st.Register(t.Context(), env, models, nil, clock(round))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			mu.Lock()
			defer mu.Unlock()
			created = append(created, reg.Created...)
			if len(reg.Changed) > 0 {
				return fmt.Errorf("%s: changed %v, which every registration gives the same records", name, reg.Changed)
			}
			ids[name] = reg.TaskIDs
			return nil
		})
		slices.Sort(created)
		eq(t, env+": created between the four, each once", created, []string{"a", "b", "c"})
		for name, got := range ids {
			eq(t, env+": task ids of "+name, got, ids["w0"])
		}
	}
}

// testRegisterSeq: RegisterSeq registers what it is yielded as Register
// registers the same records — ids in the order given, what it created
// and changed, the registrations, their edges and definitions — over more
// models than a store may write in one statement.
func testRegisterSeq(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	const n = 2500
	models := make([]state.ModelRecord, n)
	var edges []state.EdgeRecord
	for i := range models {
		models[i] = withDefinition(fixModel(fmt.Sprintf("m%04d", i)), fmt.Sprintf(`{"m": %d}`, i), fmt.Sprintf("%016x", i))
		if i > 0 {
			edges = append(edges, state.EdgeRecord{Task: models[i].Name, DependsOn: models[i-1].Name, Type: "SUCCESS", Implicit: true})
		}
	}
	yielded := 0
	seq := func(recs []state.ModelRecord) func(func(state.ModelRecord) bool) {
		return func(yield func(state.ModelRecord) bool) {
			for _, m := range recs {
				yielded++
				if !yield(m) {
					return
				}
			}
		}
	}
	reg, err := s.RegisterSeq(ctx, "", seq(models), edges, clock(1))
	must(t, "RegisterSeq", err)
	eq(t, "models yielded", yielded, n)
	eq(t, "created", len(reg.Created), n)
	if len(reg.Created) == n {
		eq(t, "created in the order given", []string{reg.Created[0], reg.Created[n-1]}, []string{"m0000", fmt.Sprintf("m%04d", n-1)})
	}
	for i, m := range models {
		if reg.TaskIDs[m.Name] != i+1 {
			t.Fatalf("task id of %s = %d, want %d (new models take the next ids in the order given)", m.Name, reg.TaskIDs[m.Name], i+1)
		}
	}
	got, err := s.Models(ctx, "")
	must(t, "Models", err)
	eq(t, "registered", len(got), n)
	es, err := s.Edges(ctx, "")
	must(t, "Edges", err)
	eq(t, "edges", len(es), n-1)

	// The same records again, but one definition changed past the first
	// thousand, and the edges of the models named replaced.
	again := slices.Clone(models)
	again[1500] = withDefinition(again[1500], `{"m": "changed"}`, "00000000000000ff")
	reg, err = s.RegisterSeq(ctx, "", seq(again), edges[:10], clock(2))
	must(t, "RegisterSeq again", err)
	eq(t, "created again", len(reg.Created), 0)
	eq(t, "changed again", reg.Changed, []string{"m1500"})
	es, err = s.Edges(ctx, "")
	must(t, "Edges", err)
	eq(t, "edges after registering with ten", len(es), 10)
	ds, err := s.Definitions(ctx, "", "m1500")
	must(t, "Definitions", err)
	eq(t, "definitions kept of m1500", len(ds), 2)
	one, err := s.Model(ctx, "", "m1500")
	must(t, "Model", err)
	eqJSON(t, "m1500's definition", one.Definition, []byte(`{"m": "changed"}`))
}
