package engine

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// A plan that runs no unit says why: a discover over applied windows keeps
// them (a bulldozer loads them again), a window past the contract range is
// its warning; a plan that runs something says nothing.
func TestPlanNothingToRunSaysWhy(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		for _, c := range []struct {
			mode   spec.StateMode
			window string
			want   string
		}{
			{spec.Discover, "0:00-2:00", "every unit in the window is applied: discover keeps applied units, bulldozer loads them again"},
			{spec.Discover, "2:00-6:00", ""},
			{spec.Bulldozer, "0:00-2:00", ""},
			{spec.Discover, "7:00-8:00", "w.fixed: the run window"},
		} {
			p, _ := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: c.mode, Window: wp(c.window)})
			got := p.NothingToRun()
			if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
				t.Errorf("%s %s: NothingToRun %q, want %q", c.mode, c.window, got, c.want)
			}
		}
	})
}

// RerunApplied counts the applied units a plan runs again: a bulldozer's
// reset applied units, a torch's deleted ones inside its window, a
// flexible bulldozer's uncovered ones; a discover none. Only a model whose
// query appends is warned of (its rows are added again); a command's
// writes are its own.
func TestPlanCountsTheAppliedUnitsItRunsAgain(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		seed(t, e, "w.flex", flexState)
		for _, c := range []struct {
			model  string
			mode   spec.StateMode
			window string
			want   int
		}{
			{"w.fixed", spec.Bulldozer, "0:00-3:00", 2}, // 00 and 01 applied; 02 failed
			{"w.fixed", spec.Torch, "0:00-2:00", 2},
			{"w.fixed", spec.Torch, "1:00-2:00", 1},
			{"w.fixed", spec.Discover, "0:00-6:00", 0},
			{"w.flex", spec.Bulldozer, "1:00-3:00", 2}, // [01:00, 02:00) and [02:00, 02:30)
			{"w.flex", spec.Discover, "0:00-6:00", 0},
		} {
			_, mp := mustPlan(t, e, RunRequest{Models: []string{c.model}, Mode: c.mode, Window: wp(c.window)})
			if mp.RerunApplied != c.want {
				t.Errorf("%s %s %s: RerunApplied %d, want %d", c.model, c.mode, c.window, mp.RerunApplied, c.want)
			}
			if hasWarning(mp, "append") {
				t.Errorf("%s (a command) is warned of append: %v", c.model, mp.Warnings)
			}
		}
	})
}

// A model whose query appends is warned of, with the count, when the plan
// runs applied windows again, and not when it runs only failed ones.
func TestPlanWarnsOfAppendRowsAddedAgain(t *testing.T) {
	const appendSpec = `models:
  - {name: w.app, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {query: "SELECT :since AS h", write: {mode: append}}}
`
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := world(t, s, appendSpec)
		seed(t, e, "w.app", map[string]state.UnitStatus{"0:00-1:00": state.Applied, "1:00-2:00": state.Applied, "2:00-3:00": state.Failed})
		_, mp := mustPlan(t, e, RunRequest{Models: []string{"w.app"}, Mode: spec.Bulldozer, Window: wp("0:00-3:00")})
		if !hasWarning(mp, "writes with append: the 2 applied windows it runs again get their rows added once more") {
			t.Errorf("bulldozer: warnings %q", mp.Warnings)
		}
		_, mp = mustPlan(t, e, RunRequest{Models: []string{"w.app"}, Mode: spec.Bulldozer, Window: wp("2:00-3:00")})
		if hasWarning(mp, "append") {
			t.Errorf("a bulldozer of a failed window alone warns of append: %q", mp.Warnings)
		}
	})
}
