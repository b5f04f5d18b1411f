package engine

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

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
