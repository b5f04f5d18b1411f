package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
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

func TestDefinitionIsStable(t *testing.T) {
	a := mustParse(t, planSpec)
	b := mustParse(t, "# a comment moves every line\n"+planSpec)
	for i := range a.Models {
		ra, rb := modelRecord("", a.Models[i], state.Interval{}), modelRecord("", b.Models[i], state.Interval{})
		if ra.ContentHash != rb.ContentHash {
			t.Errorf("%s: hash depends on position", a.Models[i].Name)
		}
	}
	c := mustParse(t, strings.Replace(planSpec, `run: {command: ["true"]}`, `run: {command: ["false"]}`, 1))
	if modelRecord("", a.Models[0], state.Interval{}).ContentHash == modelRecord("", c.Models[0], state.Interval{}).ContentHash {
		t.Error("a changed command keeps the hash")
	}
	if !reflect.DeepEqual(spec.DefinitionOf(a.Models[1]).Upstream[0], spec.SourceDef{Name: "w.fixed", Type: "model", Model: a.Models[1].Upstream[0].Model, Contract: "ENCAPSULATE"}) {
		t.Errorf("upstream mirror %+v", spec.DefinitionOf(a.Models[1]).Upstream[0])
	}
}
