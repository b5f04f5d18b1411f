package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

func TestApplyRegistersTheSpec(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		sp, err := spec.Load("../examples/shop/bollhav.yaml")
		if err != nil {
			t.Fatal(err)
		}
		e := New(s, sp, Options{Actor: "tester", Env: spec.Env{Suffix: "pr7"}})
		res, err := e.Apply(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Created) != len(sp.Models) || len(res.Changed)+len(res.Unchanged) != 0 {
			t.Errorf("first apply: %+v", res)
		}
		recs, err := s.Models(t.Context(), "pr7")
		if err != nil || len(recs) != len(sp.Models) {
			t.Fatalf("registered %d models (%v)", len(recs), err)
		}
		for _, rec := range recs {
			m := sp.Model(rec.Name)
			if !strings.HasPrefix(rec.ContentHash, "sha256:") || rec.ContentHash != spec.ContentHash(rec.Definition) {
				t.Errorf("%s: hash %s", rec.Name, rec.ContentHash)
			}
			if rec.Temporality != m.Temporality.String() || rec.Pipeline != m.Pipeline {
				t.Errorf("%s: %+v", rec.Name, rec)
			}
			if m.Temporality == spec.Temporal && (rec.Interval != m.Chunking.Interval.String() || rec.Flexibility != m.Chunking.Flexibility.String() ||
				rec.Timezone != m.Chunking.Location.String() || !rec.Start.Equal(m.Chunking.Start)) {
				t.Errorf("%s: grain %+v", rec.Name, rec)
			}
			// The registration alone rebuilds the definition.
			back, err := spec.ModelFromRecord(rec)
			if err != nil {
				t.Fatalf("%s: ModelFromRecord: %v", rec.Name, err)
			}
			if got, want := spec.DefinitionOf(back).JSON(), spec.DefinitionOf(m).JSON(); string(got) != string(want) {
				t.Errorf("%s: round trip\n got  %s\n want %s", rec.Name, got, want)
			}
			var generic map[string]any
			if err := json.Unmarshal(rec.Definition, &generic); err != nil || generic["version"] != float64(spec.DefinitionVersion) {
				t.Errorf("%s: definition %s", rec.Name, rec.Definition)
			}
		}
		edges, err := s.Edges(t.Context(), "pr7")
		if err != nil || len(edges) == 0 {
			t.Fatalf("edges %v %v", edges, err)
		}
		var cross, implicit bool
		for _, ed := range edges {
			cross = cross || ed.Cross
			implicit = implicit || ed.Implicit
		}
		if !cross || !implicit {
			t.Errorf("edges lack cross (%v) or implicit (%v) ones: %+v", cross, implicit, edges)
		}

		res2, err := e.Apply(t.Context())
		if err != nil || len(res2.Unchanged) != len(sp.Models) {
			t.Errorf("second apply: %+v %v", res2, err)
		}
		ids := map[string]int{}
		for _, a := range res.Created {
			ids[a.Name] = a.TaskID
		}
		for _, a := range res2.Unchanged {
			if ids[a.Name] != a.TaskID {
				t.Errorf("%s: task id %d then %d", a.Name, ids[a.Name], a.TaskID)
			}
		}
		log, _ := s.AuditLog(t.Context(), 0)
		if len(log) != 2 || log[0].Action != "apply" || log[0].Actor != "tester" || log[0].Args["env"] != "pr7" ||
			!strings.Contains(log[0].Outcome, "10 unchanged") {
			t.Errorf("audit log %+v", log)
		}
	})
}

// TestConcurrentAppliesCreateEachModelOnce: four applies of one spec at
// once on a fresh environment (four engines, as four processes) each
// report what the store's registration did, so between them every model is
// created exactly once; the three others find it unchanged. Counting from
// the registry read before the register lock had every one of them print
// "3 created" (issue 35).
func TestConcurrentAppliesCreateEachModelOnce(t *testing.T) {
	sp := enginetest.Parse(t, `
models:
  - name: raw.a
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
  - name: stg.b
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.a, contract: encapsulate}]
  - name: ref.c
    temporality: timeless
`)
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		for round := range 5 {
			env := spec.Env{Suffix: fmt.Sprint("r", round)}
			var (
				wg                 sync.WaitGroup
				mu                 sync.Mutex
				created, unchanged []string
			)
			start := make(chan struct{})
			for k := range 4 {
				e := New(s, sp, Options{Actor: fmt.Sprint("apply", k), Env: env})
				wg.Go(func() {
					<-start
					res, err := e.Apply(t.Context())
					if err != nil {
						t.Errorf("round %d, apply %d: %v", round, k, err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					for _, m := range res.Created {
						created = append(created, m.Name)
					}
					for _, m := range res.Unchanged {
						unchanged = append(unchanged, m.Name)
					}
					if len(res.Changed) > 0 {
						t.Errorf("round %d, apply %d changed %v: every apply registers the same spec", round, k, res.Changed)
					}
				})
			}
			close(start)
			wg.Wait()
			slices.Sort(created)
			if want := []string{"raw.a", "ref.c", "stg.b"}; !slices.Equal(created, want) {
				t.Errorf("round %d: the four applies created %v between them, want each model once: %v", round, created, want)
			}
			if len(unchanged) != 9 {
				t.Errorf("round %d: %d unchanged between them, want 9 (each model, three times)", round, len(unchanged))
			}
		}
	})
}

func TestDefinitionIsStable(t *testing.T) {
	a := mustParse(t, planSpec)
	b := mustParse(t, "# a comment moves every line\n"+planSpec)
	for i := range a.Models {
		ra, rb := spec.ModelRecord("", a.Models[i], state.Interval{}), spec.ModelRecord("", b.Models[i], state.Interval{})
		if ra.ContentHash != rb.ContentHash {
			t.Errorf("%s: hash depends on position", a.Models[i].Name)
		}
	}
	c := mustParse(t, strings.Replace(planSpec, `run: {command: ["true"]}`, `run: {command: ["false"]}`, 1))
	if spec.ModelRecord("", a.Models[0], state.Interval{}).ContentHash == spec.ModelRecord("", c.Models[0], state.Interval{}).ContentHash {
		t.Error("a changed command keeps the hash")
	}
	if !reflect.DeepEqual(spec.DefinitionOf(a.Models[1]).Upstream[0], spec.SourceDef{Name: "w.fixed", Type: "model", Model: a.Models[1].Upstream[0].Model, Contract: "ENCAPSULATE"}) {
		t.Errorf("upstream mirror %+v", spec.DefinitionOf(a.Models[1]).Upstream[0])
	}
}

const taskSpec = `models:
  - {name: z.first, pipeline: zeta, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - name: a.second
    pipeline: alpha
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: z.first, contract: encapsulate}
      - {name: a.helper, contract: exists}
      - {name: other.registered, contract: whole}
    after: [{task: a.helper, on: always}]
    run: {command: ["true"]}
  - {name: a.helper, pipeline: alpha, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

func TestTaskIDsAreStable(t *testing.T) {
	sp := mustParse(t, taskSpec)
	if got := AssignTaskIDs(sp, nil); !reflect.DeepEqual(got, map[string]int{"z.first": 1, "a.second": 2, "a.helper": 3}) {
		t.Fatalf("fresh ids in spec order: %v", got)
	}
	// The store knows a.helper as 7 and a retired model as 9: known ids are
	// kept, new models get the next free id after the highest known one.
	got := AssignTaskIDs(sp, map[string]int{"a.helper": 7, "old.retired": 9})
	if !reflect.DeepEqual(got, map[string]int{"z.first": 10, "a.second": 11, "a.helper": 7}) {
		t.Fatalf("ids with known ones: %v", got)
	}
}

func TestTaskEdgesFromSpec(t *testing.T) {
	sp := mustParse(t, taskSpec)
	same, cross := modelEdges(sp, sp.Model("a.second"))
	// The explicit ALWAYS edge to a.helper replaces its implicit SUCCESS edge.
	wantSame := []TaskEdge{{Task: "a.second", DependsOn: "a.helper", Type: graph.Always}}
	if !reflect.DeepEqual(same, wantSame) {
		t.Errorf("same-pipeline edges %+v, want %+v", same, wantSame)
	}
	// z.first lives in another pipeline; other.registered is not in the spec.
	wantCross := []CrossEdge{
		{Task: "a.second", DependsOn: "z.first", Pipeline: "zeta", Type: graph.Success, Implicit: true},
		{Task: "a.second", DependsOn: "other.registered", Type: graph.Success, Implicit: true},
	}
	if !reflect.DeepEqual(cross, wantCross) {
		t.Errorf("cross edges %+v, want %+v", cross, wantCross)
	}
}

func TestPipelineGraphs(t *testing.T) {
	sp := mustParse(t, taskSpec)
	ps, err := PipelineGraphs(sp, AssignTaskIDs(sp, nil))
	if err != nil {
		t.Fatal(err)
	}
	// alpha depends on zeta, so zeta comes first although alpha sorts first.
	if len(ps) != 2 || ps[0].Name != "zeta" || ps[1].Name != "alpha" {
		t.Fatalf("pipelines %v", ps)
	}
	alpha := ps[1]
	if !reflect.DeepEqual(alpha.Graph.Waves(), [][]int{{3}, {2}}) {
		t.Errorf("alpha waves %v", alpha.Graph.Waves())
	}
	// a.second counts its two cross-pipeline edges in its run condition.
	if n := alpha.Graph.TotalEdgeCount(2); n != 3 {
		t.Errorf("a.second has %d edges, want 3 (1 same-pipeline + 2 cross)", n)
	}
	if alpha.ModelName(3) != "a.helper" {
		t.Errorf("task 3 is %q", alpha.ModelName(3))
	}
}

func TestPipelineCycleNamesModels(t *testing.T) {
	sp := mustParse(t, `models:
  - {name: a.x, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: b.y}], run: {command: ["true"]}}
  - {name: b.y, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     after: [{task: a.x, on: failure}], run: {command: ["true"]}}
`)
	_, err := PipelineGraphs(sp, AssignTaskIDs(sp, nil))
	var ce *graph.CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CycleError, got %v", err)
	}
	if want := "pipeline default: the task dependencies form a cycle, so no order can run them: a.x → b.y → a.x"; err.Error() != want {
		t.Errorf("message\n got %q\nwant %q", err.Error(), want)
	}
}
