package storetest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// RegionsMatchScan checks a store's SweepRegions against ScanUnits: for
// 600 random regions (more than one statement's worth) of a fixed hourly
// model, a flexible one whose units overlap (units of one to five hours,
// which a window can meet long before its start) and a model that is not
// registered, each region gets exactly the units ScanUnits gives for that
// window, in window order, with statuses and applied_at; regions of other
// environments stay apart; a region without a window is refused.
func RegionsMatchScan(t *testing.T, s state.Store) {
	t.Helper()
	rr := storeAs[state.RegionReader](t, s, "SweepRegions")
	ctx := t.Context()
	recs := []state.ModelRecord{sweepModel("r.fix", "fix"), sweepModel("r.flex", "flex")}
	registerEnvs(t, s, recs, "", "dev")
	prefill(t, s, "", "r.fix", hourly(0, 200), at(0))
	prefill(t, s, "dev", "r.fix", hourly(50, 60), at(0))
	r := rand.New(rand.NewPCG(21, 5))
	var flex []state.Window
	for h := 0; h < 200; h += 1 + r.IntN(3) {
		flex = append(flex, state.Window{Since: at(h), Until: at(h + 1 + r.IntN(5))})
	}
	prefill(t, s, "", "r.flex", flex, at(0))
	for i := range 30 {
		model := recs[i%2].Name
		a := r.IntN(200)
		w := state.Window{Since: at(a), Until: at(a + 1 + r.IntN(20))}
		to := []state.UnitStatus{state.Applied, state.Failed, state.Blocked}[r.IntN(3)]
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: model, Window: w, From: []state.UnitStatus{state.Pending},
			To: to, AppliedAt: at(300 + i), Now: at(300)}); err != nil {
			t.Fatal(err)
		}
	}

	var regions []state.Region
	for range 600 {
		model := []string{"r.fix", "r.flex", "r.flex", "r.nope"}[r.IntN(4)]
		a := r.IntN(220) - 10
		regions = append(regions, state.Region{Model: model, Window: state.Window{Since: at(a), Until: at(a + 1 + r.IntN(30))}})
	}
	seen := 0
	err := rr.SweepRegions(ctx, "", regions, func(i int, got []state.SweepUnit) error {
		if i != seen {
			t.Fatalf("region %d handed over as %d", seen, i)
		}
		seen++
		var want []state.SweepUnit
		err := s.ScanUnits(ctx, state.UnitQuery{Model: regions[i].Model, Window: regions[i].Window}, func(u state.Unit) error {
			want = append(want, state.SweepUnitOf(u))
			return nil
		})
		if err != nil && regions[i].Model != "r.nope" {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("region %d (%s %s): read %v, ScanUnits %v", i, regions[i].Model, regions[i].Window, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(regions) {
		t.Fatalf("%d regions handed over, want %d", seen, len(regions))
	}
	// The dev environment holds only its own ten hours.
	n := 0
	if err := rr.SweepRegions(ctx, "dev", []state.Region{{Model: "r.fix", Window: state.Window{Since: at(0), Until: at(200)}}}, func(_ int, us []state.SweepUnit) error {
		n = len(us)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("the dev environment's r.fix read %d units, want 10", n)
	}
	err = rr.SweepRegions(ctx, "", []state.Region{{Model: "r.fix"}}, func(int, []state.SweepUnit) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "r.fix") {
		t.Errorf("a region without a window: %v; want an error naming the model", err)
	}
}
