package executor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestWarehouseModelDoesNotRunAgainAfterAStoreMove: an append model on its
// own connection runs six hours from one store; a seventh hour's data
// commits in the warehouse and the store never records it (the process
// died between the two commits; the lease expired). The store is moved
// (`store copy`) into an empty store of the other backend. There the run
// over the seven hours applies the seventh from the warehouse's ledger
// without running it again, and runs nothing else: the ledger's rows are
// the moved store's own, because its identity moved with it. An append
// that ran again would write the hour twice (1=8). The old store refuses
// the run, naming the new one. Both ways: SQLite to PostgreSQL and back.
func TestWarehouseModelDoesNotRunAgainAfterAStoreMove(t *testing.T) {
	for _, dir := range [][2]string{{enginetest.SQLite, enginetest.Postgres}, {enginetest.Postgres, enginetest.SQLite}} {
		t.Run(dir[0]+"_to_"+dir[1], func(t *testing.T) {
			ctx := t.Context()
			dsn, env, table := identityWarehouse(t, "postgres")
			yaml := identityYAML("{mode: append}", "1")
			a := enginetest.Open(t, dir[0])
			ea, sp := whEngine(t, a, yaml, env)
			if tr := runNRes(t, ea, spec.Discover); tr.Applied != 6 || tr.Failed != 0 {
				t.Fatalf("the first store's run: %+v", tr)
			}
			// Hour 6: committed in the warehouse, never recorded.
			_, err := a.Prefill(ctx, state.PrefillRequest{Model: "wh.n", Windows: []state.Window{hours(6, 7)}, Now: clock()})
			must(t, err)
			now := time.Now()
			cs, err := a.Claim(ctx, state.ClaimRequest{Models: []string{"wh.n"}, Worker: "w", Lease: time.Second, Limit: 1, Now: now})
			must(t, err)
			if len(cs) != 1 || cs[0].Unit.Window != hours(6, 7) {
				t.Fatalf("claimed %+v, want hour 6", cs)
			}
			m := sp.Model("wh.n")
			w7 := hours(6, 7)
			_, err = ea.Executor().(executor.Applier).ExecuteAndApply(ctx, executor.UnitRun{Model: m, Window: &w7, Fingerprint: spec.Fingerprint(m)}, cs[0], clock())
			must(t, err)
			_, err = a.ReleaseExpired(ctx, now.Add(2*time.Second))
			must(t, err)
			if got := valueCounts(t, dsn, table); got != "1=7" {
				t.Fatalf("the warehouse before the move holds %s, want seven rows of n = 1", got)
			}

			b := enginetest.Open(t, dir[1])
			res, err := ea.CopyStore(ctx, b, engine.CopyOptions{Source: "first", Target: "second"})
			must(t, err)
			if res.Rows["units"] != 7 || res.Identity != identityOf(t, a) || identityOf(t, b) != identityOf(t, a) {
				t.Fatalf("the move: %+v; the stores' identities %s and %s", res, identityOf(t, a), identityOf(t, b))
			}

			eb, _ := whEngine(t, b, yaml, env)
			seven := hours(0, 7)
			run, err := eb.Run(ctx, engine.RunRequest{Window: &seven, Mode: spec.Discover, Workers: 1}, eb.Executor(), nil)
			must(t, err)
			if run.Failed() {
				t.Fatalf("the run in the new store failed: %+v", run.Tasks)
			}
			if got := valueCounts(t, dsn, table); got != "1=7" {
				t.Errorf("after the run in the new store the warehouse holds %s, want seven rows of n = 1: an hour ran again", got)
			}
			var applied int
			must(t, b.ScanUnits(ctx, state.UnitQuery{Model: "wh.n"}, func(u state.Unit) error {
				if u.Status == state.Applied {
					applied++
				}
				return nil
			}))
			if applied != 7 {
				t.Errorf("%d units applied in the new store, want 7", applied)
			}
			enginetest.CheckLedger(t, b, dsn, "wh.n")

			_, err = ea.Run(ctx, engine.RunRequest{Window: &seven, Mode: spec.Bulldozer, Workers: 1}, ea.Executor(), nil)
			if !errors.Is(err, state.ErrRetired) || !strings.Contains(err.Error(), "moved to second") {
				t.Errorf("a run on the moved store: %v, want it refused naming the new store", err)
			}
		})
	}
}
