package enginetest

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestUnitSeedsEveryStatus seeds a unit in each status with what a test
// may ask of it and reads each back from the store as it was asked for.
func TestUnitSeedsEveryStatus(t *testing.T) {
	Each(t, func(t *testing.T, s state.Store) {
		sp := RegisterYAML(t, s, `models:
  - {name: a.hourly, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: a.once, temporality: timeless, run: {command: ["true"]}}
`, T0)
		at := T0.Add(30 * time.Hour)
		run := Run(t, s, RunOpts{Models: []string{"a.hourly"}, Status: state.RunFailed, StartedAt: at})
		rows := int64(7)
		applied := Unit(t, s, UnitOpts{Model: "a.hourly", Window: Hours(0, 1), Status: state.Applied, At: at, AppliedAt: at.Add(-time.Hour), RunID: run, RowsWritten: &rows})
		if applied.Status != state.Applied || !applied.AppliedAt.Equal(at.Add(-time.Hour)) || applied.Fingerprint != spec.Fingerprint(sp.Model("a.hourly")) ||
			applied.RunID != run || applied.Attempts != 1 || *applied.RowsWritten != 7 {
			t.Errorf("applied %+v", applied)
		}
		unknown := Unit(t, s, UnitOpts{Model: "a.hourly", Window: Hours(1, 2), Status: state.Applied, At: at, Fingerprint: UnknownFingerprint})
		if unknown.Fingerprint != "" || !unknown.AppliedAt.Equal(at) {
			t.Errorf("applied, fingerprint unknown %+v", unknown)
		}
		failed := Unit(t, s, UnitOpts{Model: "a.hourly", Window: Hours(2, 3), Status: state.Failed, At: at, Error: "boom",
			Tries: []TryOpts{{Error: "first", At: at.Add(-2 * time.Hour)}, {Error: "second", At: at.Add(-time.Hour), Try: 2}}})
		if failed.Status != state.Failed || failed.Error != "boom" || failed.Attempts != 3 || failed.AppliedAt != nil {
			t.Errorf("failed %+v", failed)
		}
		hist, err := s.Attempts(t.Context(), failed.ID)
		if err != nil || len(hist) != 3 || hist[0].Error != "first" || hist[1].Error != "second" || hist[2].Error != "boom" {
			t.Errorf("attempts %+v %v", hist, err)
		}
		blocked := Unit(t, s, UnitOpts{Model: "a.hourly", Window: Hours(3, 4), Status: state.Blocked, At: at, BlockedReason: "waits"})
		if blocked.Status != state.Blocked || blocked.BlockedReason != "waits" {
			t.Errorf("blocked %+v", blocked)
		}
		retry := Unit(t, s, UnitOpts{Model: "a.hourly", Window: Hours(4, 5), At: at, Error: "again", NotBefore: at.Add(time.Hour)})
		if retry.Status != state.Pending || retry.Error != "again" || retry.NotBefore == nil || !retry.NotBefore.Equal(at.Add(time.Hour)) {
			t.Errorf("pending retry %+v", retry)
		}
		running := Unit(t, s, UnitOpts{Model: "a.hourly", Window: Hours(5, 6), Status: state.Running, At: at, Lease: 2 * time.Hour})
		if running.Status != state.Running || running.LeaseUntil == nil || !running.LeaseUntil.Equal(at.Add(2*time.Hour)) {
			t.Errorf("running %+v", running)
		}
		if p := Unit(t, s, UnitOpts{Model: "a.once"}); p.Status != state.Pending || !p.Window.IsZero() {
			t.Errorf("pending existence row %+v", p)
		}
		task := Task(t, s, TaskOpts{RunID: run, TaskID: 1, Status: "FAILED", StartedAt: at, Error: "boom"})
		log, err := s.TaskLog(t.Context(), run)
		if err != nil || task != 1 || len(log) != 1 || log[0].Status != "FAILED" || log[0].Error != "boom" {
			t.Errorf("task log %+v %v", log, err)
		}
		if r, err := s.GetRun(t.Context(), run); err != nil || r.Status != state.RunFailed {
			t.Errorf("run %+v %v", r, err)
		}
	})
}

// TestUnitsSeedsRunsInBatches: a thousand adjacent units in runs of
// statuses land as asked, and a repeated window fails instead of being
// skipped.
func TestUnitsSeedsRunsInBatches(t *testing.T) {
	Each(t, func(t *testing.T, s state.Store) {
		RegisterYAML(t, s, `models:
  - {name: a.q, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`, T0)
		var us []UnitOpts
		g, _ := state.NewGrid(T0, state.Interval{N: 15, Unit: state.Minute}, time.UTC)
		for i := range 1000 {
			st := []state.UnitStatus{state.Applied, state.Blocked, state.Pending, state.Failed}[i/250]
			us = append(us, UnitOpts{Model: "a.q", Window: g.WindowAt(i), Status: st, At: T0})
		}
		Units(t, s, us...)
		st, err := s.Stats(t.Context(), "", "a.q")
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []state.UnitStatus{state.Applied, state.Blocked, state.Pending, state.Failed} {
			if st.Counts[x] != 250 {
				t.Errorf("%s: %d units, want 250 (%v)", x, st.Counts[x], st.Counts)
			}
		}
		if err := seedUnits(t, s, []UnitOpts{{Model: "a.q", Window: g.WindowAt(0), Status: state.Applied}}); err == nil {
			t.Error("seeding a window that has a unit was not refused")
		}
		if err := seedUnits(t, s, []UnitOpts{{Model: "a.nope", Window: g.WindowAt(0)}}); err == nil {
			t.Error("seeding a model that is not registered was not refused")
		}
	})
}

// LineageSpecOf keeps the named models of the lineage as written there.
func TestLineageSpecOf(t *testing.T) {
	if got := LineageSpecOf(); got != "models:\n" {
		t.Errorf("no models: %q", got)
	}
	sp := Parse(t, LineageSpecOf("raw.orders", "mart.daily", "report.snapshot"))
	full := Parse(t, LineageSpec)
	if len(sp.Models) != 3 || sp.Models[0].Name != "raw.orders" || sp.Models[2].Name != "report.snapshot" {
		t.Fatalf("models %v", sp.Models)
	}
	for _, m := range sp.Models {
		if spec.Fingerprint(m) != spec.Fingerprint(full.Model(m.Name)) {
			t.Errorf("%s differs from the full lineage's", m.Name)
		}
	}
	if LineageSpecOf(modelNames(full)...) != LineageSpec {
		t.Error("every model is not the whole lineage")
	}
}

func modelNames(sp *spec.Spec) []string {
	var out []string
	for _, m := range sp.Models {
		out = append(out, m.Name)
	}
	return out
}
