package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// fixedReference is what a fixed model's plan holds, worked out the way the
// list-based planner did before plans kept runs (issue 21): from every unit
// in memory, window by window. hours maps each hour of planSpec's world
// (0..7; the contract range is [0, 6)) holding a unit to its status.
func fixedReference(hours map[int]state.UnitStatus, mode spec.StateMode, w *[2]int) (create, reset, run []int, refused bool) {
	in := func(h int) bool { return w == nil || w[0] <= h && h+1 <= w[1] }
	lo, hi := 0, 6
	if w != nil {
		lo, hi = max(lo, w[0]), min(hi, w[1])
	}
	if mode == spec.Bulldozer && w == nil {
		mode = spec.Discover
	}
	switch mode {
	case spec.Torch:
		for _, st := range hours {
			if st == state.Running {
				return nil, nil, nil, true
			}
		}
		for h := 0; h < 6; h++ {
			create = append(create, h)
			if in(h) {
				run = append(run, h)
			}
		}
		return create, nil, run, false
	case spec.Discover, spec.Bulldozer:
		resetFrom := []state.UnitStatus{state.Blocked, state.Failed}
		runs := []state.UnitStatus{state.Pending, state.Blocked, state.Failed}
		if mode == spec.Bulldozer {
			resetFrom = []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
			runs = []state.UnitStatus{state.Pending, state.Applied, state.Blocked, state.Failed, state.Running}
		}
		for h := 0; h < 8; h++ {
			st, ok := hours[h]
			switch {
			case !ok && h >= lo && h < hi:
				create = append(create, h)
				run = append(run, h)
			case !ok || !in(h):
			case mode == spec.Bulldozer && st == state.Running:
				return nil, nil, nil, true
			default:
				if slices.Contains(resetFrom, st) {
					reset = append(reset, h)
				}
				if slices.Contains(runs, st) {
					run = append(run, h)
				}
			}
		}
	}
	return create, reset, run, false
}

func hourWindows(hs []int) []state.Window {
	var out []state.Window
	for _, h := range hs {
		out = append(out, win(fmt.Sprintf("%d:00-%d:00", h, h+1)))
	}
	return out
}

// TestPlanFixedMatchesTheListPlanner: over random states of a fixed model's
// hours (some outside the contract range, some running), random modes and
// run windows, the streaming planner creates, resets and runs exactly the
// windows the list-based one did, and refuses exactly where it refused.
func TestPlanFixedMatchesTheListPlanner(t *testing.T) {
	statuses := []state.UnitStatus{state.Pending, state.Applied, state.Blocked, state.Failed, state.Running}
	modes := []spec.StateMode{spec.Discover, spec.Bulldozer, spec.Torch}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := world(t, s, planSpec)
		r := rand.New(rand.NewPCG(21, 1))
		for c := range 40 {
			// The last case's running units come back (their hour-long
			// lease expired) so that they can be deleted.
			if _, err := s.ReleaseExpired(t.Context(), p0.Add(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(t.Context(), state.RemoveRequest{Model: "w.fixed", Window: win("0:00-8:00"), Now: p0}); err != nil {
				t.Fatal(err)
			}
			hours := map[int]state.UnitStatus{}
			seeded := map[string]state.UnitStatus{}
			for h := range 8 {
				if r.IntN(3) > 0 {
					hours[h] = statuses[r.IntN(len(statuses))]
					seeded[fmt.Sprintf("%d:00-%d:00", h, h+1)] = hours[h]
				}
			}
			if len(seeded) > 0 {
				seed(t, e, "w.fixed", seeded)
			}
			req := RunRequest{Models: []string{"w.fixed"}, Mode: modes[r.IntN(len(modes))]}
			var w *[2]int
			if r.IntN(3) > 0 {
				a := r.IntN(8)
				b := a + 1 + r.IntN(8-a)
				w = &[2]int{a, b}
				req.Window = wp(fmt.Sprintf("%d:00-%d:00", a, b))
			}
			create, reset, run, refused := fixedReference(hours, req.Mode, w)
			what := fmt.Sprintf("case %d: %s, window %v, units %v", c, req.Mode, w, hours)
			p, err := e.Plan(t.Context(), req)
			if refused {
				if err == nil {
					t.Errorf("%s: planned, want it refused (a running unit would be reset)", what)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			mp := p.Models[0]
			for _, l := range []struct {
				name string
				got  Windows
				want []int
			}{{"Create", mp.Create, create}, {"Reset", mp.Reset, reset}, {"Run", mp.Run, run}} {
				if !windowsEqual(l.got.List(), hourWindows(l.want)) || l.got.Len() != len(l.want) {
					t.Errorf("%s: %s = %s (len %d), want %s", what, l.name, fmtWindows(l.got.List()), l.got.Len(), fmtWindows(hourWindows(l.want)))
				}
			}
			if req.Mode == spec.Torch && (mp.Delete == nil) != (len(hours) == 0) {
				t.Errorf("%s: Delete %+v over %d units", what, mp.Delete, len(hours))
			}
		}
	})
}
