package sqlite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// SweepUnits must return exactly what ScanUnits holds, model by model in
// window order, also when it reads the table as several rowid ranges and a
// model's rows are spread over them (prefilled in two batches, the second
// before the first in time).
func TestSweepUnitsMatchesScanUnits(t *testing.T) {
	defer func(n int64) { sweepSplit = n }(sweepSplit)
	sweepSplit = 1
	s := openTemp(t)
	ctx := t.Context()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hour := func(h int) time.Time { return start.Add(time.Duration(h) * time.Hour) }
	var recs []state.ModelRecord
	for i := range 3 {
		recs = append(recs, state.ModelRecord{Name: fmt.Sprintf("m.n%d", i), Pipeline: "p", Temporality: "temporal",
			Flexibility: "fix", Interval: "1h", Timezone: "UTC", Start: start, Definition: []byte(`{}`), ContentHash: "x"})
	}
	recs = append(recs, state.ModelRecord{Name: "m.timeless", Pipeline: "p", Temporality: "timeless", Definition: []byte(`{}`), ContentHash: "x"})
	if _, err := s.Register(ctx, "", recs, nil, hour(0)); err != nil {
		t.Fatal(err)
	}
	hours := func(from, to int) []state.Window {
		var ws []state.Window
		for h := from; h < to; h++ {
			ws = append(ws, state.Window{Since: hour(h), Until: hour(h + 1)})
		}
		return ws
	}
	for _, batch := range [][2]int{{50, 100}, {0, 50}} {
		for _, r := range recs[:3] {
			if _, err := s.Prefill(ctx, "", r.Name, hours(batch[0], batch[1]), hour(0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Prefill(ctx, "", "m.timeless", []state.Window{{}}, hour(0)); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		w := state.Window{Since: hour(10 * i), Until: hour(10*i + 30)}
		if r.Temporality == "timeless" {
			w = state.Window{}
		}
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: r.Name, Window: w, From: []state.UnitStatus{state.Pending},
			To: state.Applied, AppliedAt: hour(200 + i), Now: hour(200)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "m.n1", Window: state.Window{Since: hour(60), Until: hour(62)},
		From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: hour(200)}); err != nil {
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
			t.Errorf("%s: swept %v\nscanned %v", r.Name, got[r.Name], want)
		}
	}
	if u := got["m.timeless"]; len(u) != 1 || u[0].Since != 0 || u[0].Until != 0 || u[0].Status != state.CodeApplied || u[0].AppliedAt != hour(203).UnixMicro() {
		t.Errorf("the existence row swept as %+v", u)
	}
}
