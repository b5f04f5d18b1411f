package engine

import (
	"errors"
	"reflect"
	"testing"

	"github.com/bollhav/bollhav/graph"
)

const taskSpec = `models:
  - name: z.first
    pipeline: zeta
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: a.second
    pipeline: alpha
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream:
      - {name: z.first, contract: encapsulate}
      - {name: a.helper, contract: exists}
      - {name: other.registered, contract: whole}
    after: [{task: a.helper, on: always}]
    run: {command: ["true"]}
  - name: a.helper
    pipeline: alpha
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
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
  - name: a.x
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    after: [{task: b.y}]
    run: {command: ["true"]}
  - name: b.y
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    after: [{task: a.x, on: failure}]
    run: {command: ["true"]}
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
