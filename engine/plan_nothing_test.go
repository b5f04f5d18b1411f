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
