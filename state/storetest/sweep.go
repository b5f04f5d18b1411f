package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// SweepMatchesScan checks a store's SweepUnits against ScanUnits: every
// model handed over once, each with exactly the units ScanUnits holds, in
// window order. Three hourly models get `hours` units each, prefilled late
// half first so a model's rows are out of window order in the table, then
// overlapping applied and failed ranges rewrite some of them; a timeless
// model's existence row is applied. Each backend calls it with the knobs
// that make its own read path take its harder branch (more rows so
// PostgreSQL's heap is reordered, SQLite's read split into row ranges).
func SweepMatchesScan(t *testing.T, s state.Store, hours int) {
	t.Helper()
	sw := storeAs[state.SweepReader](t, s, "SweepUnits")
	ctx := t.Context()
	var recs []state.ModelRecord
	for i := range 3 {
		recs = append(recs, sweepModel(fmt.Sprintf("m.n%d", i), "fix"))
	}
	recs = append(recs, sweepTimeless("m.timeless"))
	registerEnvs(t, s, recs, "")
	// Late hours prefilled first.
	for _, batch := range [][2]int{{hours / 2, hours}, {0, hours / 2}} {
		for _, r := range recs[:3] {
			prefill(t, s, "", r.Name, hourly(batch[0], batch[1]), at(0))
		}
	}
	prefill(t, s, "", "m.timeless", []state.Window{{}}, at(0))
	step := hours / 8
	for i, r := range recs {
		w := state.Window{Since: at(step * i), Until: at(step*i + 3*step)}
		if r.Temporality == "timeless" {
			w = state.Window{}
		}
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: r.Name, Window: w, From: []state.UnitStatus{state.Pending},
			To: state.Applied, AppliedAt: at(hours + 100 + i), Now: at(hours + 100)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "m.n1", Window: state.Window{Since: at(6 * step), Until: at(6*step + step/4)},
		From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: at(hours + 100)}); err != nil {
		t.Fatal(err)
	}

	got := map[string][]state.SweepUnit{}
	err := sw.SweepUnits(ctx, "", func(model string, us []state.SweepUnit) error {
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
	if u := got["m.timeless"]; len(u) != 1 || u[0].Since != 0 || u[0].Until != 0 || u[0].Status != state.CodeApplied ||
		u[0].AppliedAt != at(hours+103).UnixMicro() {
		t.Errorf("the existence row swept as %+v", u)
	}
}
