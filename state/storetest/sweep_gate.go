package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// SweepGateMatchesReduce checks a store's SweepGate against
// state.ReduceSweep over SweepUnits, for every need and with and without a
// filter on the judged models. The state has what a reduction can get
// wrong: a fixed hourly model applied in runs that touch, some runs sharing
// one applied_at (they merge under NeedFreshness) and some not (they must
// stay apart: a window inside the run would otherwise take the newer
// applied_at and pass a freshness limit it fails); a flexible model whose
// applied units overlap; a timeless model's existence row; a model of
// another environment with the same name; holes of pending, failed and
// blocked units between the islands.
func SweepGateMatchesReduce(t *testing.T, s state.Store) {
	t.Helper()
	gr := storeAs[state.GateSweepReader](t, s, "SweepGate")
	sw := s.(state.SweepReader)
	ctx := t.Context()
	recs := []state.ModelRecord{sweepModel("g.fix", "fix"), sweepModel("g.flex", "flex"), sweepModel("g.idle", "fix"),
		sweepTimeless("g.timeless")}
	registerEnvs(t, s, recs, "", "dev")
	prefill(t, s, "", "g.fix", hourly(100, 300), at(0)) // late half first: rows out of window order
	prefill(t, s, "", "g.fix", hourly(0, 100), at(0))
	prefill(t, s, "dev", "g.fix", hourly(0, 50), at(0))
	prefill(t, s, "", "g.idle", hourly(0, 20), at(0))
	prefill(t, s, "", "g.timeless", []state.Window{{}}, at(0))
	r := rand.New(rand.NewPCG(7, 11))
	var flex []state.Window
	for h := 0; h < 200; h += 1 + r.IntN(3) {
		flex = append(flex, state.Window{Since: at(h), Until: at(h + 1 + r.IntN(5))})
	}
	prefill(t, s, "", "g.flex", flex, at(0))
	set := func(env, model string, w state.Window, to state.UnitStatus, appliedAt int) {
		t.Helper()
		if _, err := s.SetStatus(ctx, state.StatusChange{Env: env, Model: model, Window: w, From: []state.UnitStatus{state.Pending},
			To: to, AppliedAt: at(appliedAt), Now: at(400)}); err != nil {
			t.Fatal(err)
		}
	}
	// g.fix: touching runs, alternately with the same and a new applied_at.
	for i, h := 0, 0; h < 280; i++ {
		n := 1 + r.IntN(12)
		set("", "g.fix", win(h, h+n), state.Applied, 500+i/2)
		h += n
	}
	for range 12 { // holes: re-pended windows can't come back, so fail or block pending ones
		a := r.IntN(290)
		set("", "g.fix", win(a, a+1+r.IntN(4)), []state.UnitStatus{state.Failed, state.Blocked}[r.IntN(2)], 0)
	}
	for i := range 25 {
		a := r.IntN(200)
		set("", "g.flex", win(a, a+1+r.IntN(15)), []state.UnitStatus{state.Applied, state.Applied, state.Failed}[r.IntN(3)], 600+i%3)
	}
	set("", "g.timeless", state.Window{}, state.Applied, 700)
	set("dev", "g.fix", win(0, 30), state.Applied, 800)

	full := map[string][]state.SweepUnit{}
	if err := sw.SweepUnits(ctx, "", func(model string, us []state.SweepUnit) error {
		full[model] = slices.Clone(us)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	merged := 0
	for need := state.NeedNone; need <= state.NeedRows; need++ {
		for _, judged := range [][]string{nil, {"g.flex"}, {}} {
			q := state.SweepQuery{Outstanding: judged, Applied: map[string]state.SweepNeed{}}
			for _, r := range recs {
				q.Applied[r.Name] = need
			}
			q.Applied["g.idle"] = state.NeedNone
			got := map[string][]state.SweepUnit{}
			if err := gr.SweepGate(ctx, "", q, func(model string, us []state.SweepUnit) error {
				if _, dup := got[model]; dup {
					t.Errorf("%s handed over twice", model)
				}
				got[model] = us
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				want := state.ReduceSweep(slices.Clone(full[r.Name]), judged == nil || slices.Contains(judged, r.Name), q.Applied[r.Name])
				g, w := splitApplied(got[r.Name]), splitApplied(want)
				what := fmt.Sprintf("need %d, judging %v, %s", need, judged, r.Name)
				if !slices.Equal(g[0], w[0]) {
					t.Errorf("%s: applied rows %v, want %v", what, g[0], w[0])
				}
				if !slices.Equal(g[1], w[1]) {
					t.Errorf("%s: outstanding units %v, want %v", what, g[1], w[1])
				}
				if need == state.NeedFreshness && r.Name == "g.fix" && judged == nil {
					merged = len(full[r.Name]) - len(want)
				}
			}
		}
	}
	// The state must make NeedFreshness merge some rows and keep others
	// apart, or the check above proves little.
	if merged == 0 {
		t.Error("no g.fix row merged under NeedFreshness")
	}
}

// splitApplied is us's applied rows and its other units, each in the order
// us has them.
func splitApplied(us []state.SweepUnit) [2][]state.SweepUnit {
	var out [2][]state.SweepUnit
	for _, u := range us {
		k := 1
		if u.Status == state.CodeApplied {
			k = 0
		}
		out[k] = append(out[k], u)
	}
	return out
}
