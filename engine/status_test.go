package engine

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// statusWorld is planSpec applied, plus a model only the spec knows, with
// hand-set units: w.fixed 00-01 and 01-02 applied (at 01:10 and 02:10), 03-04
// applied (at 04:10), 02-03 pending, 04-05 failed; w.flex covers 01:00-02:30
// in two touching rows and 04:00-05:00; w.config's row is applied at 00:05.
func statusWorld(t *testing.T, s state.Store) *Engine {
	t.Helper()
	e := world(t, s, planSpec)
	e.spec = mustParse(t, planSpec+`  - name: a.later
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {command: ["true"]}
`)
	ctx := t.Context()
	prefill := func(model string, ws ...state.Window) {
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: model, Windows: ws, Now: p0}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(model string, w state.Window, to state.UnitStatus, at time.Time) {
		n, err := s.SetStatus(ctx, state.StatusChange{Model: model, Window: w, From: []state.UnitStatus{state.Pending}, To: to, AppliedAt: at, Now: at})
		if err != nil || n == 0 {
			t.Fatalf("SetStatus %s %s: %d %v", model, w, n, err)
		}
	}
	prefill("w.fixed", wins("0:00-1:00", "1:00-2:00", "2:00-3:00", "3:00-4:00", "4:00-5:00")...)
	set("w.fixed", win("0:00-1:00"), state.Applied, hm("1:10"))
	set("w.fixed", win("1:00-2:00"), state.Applied, hm("2:10"))
	set("w.fixed", win("3:00-4:00"), state.Applied, hm("4:10"))
	set("w.fixed", win("4:00-5:00"), state.Failed, hm("5:10"))
	prefill("w.flex", wins("1:00-2:00", "2:00-2:30", "4:00-5:00")...)
	set("w.flex", win("1:00-5:00"), state.Applied, hm("5:30"))
	prefill("w.config", state.Window{})
	set("w.config", state.Window{}, state.Applied, hm("0:05"))
	return e
}

func TestStatusReadModel(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := statusWorld(t, s)
		got, err := e.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range got {
			names = append(names, m.Name)
		}
		// By pipeline, then name; the unregistered spec model is listed too.
		if strings.Join(names, " ") != "a.later w.fixed w.flex w.config" {
			t.Fatalf("order %v", names)
		}
		later, fixed, flex, config := got[0], got[1], got[2], got[3]
		if later.Registered || later.Units() != 0 || !later.Coverage.Empty() || later.LastAppliedAt != nil ||
			later.Flexibility != "flex" || later.Interval != "1d" || later.Pipeline != "core" || len(later.Counts) != 5 {
			t.Errorf("unregistered: %+v", later)
		}
		want := map[state.UnitStatus]int{state.Pending: 1, state.Running: 0, state.Applied: 3, state.Blocked: 0, state.Failed: 1}
		if !fixed.Registered || fixed.Temporality != "temporal" || fixed.Flexibility != "fix" || fixed.Interval != "1h" ||
			!maps.Equal(fixed.Counts, want) {
			t.Errorf("w.fixed: %+v", fixed)
		}
		if !fixed.Coverage.Equal(state.NewIntervalSet(win("0:00-2:00"), win("3:00-4:00"))) {
			t.Errorf("w.fixed coverage %s", fixed.Coverage)
		}
		if fixed.LastAppliedAt == nil || !fixed.LastAppliedAt.Equal(hm("4:10")) {
			t.Errorf("w.fixed last applied %v", fixed.LastAppliedAt)
		}
		if flex.Flexibility != "flex" || !flex.Coverage.Equal(state.NewIntervalSet(win("1:00-2:30"), win("4:00-5:00"))) ||
			flex.Counts[state.Applied] != 3 {
			t.Errorf("w.flex: %+v coverage %s", flex, flex.Coverage)
		}
		if config.Temporality != "timeless" || config.Flexibility != "" || config.Interval != "" || !config.Coverage.Empty() ||
			config.Counts[state.Applied] != 1 || config.LastAppliedAt == nil || !config.LastAppliedAt.Equal(hm("0:05")) {
			t.Errorf("w.config: %+v", config)
		}

		// Opened from the store alone, only registrations are listed.
		e.spec = nil
		if got, err := e.Status(t.Context()); err != nil || len(got) != 3 {
			t.Errorf("store alone: %d models, %v", len(got), err)
		}
	})
}

func TestScanUnitsAndUnknownModels(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := statusWorld(t, s)
		ctx := t.Context()
		var rows []string
		err := e.ScanUnits(ctx, "w.fixed", win("1:30-4:00"), []state.UnitStatus{state.Applied, state.Pending}, func(u state.Unit) error {
			rows = append(rows, unitRow{u.Window, u.Status}.String())
			return nil
		})
		if err != nil || strings.Join(rows, " ") != "01:00-02:00:applied 02:00-03:00:pending 03:00-04:00:applied" {
			t.Errorf("scan: %v %v", rows, err)
		}
		if err := e.ScanUnits(ctx, "a.later", state.Window{}, nil, func(state.Unit) error { t.Error("a unit"); return nil }); err != nil {
			t.Errorf("unregistered spec model: %v", err)
		}
		err = e.ScanUnits(ctx, "w.fixd", state.Window{}, nil, func(state.Unit) error { return nil })
		if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "did you mean w.fixed") {
			t.Errorf("unknown model: %v", err)
		}
		if err := e.ScanUnits(ctx, "w.config", win("0:00-1:00"), nil, func(state.Unit) error { return nil }); err == nil || !strings.Contains(err.Error(), "timeless") {
			t.Errorf("window on a timeless model: %v", err)
		}
		if _, err := e.ModelStatus(ctx, "nope.nope"); !errors.Is(err, ErrUnknownModel) {
			t.Errorf("ModelStatus of an unknown model: %v", err)
		}
	})
}

func TestLatestChangeSeq(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := New(s, nil, Options{})
		ctx := t.Context()
		if n, err := e.LatestChangeSeq(ctx); err != nil || n != 0 {
			t.Fatalf("empty feed: %d %v", n, err)
		}
		statusWorld(t, s)
		var newest int64
		for after := int64(0); ; {
			cs, err := s.Changes(ctx, after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) == 0 {
				break
			}
			after = cs[len(cs)-1].Seq
			newest = after
		}
		if newest == 0 {
			t.Fatal("the world recorded no changes")
		}
		if n, err := e.LatestChangeSeq(ctx); err != nil || n != newest {
			t.Errorf("LatestChangeSeq = %d, %v; want %d", n, err, newest)
		}
	})
}

// The engine's reads see its own environment: a run in pr7 is pr7's runs,
// models, units and coverage, and prod's reads see none of it; the reads
// of one run, of the audit log and of the feed name no environment.
func TestReadsAreTheEnginesEnvironment(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		prod := runEngine(t, s, chainSpec)
		pr, err := spec.ParseEnv("pr7")
		must(t, err)
		e := prod.InEnv(pr)
		day := state.MustWindow(t0, t0.Add(24*time.Hour))
		res, err := e.Run(ctx, RunRequest{Models: []string{"raw.orders"}, Window: &day}, e.Executor(), nil)
		must(t, err)

		if e.Backend() != s.Backend() {
			t.Errorf("Backend() = %q, want %q", e.Backend(), s.Backend())
		}
		if v, err := e.SchemaVersion(ctx); err != nil || v <= 0 {
			t.Errorf("SchemaVersion() = %d, %v", v, err)
		}
		if recs, err := e.Models(ctx); err != nil || len(recs) != 2 {
			t.Errorf("pr7's Models() = %d records, %v; want 2", len(recs), err)
		}
		if recs, err := prod.Models(ctx); err != nil || len(recs) != 0 {
			t.Errorf("prod's Models() = %d records, %v; want none", len(recs), err)
		}
		if runs, err := e.Runs(ctx, 10); err != nil || len(runs) != 1 || runs[0].ID != res.RunID || runs[0].Env != "pr7" {
			t.Errorf("pr7's Runs() = %+v, %v; want run %d", runs, err, res.RunID)
		}
		if runs, err := prod.Runs(ctx, 10); err != nil || len(runs) != 0 {
			t.Errorf("prod's Runs() = %+v, %v; want none", runs, err)
		}
		if runs, err := e.UnfinishedRuns(ctx); err != nil || len(runs) != 0 {
			t.Errorf("UnfinishedRuns() = %+v, %v; want none", runs, err)
		}
		if run, err := prod.RunRecord(ctx, res.RunID); err != nil || run.Env != "pr7" {
			t.Errorf("RunRecord(%d) from prod = %+v, %v; want pr7's run", res.RunID, run, err)
		}
		if log, err := e.TaskLog(ctx, res.RunID); err != nil || len(log) == 0 {
			t.Errorf("TaskLog(%d) = %+v, %v; want the run's tasks", res.RunID, log, err)
		}
		if st, err := e.ModelStats(ctx, "raw.orders"); err != nil || st.Counts[state.Applied] != 24 {
			t.Errorf("ModelStats(raw.orders) = %+v, %v; want 24 applied", st, err)
		}
		if cov, err := e.Coverage(ctx, "raw.orders", day); err != nil || len(cov.Windows()) != 1 || cov.Windows()[0] != day {
			t.Errorf("Coverage(raw.orders) = %v, %v; want %v", cov, err, day)
		}
		n := 0
		must(t, e.ScanStoredUnits(ctx, "raw.orders", day, []state.UnitStatus{state.Applied}, func(state.Unit) error { n++; return nil }))
		if n != 24 {
			t.Errorf("ScanStoredUnits(raw.orders) read %d units, want 24", n)
		}
		if cs, err := prod.Changes(ctx, 0, 1000); err != nil || len(cs) == 0 {
			t.Errorf("Changes() from prod = %d changes, %v; want pr7's", len(cs), err)
		}
	})
}
