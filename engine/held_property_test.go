package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// heldSpec draws every kind of hold on four pipelines: an hourly and a
// daily load, a daily model over both (ENCAPSULATE and EXACT), a
// same-pipeline after: edge, a cross-pipeline after: edge judged per
// window, a THROUGH report, and a FAILURE alert.
const heldSpec = `models:
  - {name: ingest.a, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: ingest.b, pipeline: ingest, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: core.c, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: ingest.a, contract: encapsulate}, {name: ingest.b, contract: exact}], run: {command: ["true"]}}
  - {name: core.d, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: core.c, on: success}], run: {command: ["true"]}}
  - {name: rep.e, pipeline: rep, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: ingest.b, on: success}], run: {command: ["true"]}}
  - {name: rep.f, pipeline: rep, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, upstream: [{name: core.c, contract: through}], run: {command: ["true"]}}
  - {name: ops.alert, pipeline: ops, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, after: [{task: ingest.a, on: failure}], run: {command: ["true"]}}
`

// TestEveryHeldUnitHasAReasonAndTheSurfacesAgree runs random steps over
// heldSpec — runs of a pipeline or of everything, with and without a
// window and in either mode, with random windows failing; retries of the
// last failed run; marks — and after each step checks, on both stores,
// for every unit that is not applied:
//
//   - held (why: not satisfied) means at least one reason: an unsatisfied
//     gated upstream or after: edge, each with its text; a unit stored
//     blocked keeps a non-empty reason;
//   - why, the sweep (blocked --recheck, the UI's Blocked view) and the
//     live gate (serve, the UI) say the same of it: ready exactly when why
//     says satisfied;
//   - a unit stored blocked and satisfied now is a released incident, and
//     incidents account for every other blocked unit (held, each once),
//     except an alert that did not fire;
//   - blocked lists exactly the units stored blocked.
func TestEveryHeldUnitHasAReasonAndTheSurfacesAgree(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if testing.Short() || enginetest.UnderRace {
		seeds = seeds[:1] // the race detector slows each run tenfold
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				rng := rand.New(rand.NewPCG(seed, 32))
				now := t0.Add(4 * 24 * time.Hour)
				e := New(s, mustParse(t, heldSpec), Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return now }})
				var lastFailed int64
				for step := range 8 {
					did := randomStep(t, e, rng, &lastFailed)
					checkHeld(t, e, s, fmt.Sprintf("seed %d step %d (%s)", seed, step, did))
				}
			})
		})
	}
}

// randomStep takes one random step and says what it did.
func randomStep(t *testing.T, e *Engine, rng *rand.Rand, lastFailed *int64) string {
	t.Helper()
	ctx := t.Context()
	fails := map[string]bool{}
	for range rng.IntN(4) {
		switch rng.IntN(3) {
		case 0:
			fails["ingest.a "+t0.Add(time.Duration(rng.IntN(96))*time.Hour).Format(time.RFC3339)] = true
		case 1:
			fails["ingest.b "+t0.AddDate(0, 0, rng.IntN(4)).Format(time.RFC3339)] = true
		default:
			fails["core.c "+t0.AddDate(0, 0, rng.IntN(4)).Format(time.RFC3339)] = true
		}
	}
	exec := &fakeExec{fail: func(model string, w *state.Window) error {
		if w != nil && fails[model+" "+w.Since.Format(time.RFC3339)] {
			return fmt.Errorf("exit status 1: %s down", model)
		}
		return nil
	}}
	switch k := rng.IntN(6); {
	case k == 0 && *lastFailed != 0:
		res, err := e.Retry(ctx, *lastFailed, exec, 2, nil)
		if err != nil {
			return "retry refused: " + err.Error()
		}
		if !res.Failed() {
			*lastFailed = 0
		}
		return fmt.Sprintf("retry %d, failing %v", res.RunID, fails)
	case k == 1:
		models := []string{"ingest.a", "ingest.b", "core.c", "core.d", "rep.e", "rep.f", "ops.alert"}
		m := models[rng.IntN(len(models))]
		d := rng.IntN(4)
		st := []state.UnitStatus{state.Applied, state.Pending}[rng.IntN(2)]
		n, err := e.Mark(ctx, m, days(d, d+1), st)
		if err != nil {
			t.Fatalf("mark: %v", err)
		}
		return fmt.Sprintf("mark %s day %d %s (%d)", m, d, st, n)
	default:
		req := RunRequest{Mode: []spec.StateMode{"discover", "bulldozer"}[rng.IntN(2)], Workers: 2}
		if p := []string{"", "ingest", "core", "rep", "ops"}[rng.IntN(5)]; p != "" {
			req.Pipeline = p
		}
		if rng.IntN(2) == 0 {
			a := rng.IntN(3)
			w := days(a, a+1+rng.IntN(4-a))
			req.Window = &w
		} else {
			req.Mode = "discover" // no window: bulldozer needs one
		}
		res, err := e.Run(ctx, req, exec, nil)
		if err != nil {
			t.Fatalf("run %+v: %v", req, err)
		}
		if res.Failed() {
			*lastFailed = res.RunID
		}
		return fmt.Sprintf("run %d %s pipeline %q window %v, failing %v", res.RunID, req.Mode, req.Pipeline, req.Window, fails)
	}
}

// checkHeld holds the surfaces to one answer; see
// TestEveryHeldUnitHasAReasonAndTheSurfacesAgree.
func checkHeld(t *testing.T, e *Engine, s state.Store, where string) {
	t.Helper()
	ctx := t.Context()
	swept := map[string]gate.Readiness{}
	if _, err := e.GateSweep(ctx, gate.BlockedFilter{}, func(u gate.SweptUnit) error {
		swept[u.Model+" "+u.Window.String()] = u.Readiness
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	live, err := e.LiveGate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var units []state.Unit
	if err := s.ScanUnits(ctx, state.UnitQuery{}, func(u state.Unit) error { units = append(units, u); return nil }); err != nil {
		t.Fatal(err)
	}
	storedBlocked, idle, released := 0, 0, 0
	for _, u := range units {
		if u.Status == state.Applied {
			continue
		}
		key := u.Model + " " + u.Window.String()
		why, err := e.Why(ctx, u.Model, u.Window.Since)
		if err != nil {
			t.Fatalf("%s: why %s: %v", where, key, err)
		}
		reasons := 0
		for _, v := range why.Upstreams {
			if !v.Satisfied && !v.Skipped && (v.Reason != "" || v.Err != nil) {
				reasons++
			}
		}
		idleOnly := why.AfterHeld
		for _, v := range why.After {
			if !v.Satisfied && v.Reason != "" {
				reasons++
				idleOnly = idleOnly && v.Idle()
			}
		}
		if !why.Satisfied && reasons == 0 {
			t.Errorf("%s: %s is %s and held, with no reason", where, key, u.Status)
		}
		if u.Status == state.Blocked && u.BlockedReason == "" {
			t.Errorf("%s: %s is stored blocked with no reason", where, key)
		}
		if u.Status == state.Running {
			continue // no surface judges what is running
		}
		ready := swept[key] == gate.Ready
		if ready != why.Satisfied {
			t.Errorf("%s: %s: why says satisfied %v, the sweep %s", where, key, why.Satisfied, swept[key])
		}
		if lr, ok := live.Readiness(u.Model, u.Window); !ok || lr != swept[key] {
			t.Errorf("%s: %s: the live gate says %s (%v), the sweep %s", where, key, lr, ok, swept[key])
		}
		if u.Status == state.Blocked {
			storedBlocked++
			switch {
			case why.Satisfied:
				released++
			case idleOnly && len(why.Upstreams) == 0:
				idle++
			}
		}
	}
	blocked, err := e.Blocked(ctx, gate.BlockedFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(blocked) != storedBlocked {
		t.Errorf("%s: blocked lists %d units, the store holds %d", where, len(blocked), storedBlocked)
	}
	rep, err := e.Incidents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Held+rep.Untraced, storedBlocked-idle; got != want {
		t.Errorf("%s: incidents account for %d blocked units, want %d (%d stored blocked, %d alerts that did not fire)", where, got, want, storedBlocked, idle)
	}
	// The roots each blocked unit is held by (the Blocked view groups by
	// them) are the incidents' counts, unit by unit: each incident holds
	// exactly the units that name it, and the units with a root are Held.
	perIncident, withRoot := make([]int, len(rep.Incidents)), 0
	for _, bu := range blocked {
		hs := rep.Holders(bu)
		if len(hs) > 0 {
			withRoot++
		}
		for _, h := range hs {
			perIncident[h]++
		}
	}
	if withRoot != rep.Held {
		t.Errorf("%s: %d blocked units have a root by Holders, the report holds %d", where, withRoot, rep.Held)
	}
	for i, inc := range rep.Incidents {
		if perIncident[i] != inc.Blocked {
			t.Errorf("%s: %d blocked units name the incident %s %s as a root, it holds %d", where, perIncident[i], inc.Kind, inc.Model, inc.Blocked)
		}
	}
	inReleased := 0
	for _, inc := range rep.Incidents {
		if inc.Kind == gate.IncidentReleased {
			inReleased += inc.Units
		}
	}
	if inReleased != released {
		t.Errorf("%s: released incidents count %d units, why says %d blocked units are satisfied now", where, inReleased, released)
	}
}
