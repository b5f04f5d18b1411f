package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// The fixed model's state in the STATE_MODE × fixed cells:
//
//	00-01 applied · 01-02 applied · 02-03 failed · 03-04 blocked · 04-05 pending · 05-06 (none)
var fixedState = map[string]state.UnitStatus{
	"0:00-1:00": state.Applied, "1:00-2:00": state.Applied, "2:00-3:00": state.Failed,
	"3:00-4:00": state.Blocked, "4:00-5:00": state.Pending,
}

// The flexible model's state in the STATE_MODE × flexible cells: coverage
// [01:00, 02:30) as two applied units, and a failed unit at 04:00-05:00.
var flexState = map[string]state.UnitStatus{
	"1:00-2:00": state.Applied, "2:00-2:30": state.Applied, "4:00-5:00": state.Failed,
}

func fixedWorld(t *testing.T, s state.Store) *Engine {
	e := world(t, s, planSpec)
	seed(t, e, "w.fixed", fixedState)
	return e
}

func flexWorld(t *testing.T, s state.Store) *Engine {
	e := world(t, s, planSpec)
	seed(t, e, "w.flex", flexState)
	return e
}

func TestPlanFixedDiscover(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Discover, Window: wp("2:00-6:00")})
		if mp.Mode != spec.Discover || mp.Chunk.String() != "1h" || !mp.ContractRange.Equal(win("0:00-6:00")) {
			t.Errorf("mode %s chunk %s range %s", mp.Mode, mp.Chunk, mp.ContractRange)
		}
		expectWindows(t, "Create", mp.Create.List(), "5:00-6:00")
		expectWindows(t, "Reset", mp.Reset.List(), "2:00-3:00", "3:00-4:00")
		expectWindows(t, "Run", mp.Run.List(), "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		if mp.Delete != nil || mp.Uncover != nil {
			t.Errorf("discover deletes %v uncovers %v", mp.Delete, mp.Uncover)
		}
		applyAndCheck(t, e, p)
	})
}

func TestPlanFixedDiscoverKeepsAppliedWindow(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Discover, Window: wp("0:00-2:00")})
		expectWindows(t, "Create", mp.Create.List())
		expectWindows(t, "Reset", mp.Reset.List())
		expectWindows(t, "Run", mp.Run.List())
		applyAndCheck(t, e, p)
	})
}

func TestPlanFixedDiscoverNoWindowReconcilesAll(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Discover})
		if mp.Window != nil {
			t.Errorf("window %v", mp.Window)
		}
		expectWindows(t, "Create", mp.Create.List(), "5:00-6:00")
		expectWindows(t, "Reset", mp.Reset.List(), "2:00-3:00", "3:00-4:00")
		expectWindows(t, "Run", mp.Run.List(), "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		applyAndCheck(t, e, p)
	})
}

func TestPlanFixedBulldozer(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Bulldozer, Window: wp("1:00-3:00")})
		if mp.Mode != spec.Bulldozer {
			t.Errorf("mode %s", mp.Mode)
		}
		expectWindows(t, "Create", mp.Create.List())
		expectWindows(t, "Reset", mp.Reset.List(), "1:00-2:00", "2:00-3:00")
		expectWindows(t, "Run", mp.Run.List(), "1:00-2:00", "2:00-3:00")
		applyAndCheck(t, e, p)
		if got := rowsString(snapshot(t, e, "w.fixed")); got != "00:00-01:00:applied 01:00-02:00:pending 02:00-03:00:pending 03:00-04:00:blocked 04:00-05:00:pending" {
			t.Errorf("after: %s", got)
		}
		assertAudited(t, e, "bulldozer", "reset 2")
	})
}

func TestPlanFixedBulldozerBeyondContractRange(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Bulldozer, Window: wp("4:00-8:00")})
		expectWindows(t, "Create", mp.Create.List(), "5:00-6:00")
		expectWindows(t, "Reset", mp.Reset.List())
		expectWindows(t, "Run", mp.Run.List(), "4:00-5:00", "5:00-6:00")
		if !hasWarning(mp, "outside the contract range") {
			t.Errorf("no warning about the window past the range: %v", mp.Warnings)
		}
		applyAndCheck(t, e, p)
	})
}

func TestPlanFixedBulldozerNoWindowRunsAsDiscover(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}})
		if p.Mode != spec.Bulldozer || mp.Mode != spec.Discover || !hasWarning(mp, "runs as discover") {
			t.Errorf("plan mode %s, model mode %s, warnings %v", p.Mode, mp.Mode, mp.Warnings)
		}
		expectWindows(t, "Create", mp.Create.List(), "5:00-6:00")
		expectWindows(t, "Reset", mp.Reset.List(), "2:00-3:00", "3:00-4:00")
		expectWindows(t, "Run", mp.Run.List(), "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		applyAndCheck(t, e, p)
	})
}

func TestPlanFixedTorch(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch, Window: wp("1:00-3:00")})
		if mp.Delete == nil || mp.Delete.Count != 5 || !mp.Delete.Hull.Equal(win("0:00-5:00")) {
			t.Errorf("Delete = %+v, want 5 units in 00:00-05:00", mp.Delete)
		}
		expectWindows(t, "Create", mp.Create.List(), "0:00-1:00", "1:00-2:00", "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		expectWindows(t, "Run", mp.Run.List(), "1:00-2:00", "2:00-3:00")
		applyAndCheck(t, e, p)
		assertAudited(t, e, "torch", "deleted 5")
	})
}

func TestPlanFixedTorchNoWindowRunsContractRange(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch})
		expectWindows(t, "Run", mp.Run.List(), "0:00-1:00", "1:00-2:00", "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		applyAndCheck(t, e, p)
	})
}

func TestPlanFlexibleDiscover(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Discover, Window: wp("0:30-4:30")})
		// Gaps of [00:30, 04:30) not held by a unit: [00:30, 01:00) and
		// [02:30, 04:00), sliced on the hourly grid from 00:00.
		expectWindows(t, "Create", mp.Create.List(), "0:30-1:00", "2:30-3:00", "3:00-4:00")
		expectWindows(t, "Reset", mp.Reset.List())
		expectWindows(t, "Run", mp.Run.List(), "0:30-1:00", "2:30-3:00", "3:00-4:00")
		if !hasWarning(mp, "failed unit") {
			t.Errorf("no warning about the failed unit crossing the window edge: %v", mp.Warnings)
		}
		applyAndCheck(t, e, p)
	})
}

func TestPlanFlexibleDiscoverNoWindow(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Discover})
		// The failed unit is reused (reset and run), never duplicated.
		expectWindows(t, "Create", mp.Create.List(), "0:00-1:00", "2:30-3:00", "3:00-4:00", "5:00-6:00")
		expectWindows(t, "Reset", mp.Reset.List(), "4:00-5:00")
		expectWindows(t, "Run", mp.Run.List(), "0:00-1:00", "2:30-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		applyAndCheck(t, e, p)
	})
}

func TestPlanFlexibleBulldozer(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Bulldozer, Window: wp("1:30-3:00")})
		expectWindows(t, "Uncover", mp.Uncover, "1:30-3:00")
		if mp.Uncovered == nil || mp.Uncovered.Count != 2 {
			t.Errorf("Uncovered = %+v, want 2 (01:00-02:00 trimmed, 02:00-02:30 deleted)", mp.Uncovered)
		}
		expectWindows(t, "Create", mp.Create.List(), "1:30-2:00", "2:00-3:00")
		expectWindows(t, "Run", mp.Run.List(), "1:30-2:00", "2:00-3:00")
		applyAndCheck(t, e, p)
		if got := rowsString(snapshot(t, e, "w.flex")); got != "01:00-01:30:applied 01:30-02:00:pending 02:00-03:00:pending 04:00-05:00:failed" {
			t.Errorf("after: %s", got)
		}
	})
}

func TestPlanFlexibleBulldozerNoWindowRunsAsDiscover(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Bulldozer})
		if mp.Mode != spec.Discover || !hasWarning(mp, "runs as discover") || mp.Uncover != nil {
			t.Errorf("mode %s uncover %v warnings %v", mp.Mode, mp.Uncover, mp.Warnings)
		}
		expectWindows(t, "Create", mp.Create.List(), "0:00-1:00", "2:30-3:00", "3:00-4:00", "5:00-6:00")
		applyAndCheck(t, e, p)
	})
}

func TestPlanFlexibleTorch(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Torch, Window: wp("1:30-3:00")})
		if len(mp.Uncover) != 1 || !mp.Uncover[0].IsZero() || mp.Uncovered.Count != 3 {
			t.Errorf("Uncover %v (%+v), want everything (3 units)", mp.Uncover, mp.Uncovered)
		}
		// Re-covered from zero, cut at the window's edges so no unit
		// crosses them.
		expectWindows(t, "Create", mp.Create.List(), "0:00-1:00", "1:00-1:30", "1:30-2:00", "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		expectWindows(t, "Run", mp.Run.List(), "1:30-2:00", "2:00-3:00")
		applyAndCheck(t, e, p)
		assertAudited(t, e, "torch", "uncovered 3")
	})
}

func TestPlanFlexibleTorchNoWindow(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Torch})
		expectWindows(t, "Run", mp.Run.List(), "0:00-1:00", "1:00-2:00", "2:00-3:00", "3:00-4:00", "4:00-5:00", "5:00-6:00")
		applyAndCheck(t, e, p)
	})
}

func TestPlanTimeless(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := world(t, s, planSpec)
		req := func(m spec.StateMode) RunRequest { return RunRequest{Models: []string{"w.config"}, Mode: m} }

		// discover: missing, so created and run.
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.config"}, Mode: spec.Discover, Window: wp("0:00-1:00")})
		if !hasWarning(mp, "ignored") || mp.Window != nil {
			t.Errorf("a window on a timeless model: warnings %v, window %v", mp.Warnings, mp.Window)
		}
		if mp.Create.Len() != 1 || !mp.Create.List()[0].IsZero() || mp.Run.Len() != 1 {
			t.Fatalf("discover of a missing row: create %v run %v", mp.Create.List(), mp.Run.List())
		}
		applyAndCheck(t, e, p)

		// discover: applied, so nothing.
		if _, err := e.store.SetStatus(t.Context(), state.StatusChange{Model: "w.config", From: []state.UnitStatus{state.Pending}, To: state.Applied, Now: p0}); err != nil {
			t.Fatal(err)
		}
		_, mp = mustPlan(t, e, req(spec.Discover))
		if mp.Create.Len()+mp.Reset.Len()+mp.Run.Len() != 0 {
			t.Errorf("discover of an applied row: %+v", mp)
		}

		// bulldozer: re-pended and run.
		p, mp = mustPlan(t, e, req(spec.Bulldozer))
		if mp.Mode != spec.Bulldozer || mp.Reset.Len() != 1 || mp.Run.Len() != 1 || mp.Create.Len() != 0 {
			t.Errorf("bulldozer: %+v", mp)
		}
		applyAndCheck(t, e, p)

		// torch: deleted and recreated.
		p, mp = mustPlan(t, e, req(spec.Torch))
		if mp.Delete == nil || mp.Delete.Count != 1 || mp.Create.Len() != 1 || mp.Run.Len() != 1 {
			t.Errorf("torch: %+v", mp)
		}
		applyAndCheck(t, e, p)
	})
}

func TestIntervalOverrideRechunksFlexible(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		two := state.MustInterval("2h")
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Discover, IntervalOverride: &two})
		if mp.Chunk != two || len(mp.Warnings) != 0 {
			t.Errorf("chunk %s warnings %v", mp.Chunk, mp.Warnings)
		}
		// The same gaps as at 1h, sliced on a 2h grid from 00:00: [02:30,
		// 04:00) is no longer cut at 03:00.
		expectWindows(t, "Create", mp.Create.List(), "0:00-1:00", "2:30-4:00", "5:00-6:00")
		applyAndCheck(t, e, p)

		// Bulldozer re-covers a window at the new chunk, cleanly.
		half := state.MustInterval("30m")
		p, mp = mustPlan(t, e, RunRequest{Models: []string{"w.flex"}, Mode: spec.Bulldozer, Window: wp("1:00-3:00"), IntervalOverride: &half})
		expectWindows(t, "Create", mp.Create.List(), "1:00-1:30", "1:30-2:00", "2:00-2:30", "2:30-3:00")
		applyAndCheck(t, e, p)
	})
}

func TestIntervalOverrideIgnoredOnFixedOutsideTorch(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		two := state.MustInterval("2h")
		for _, mode := range []spec.StateMode{spec.Discover, spec.Bulldozer} {
			p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: mode, Window: wp("1:00-3:00"), IntervalOverride: &two})
			if mp.Chunk.String() != "1h" || !hasWarning(mp, "INTERVAL_OVERRIDE 2h is ignored") || !hasWarning(mp, "--mode torch") {
				t.Errorf("%s: chunk %s warnings %v", mode, mp.Chunk, mp.Warnings)
			}
			if mp.Register || mp.Migrate != nil {
				t.Errorf("%s: re-registers (%v) or migrates (%v)", mode, mp.Register, mp.Migrate)
			}
			applyAndCheck(t, e, p)
		}
		if rec, _ := e.store.Model(t.Context(), "", "w.fixed"); rec.Interval != "1h" {
			t.Errorf("registered interval %s after ignored overrides", rec.Interval)
		}
	})
}

func TestIntervalOverrideMigratesFixedUnderTorch(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		two := state.MustInterval("2h")
		// A window aligned to the new 2h grid is accepted; one aligned
		// only to the old grid is not.
		if _, err := e.Plan(t.Context(), RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch, Window: wp("1:00-3:00"), IntervalOverride: &two}); err == nil {
			t.Error("a window off the new 2h grid was accepted")
		}
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch, Window: wp("2:00-4:00"), IntervalOverride: &two})
		if mp.Chunk != two || mp.Migrate == nil || !mp.Register || mp.Delete.Count != 5 {
			t.Errorf("chunk %s migrate %+v register %v delete %+v", mp.Chunk, mp.Migrate, mp.Register, mp.Delete)
		}
		expectWindows(t, "Create", mp.Create.List(), "0:00-2:00", "2:00-4:00", "4:00-6:00")
		expectWindows(t, "Run", mp.Run.List(), "2:00-4:00")
		applyAndCheck(t, e, p)
		rec, err := e.store.Model(t.Context(), "", "w.fixed")
		if err != nil || rec.Interval != "2h" {
			t.Fatalf("registered interval %s (%v), want the migrated 2h", rec.Interval, err)
		}
		m, err := spec.ModelFromRecord(rec)
		if err != nil || m.Chunking.Interval != two {
			t.Errorf("ModelFromRecord: %+v %v", m, err)
		}
		// Outside torch the spec's 1h now differs from the registered 2h:
		// refused, saying to run torch.
		_, err = e.Plan(t.Context(), RunRequest{Models: []string{"w.fixed"}, Mode: spec.Discover})
		var gc *GrainChangeError
		if !errors.As(err, &gc) || !strings.Contains(err.Error(), "--mode torch") {
			t.Errorf("discover after a migration the spec does not reflect: %v", err)
		}
	})
}

func TestGrainChangeRefused(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		changed := strings.Replace(planSpec, "{interval: 1h, start: \"2026-01-01T00:00:00Z\"}", "{interval: 1d, start: \"2026-01-01T00:00:00Z\"}", 1)
		e.spec = mustParse(t, changed)
		before := storeState(t, e)

		_, err := e.Apply(t.Context())
		var gc *GrainChangeError
		if !errors.As(err, &gc) || len(gc.Models) != 1 || gc.Models[0].Model != "w.fixed" {
			t.Fatalf("Apply = %v, want a GrainChangeError for w.fixed", err)
		}
		for _, want := range []string{"w.fixed", "fixed 1h grid from 2026-01-01T00:00:00Z (UTC)", "fixed 1d grid from 2026-01-01T00:00:00Z (UTC)", "--mode torch", "5 units"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message lacks %q:\n%s", want, err)
			}
		}
		if after := storeState(t, e); after != before {
			t.Errorf("a refused apply changed the store:\n%s\nthen\n%s", before, after)
		}
		for _, mode := range []spec.StateMode{spec.Discover, spec.Bulldozer} {
			if _, err := e.Plan(t.Context(), RunRequest{Models: []string{"w.fixed"}, Mode: mode}); !errors.As(err, &gc) {
				t.Errorf("%s plan = %v, want the grain refusal", mode, err)
			}
		}
		// ApplyFor a torch of it defers the model to the plan, which
		// migrates it.
		res, err := e.ApplyFor(t.Context(), RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch})
		if err != nil || len(res.Deferred) != 1 {
			t.Fatalf("ApplyFor torch: %+v %v", res, err)
		}
		p, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch})
		if mp.Migrate == nil || mp.Chunk.String() != "1d" {
			t.Errorf("torch plan: migrate %+v chunk %s", mp.Migrate, mp.Chunk)
		}
		// At 06:30 on day one no 1d window has completed.
		if mp.Create.Len() != 0 || !hasWarning(mp, "contract range is empty") {
			t.Errorf("create %v warnings %v", mp.Create.List(), mp.Warnings)
		}
		applyAndCheck(t, e, p)
		if _, err := e.Apply(t.Context()); err != nil {
			t.Errorf("Apply after the migration: %v", err)
		}
	})
}

func TestFlexibleIntervalChangeIsFree(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := flexWorld(t, s)
		e.spec = mustParse(t, strings.Replace(planSpec, "interval: 1h, start: \"2026-01-01T00:00:00Z\", flexibility: flex", "interval: 2h, start: \"2026-01-01T00:00:00Z\", flexibility: flex", 1))
		res, err := e.Apply(t.Context())
		if err != nil || len(res.Changed) != 1 || res.Changed[0].Name != "w.flex" {
			t.Fatalf("Apply: %+v %v", res, err)
		}
	})
}

func TestPlanRefusesResetOfRunningUnits(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := world(t, s, planSpec)
		seed(t, e, "w.fixed", map[string]state.UnitStatus{"2:00-3:00": state.Running, "3:00-4:00": state.Applied})
		seed(t, e, "w.flex", map[string]state.UnitStatus{"1:00-2:00": state.Running})
		for _, req := range []RunRequest{
			{Models: []string{"w.fixed"}, Mode: spec.Bulldozer, Window: wp("2:00-4:00")},
			{Models: []string{"w.fixed"}, Mode: spec.Torch, Window: wp("4:00-5:00")},
			{Models: []string{"w.flex"}, Mode: spec.Bulldozer, Window: wp("1:30-2:30")},
			{Models: []string{"w.flex"}, Mode: spec.Torch},
		} {
			_, err := e.Plan(t.Context(), req)
			if err == nil || !strings.Contains(err.Error(), "running unit") {
				t.Errorf("%s %v: %v, want a refusal naming the running unit", req.Mode, req.Models, err)
			}
		}
		// Discover resets nothing running: it plans, leaving the unit be.
		_, mp := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Discover, Window: wp("2:00-4:00")})
		expectWindows(t, "Run", mp.Run.List())
		if !hasWarning(mp, "running now") {
			t.Errorf("warnings %v", mp.Warnings)
		}
	})
}

func TestApplyPlanRefusesAStalePlan(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, _ := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Bulldozer, Window: wp("1:00-3:00")})
		if _, err := e.store.Claim(t.Context(), state.ClaimRequest{Models: []string{"w.fixed"}, Window: win("4:00-5:00"), Worker: "w", Lease: 1e9, Limit: 1, Now: p0}); err != nil {
			t.Fatal(err)
		}
		// A change outside the plan's window does not make it wrong.
		applyAndCheck(t, e, p)

		p, _ = mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Bulldozer, Window: wp("1:00-3:00")})
		if _, err := e.store.Claim(t.Context(), state.ClaimRequest{Models: []string{"w.fixed"}, Window: win("1:00-2:00"), Worker: "w", Lease: 1e9, Limit: 1, Now: p0}); err != nil {
			t.Fatal(err)
		}
		before := storeState(t, e)
		err := e.ApplyPlan(t.Context(), p, 0)
		if err == nil || !strings.Contains(err.Error(), "running unit") {
			t.Errorf("ApplyPlan of a stale plan = %v", err)
		}
		if after := storeState(t, e); after != before {
			t.Errorf("a refused ApplyPlan changed the store")
		}
		assertAudited(t, e, "bulldozer", "error:")
	})
}

func TestPlanBadInputChangesNothing(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		before := storeState(t, e)
		for _, c := range []struct {
			name string
			req  RunRequest
			want []string
		}{
			{"misaligned", RunRequest{Models: []string{"w.fixed"}, Window: wp("0:30-2:00")},
				[]string{"not aligned", "since lies between 2026-01-01T00:00:00Z and 2026-01-01T01:00:00Z"}},
			{"since≥until", RunRequest{Models: []string{"w.fixed"}, Window: &state.Window{Since: hm("3:00"), Until: hm("2:00")}},
				[]string{"empty", "since must be before until"}},
			{"since=until", RunRequest{Models: []string{"w.flex"}, Window: &state.Window{Since: hm("3:00"), Until: hm("3:00")}},
				[]string{"empty"}},
			{"unknown model", RunRequest{Models: []string{"w.fixd"}}, []string{`unknown model "w.fixd"`, "did you mean w.fixed"}},
			{"unknown pipeline", RunRequest{Pipeline: "nope"}, []string{`unknown pipeline "nope"`, "core, side"}},
			{"unknown mode", RunRequest{Mode: "nuke"}, []string{`unknown state mode "nuke"`}},
		} {
			_, err := e.Plan(t.Context(), c.req)
			if err == nil {
				t.Errorf("%s: no error", c.name)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v lacks %q", c.name, err, w)
				}
			}
		}
		if after := storeState(t, e); after != before {
			t.Errorf("bad input changed the store")
		}
	})
}

func TestPlanResolvesModels(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := world(t, s, planSpec)
		for _, c := range []struct {
			req  RunRequest
			want string
		}{
			{RunRequest{}, "w.fixed w.flex w.config"},
			{RunRequest{Pipeline: "core"}, "w.fixed w.flex"},
			{RunRequest{Models: []string{"w.fixed"}}, "w.fixed"},
			{RunRequest{Models: []string{"w.fixed"}, Downstream: true}, "w.fixed w.flex"},
			{RunRequest{Models: []string{"w.config"}, Downstream: true}, "w.config"},
		} {
			p, err := e.Plan(t.Context(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.ModelNames(), " "); got != c.want {
				t.Errorf("%+v planned %s, want %s", c.req, got, c.want)
			}
		}
	})
}

func TestPlanRegistersUnregisteredModels(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := New(s, mustParse(t, planSpec), Options{Actor: "tester", Now: func() time.Time { return hm("2:30") }})
		p, err := e.Plan(t.Context(), RunRequest{Mode: spec.Discover})
		if err != nil {
			t.Fatal(err)
		}
		for _, mp := range p.Models {
			if !mp.Register {
				t.Errorf("%s: not registered first", mp.Model)
			}
		}
		expectWindows(t, "w.fixed Create", modelPlan(t, p, "w.fixed").Create.List(), "0:00-1:00", "1:00-2:00")
		applyAndCheck(t, e, p)
		if ms, _ := s.Models(t.Context(), ""); len(ms) != 3 {
			t.Errorf("registered %d models", len(ms))
		}
	})
}

func TestReadOnlyRefusals(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		p, _ := mustPlan(t, e, RunRequest{Models: []string{"w.fixed"}, Mode: spec.Torch})
		before := storeState(t, e)
		log, _ := s.AuditLog(t.Context(), 0)
		e.opts.ReadOnly = true
		if _, err := e.Apply(t.Context()); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Apply: %v", err)
		}
		if err := e.ApplyPlan(t.Context(), p, 0); !errors.Is(err, ErrReadOnly) {
			t.Errorf("ApplyPlan: %v", err)
		}
		if _, err := e.Mark(t.Context(), "w.fixed", win("0:00-1:00"), state.Pending); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Mark: %v", err)
		}
		// Plan changes nothing, so it is allowed read-only.
		if _, err := e.Plan(t.Context(), RunRequest{Mode: spec.Torch}); err != nil {
			t.Errorf("Plan read-only: %v", err)
		}
		if after := storeState(t, e); after != before {
			t.Error("read-only calls changed the store")
		}
		// Each refusal is audited (issue 7: a viewer's action is refused
		// and recorded), and nothing else is.
		log2, _ := s.AuditLog(t.Context(), 0)
		if len(log2)-len(log) != 3 {
			t.Fatalf("read-only refusals wrote %d audit entries, want 3", len(log2)-len(log))
		}
		for _, a := range log2[:3] {
			if a.Outcome != "refused: read-only" {
				t.Errorf("audit entry %+v, want a read-only refusal", a)
			}
		}
	})
}

// assertAudited checks the newest audit entry.
func assertAudited(t *testing.T, e *Engine, action, outcome string) {
	t.Helper()
	log, err := e.store.AuditLog(t.Context(), 1)
	if err != nil || len(log) != 1 {
		t.Fatalf("AuditLog: %v %v", log, err)
	}
	a := log[0]
	if a.Action != action || a.Actor != "tester" || !strings.Contains(a.Outcome, outcome) {
		t.Errorf("newest audit entry %+v, want %s by tester with %q", a, action, outcome)
	}
}

// minutesSpec is one model on a 1-minute grid from 2000-01-01 whose
// chunking ends `end` later: a backlog of that many windows (issue 21).
func minutesSpec(end time.Time) string {
	return `models:
  - name: big.minutes
    pipeline: big
    chunking: {interval: 1m, start: "2000-01-01T00:00:00Z", end: "` + state.FormatTime(end) + `"}
    run: {command: ["true"]}
`
}

var m0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// minute is the window of minute k of minutesSpec's grid.
func minute(k int) state.Window {
	return state.Window{Since: m0.Add(time.Duration(k) * time.Minute), Until: m0.Add(time.Duration(k+1) * time.Minute)}
}

func minutesWorld(t *testing.T, s state.Store, n int) *Engine {
	t.Helper()
	e := New(s, mustParse(t, minutesSpec(m0.Add(time.Duration(n)*time.Minute))), Options{Actor: "tester", Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return e
}

// TestPlanOverAMillionMinutesKeepsRuns: a plan over a backlog of a million
// windows keeps its windows as a few runs — one per stretch between the
// units that exist — not a value per window, and still counts and spans
// them as the lists did.
func TestPlanOverAMillionMinutesKeepsRuns(t *testing.T) {
	const n = 1_000_000
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := minutesWorld(t, s, n)
		_, mp := mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != n || mp.Create.Runs() != 1 || mp.Run.Len() != n || mp.Run.Runs() != 1 {
			t.Fatalf("empty store: create %d in %d runs, run %d in %d runs; want %d in 1 each",
				mp.Create.Len(), mp.Create.Runs(), mp.Run.Len(), mp.Run.Runs(), n)
		}

		// Minute 10 applied, minute 500,000 failed: three stretches to
		// create, the failed unit reset and run between two of them.
		ctx := t.Context()
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "big.minutes", Windows: []state.Window{minute(10), minute(500_000)}, Now: m0}); err != nil {
			t.Fatal(err)
		}
		for k, st := range map[int]state.UnitStatus{10: state.Applied, 500_000: state.Failed} {
			if _, err := s.SetStatus(ctx, state.StatusChange{Model: "big.minutes", Window: minute(k), From: []state.UnitStatus{state.Pending}, To: st, Now: m0}); err != nil {
				t.Fatal(err)
			}
		}
		_, mp = mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != n-2 || mp.Create.Runs() != 3 {
			t.Errorf("create %d in %d runs, want %d in 3", mp.Create.Len(), mp.Create.Runs(), n-2)
		}
		if r := mp.Reset.List(); len(r) != 1 || !r[0].Equal(minute(500_000)) {
			t.Errorf("Reset %s, want minute 500000 (%s)", fmtWindows(r), minute(500_000))
		}
		if mp.Run.Len() != n-1 || mp.Run.Runs() != 2 {
			t.Errorf("run %d in %d runs, want %d in 2", mp.Run.Len(), mp.Run.Runs(), n-1)
		}
		wantSpans := []state.Window{{Since: m0, Until: minute(10).Since}, {Since: minute(11).Since, Until: minute(n - 1).Until}}
		if got := mp.Run.Spans(); !windowsEqual(got, wantSpans) {
			t.Errorf("run spans %s, want %s", fmtWindows(got), fmtWindows(wantSpans))
		}

		_, mp = mustPlan(t, e, RunRequest{Mode: spec.Torch})
		if mp.Delete == nil || mp.Delete.Count != 2 || mp.Create.Len() != n || mp.Create.Runs() != 1 || mp.Run.Runs() != 1 {
			t.Errorf("torch: delete %+v, create %d in %d runs, run in %d runs", mp.Delete, mp.Create.Len(), mp.Create.Runs(), mp.Run.Runs())
		}
	})
}

// TestApplyPlanPrefillsPastOneBatch: a prefill larger than one batch
// creates every window once, and the plan made over the result runs them
// all — read back from the store as one run. A plain go test runs it at the
// real batch (50,000: past two of them, where a batch too large for a
// backend's statement would show); under -race the batch is 1,000, the
// same crossing for a fiftieth of the units (at full size the pure-Go
// SQLite half took 73 s of CI's race pass).
func TestApplyPlanPrefillsPastOneBatch(t *testing.T) {
	if enginetest.UnderRace {
		old := prefillBatch
		prefillBatch = 1_000
		t.Cleanup(func() { prefillBatch = old })
	}
	n := 2*prefillBatch + 7
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := minutesWorld(t, s, n)
		p, mp := mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != n {
			t.Fatalf("create %d, want %d", mp.Create.Len(), n)
		}
		if err := e.ApplyPlan(t.Context(), p, 0); err != nil {
			t.Fatalf("ApplyPlan: %v", err)
		}
		st, err := s.Stats(t.Context(), "", "big.minutes")
		if err != nil {
			t.Fatal(err)
		}
		if st.Counts[state.Pending] != n {
			t.Errorf("pending units after the prefill: %+v, want %d", st.Counts, n)
		}
		_, mp = mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != 0 || mp.Run.Len() != n || mp.Run.Runs() != 1 {
			t.Errorf("after the prefill: create %d, run %d in %d runs; want 0, %d in 1", mp.Create.Len(), mp.Run.Len(), mp.Run.Runs(), n)
		}
	})
}

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
