package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
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

// TestStoreCopyInterruptedCommitsNothing: a copy cancelled half way (an
// operator's Ctrl-C) returns the cancellation, leaves the target empty —
// a second copy into it goes through — and the source live. Both ways.
func TestStoreCopyInterruptedCommitsNothing(t *testing.T) {
	for _, dir := range [][2]string{{enginetest.SQLite, enginetest.Postgres}, {enginetest.Postgres, enginetest.SQLite}} {
		t.Run(dir[0]+"_to_"+dir[1], func(t *testing.T) {
			a, b := enginetest.Open(t, dir[0]), enginetest.Open(t, dir[1])
			storetest.SeedCopySource(t, a)
			want, empty := storetest.ContentOf(t, a), storetest.ContentOf(t, b)
			e := engine.New(a, nil, engine.Options{Actor: "test"})
			ctx, cancel := context.WithCancel(t.Context())
			_, err := e.CopyStore(ctx, b, engine.CopyOptions{Source: "a", Target: "b", Progress: func(done, total int64) { cancel() }})
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing was committed") {
				t.Fatalf("a cancelled copy: %v, want the cancellation and that nothing was committed", err)
			}
			if got := storetest.ContentOf(t, b); got != empty {
				t.Errorf("the target after a cancelled copy holds:\n%s", got)
			}
			if r, err := e.Retirement(t.Context()); r != nil || err != nil {
				t.Errorf("the source after a cancelled copy: retired %+v, %v", r, err)
			}
			res, err := e.CopyStore(t.Context(), b, engine.CopyOptions{Source: "a", Target: "b"})
			must(t, err)
			// The content, and one audit row more: the copy's own.
			got := storetest.ContentOf(t, b)
			gotState, gotAudit, _ := strings.Cut(got, "\naudit ")
			wantState, _, _ := strings.Cut(want, "\naudit ")
			if gotState != wantState || res.Rows["units"] == 0 {
				t.Errorf("the copy after the cancelled one:\n got  %s\n want %s", gotState, wantState)
			}
			if !strings.HasPrefix(gotAudit, `[{"ID":3,`) || !strings.Contains(gotAudit, `"Action":"store copy"`) {
				t.Errorf("the target's audit log does not record the copy first, after the two copied rows: %s", gotAudit)
			}
		})
	}
}

// TestStoreCopyMoveIsRefusedReadOnly: a move retires the store, so a
// read-only engine refuses it; a snapshot reads only, and goes through.
// A move whose target already holds this store's copy (an earlier move
// committed and was cut off before it retired the source) only retires
// the source.
func TestStoreCopyMoveIsRefusedReadOnly(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, a state.Store) {
		storetest.SeedCopySource(t, a)
		ro := engine.New(a, nil, engine.Options{Actor: "viewer", ReadOnly: true})
		if _, err := ro.CopyStore(t.Context(), enginetest.Open(t, a.Backend()), engine.CopyOptions{Source: "a", Target: "b"}); !errors.Is(err, engine.ErrReadOnly) {
			t.Errorf("a read-only move: %v, want ErrReadOnly", err)
		}
		res, err := ro.CopyStore(t.Context(), enginetest.Open(t, a.Backend()), engine.CopyOptions{Snapshot: true, Source: "a", Target: "b"})
		if err != nil || !res.Snapshot {
			t.Errorf("a read-only snapshot: %+v, %v; want it taken", res, err)
		}

		// A move cut off between the target's commit and the source's.
		b := enginetest.Open(t, a.Backend())
		moved := state.Retirement{Kind: state.RetiredMoved, Other: "b", At: time.Now()}
		w, err := b.(state.StoreCopier).CopyIn(t.Context(), state.CopyInOptions{})
		must(t, err)
		must(t, a.(state.StoreCopier).CopyOut(t.Context(), w, state.CopyOutOptions{}))
		e := engine.New(a, nil, engine.Options{Actor: "ops"})
		res, err = e.CopyStore(t.Context(), b, engine.CopyOptions{Source: "a", Target: "b"})
		if err != nil || !res.Finished {
			t.Fatalf("a move into a target holding this store's copy: %+v, %v; want it to retire the source only", res, err)
		}
		storetest.CheckRefusesWrites(t, a, state.Retirement{Kind: moved.Kind, Other: moved.Other, At: mustRetiredAt(t, a)})
	})
}

// mustRetiredAt is when s was retired.
func mustRetiredAt(t *testing.T, s state.Store) time.Time {
	t.Helper()
	r, err := s.(state.StoreCopier).Retirement(t.Context())
	must(t, err)
	if r == nil {
		t.Fatal("the store is not retired")
	}
	return r.At
}

// BenchmarkStoreCopy copies a generated store of BOLLHAV_BENCH_UNITS
// units (10,000 when unset; scripts/bench runs it at 1,000,000, the goal
// being under a minute) from SQLite into an empty PostgreSQL schema, and
// that one back into an empty SQLite file: the two directions a move to
// PostgreSQL and a laptop snapshot take. Each copy is a snapshot, which
// reads and writes every row as a move does (a move adds a table lock and
// the retirement, milliseconds) and leaves its source usable for the
// next iteration.
func BenchmarkStoreCopy(b *testing.B) {
	outer := b // the stores outlive each sub-benchmark: the second reads the first's
	n := gen.BenchUnits()
	src := enginetest.Open(b, enginetest.SQLite)
	if _, _, err := gen.Seed(b.Context(), src, "", gen.BenchConfig(n)); err != nil {
		b.Fatal(err)
	}
	var pg state.Store
	for _, dir := range [][2]string{{enginetest.SQLite, enginetest.Postgres}, {enginetest.Postgres, enginetest.SQLite}} {
		b.Run(dir[0]+"_to_"+dir[1]+"/units="+gen.SizeName(n), func(b *testing.B) {
			from := src
			if dir[0] == enginetest.Postgres {
				from = pg
			}
			if from == nil {
				b.Skip("no PostgreSQL copy to read from")
			}
			e := engine.New(from, nil, engine.Options{Actor: "bench"})
			var res *engine.CopyResult
			for b.Loop() {
				to := enginetest.Open(outer, dir[1])
				var err error
				res, err = e.CopyStore(b.Context(), to, engine.CopyOptions{Snapshot: true, Source: "from", Target: "to"})
				if err != nil {
					b.Fatal(err)
				}
				if dir[1] == enginetest.Postgres {
					pg = to
				}
			}
			b.ReportMetric(float64(res.Rows["units"]), "units")
			b.ReportMetric(float64(res.Rows["units"])/res.Elapsed.Seconds(), "units/s")
		})
	}
}
