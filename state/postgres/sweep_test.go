package postgres

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// SweepUnits must return exactly what ScanUnits holds, model by model in
// window order, also when prefills out of window order and updates have
// moved a model's rows around the heap.
func TestSweepUnitsMatchesScanUnits(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	var recs []state.ModelRecord
	for i := range 3 {
		recs = append(recs, state.ModelRecord{Name: fmt.Sprintf("m.n%d", i), Pipeline: "p", Temporality: "temporal",
			Flexibility: "fix", Interval: "1h", Timezone: "UTC", Start: t0, Definition: []byte(`{}`), ContentHash: "x"})
	}
	recs = append(recs, state.ModelRecord{Name: "m.timeless", Pipeline: "p", Temporality: "timeless", Definition: []byte(`{}`), ContentHash: "x"})
	if _, err := s.Register(ctx, "", recs, nil, at(0)); err != nil {
		t.Fatal(err)
	}
	hours := func(from, to int) []state.Window {
		var ws []state.Window
		for h := from; h < to; h++ {
			ws = append(ws, state.Window{Since: at(h), Until: at(h + 1)})
		}
		return ws
	}
	// Late hours prefilled first.
	for _, batch := range [][2]int{{400, 800}, {0, 400}} {
		for _, r := range recs[:3] {
			if _, err := s.Prefill(ctx, "", r.Name, hours(batch[0], batch[1]), at(0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Prefill(ctx, "", "m.timeless", []state.Window{{}}, at(0)); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		w := state.Window{Since: at(100 * i), Until: at(100*i + 300)}
		if r.Temporality == "timeless" {
			w = state.Window{}
		}
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: r.Name, Window: w, From: []state.UnitStatus{state.Pending},
			To: state.Applied, AppliedAt: at(900 + i), Now: at(900)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "m.n1", Window: state.Window{Since: at(600), Until: at(620)},
		From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: at(900)}); err != nil {
		t.Fatal(err)
	}

	got := map[string][]state.SweepUnit{}
	err := s.SweepUnits(ctx, "", func(model string, us []state.SweepUnit) error {
		if _, dup := got[model]; dup {
			t.Errorf("%s handed over twice", model)
		}
		got[model] = us
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("swept %d models, want %d", len(got), len(recs))
	}
	for _, r := range recs {
		var want []state.SweepUnit
		err := s.ScanUnits(ctx, state.UnitQuery{Model: r.Name}, func(u state.Unit) error {
			want = append(want, state.SweepUnitOf(u))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[r.Name], want) {
			t.Errorf("%s: swept %d units, scanned %d, or they differ", r.Name, len(got[r.Name]), len(want))
		}
	}
	if u := got["m.timeless"]; len(u) != 1 || u[0].Since != 0 || u[0].Until != 0 || u[0].Status != state.CodeApplied || u[0].AppliedAt != at(903).UnixMicro() {
		t.Errorf("the existence row swept as %+v", u)
	}
}
