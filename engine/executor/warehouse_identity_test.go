package executor_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/stores"
)

// The ledger's store identity and definition (docs/semantics.md, "Exactly
// once across two databases"): a ledger row written by another state
// store — a store deleted and made again, a second store sharing the
// warehouse — or committed under another definition is never taken for the
// claim's own commit. A write that rewrites its window runs over it and
// takes it over; an append fails with a LedgerConflict and writes nothing.

// identitySpec is one hourly query model, wh.n, that writes one row an
// hour, (ts, n), with the write mode WRITE and the value N.
const identitySpec = `defaults:
  connection: {dsn_env_var: ENV}
models:
  - {name: wh.n, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {query: "SELECT :since AS ts, N AS n", write: WRITE}}
`

// identityModes are the write modes, by name, as identitySpec's WRITE.
var identityModes = []struct{ name, write string }{
	{"recreate_partition", "{mode: recreate_partition, column: ts}"},
	{"upsert", "{mode: upsert, keys: [ts]}"},
	{"append", "{mode: append}"},
}

// identityYAML is identitySpec with write and n.
func identityYAML(write, n string) string {
	return strings.NewReplacer("WRITE", write, "N AS", n+" AS").Replace(identitySpec)
}

// identityWarehouse is a warehouse of its own for wh.n: a PostgreSQL
// database or a SQLite file. It returns its DSN (or path), the variable
// set to it, and how its queries name wh.n.
func identityWarehouse(t *testing.T, kind string) (dsn, env, table string) {
	t.Helper()
	if kind == "postgres" {
		dsn, env = enginetest.NewWarehouseDB(t, 1)
		return dsn, env, "wh.n"
	}
	dsn = filepath.Join(t.TempDir(), "warehouse.db")
	env = strings.ToUpper(enginetest.UniqueName("BOLLHAV_TEST_WH_"))
	t.Setenv(env, dsn)
	return dsn, env, `"wh.n"`
}

// valueCounts is wh.n's rows counted by n: "1=6" is six rows of n = 1.
func valueCounts(t *testing.T, dsn, table string) string {
	t.Helper()
	return strings.Join(enginetest.WarehouseQuery(t, dsn, `SELECT n || '=' || count(*) FROM `+table+` GROUP BY n ORDER BY n`), " ")
}

// sixHours is the window every test here runs: six units of wh.n.
func sixHours() *state.Window { w := hours(0, 6); return &w }

// runNRes runs wh.n over sixHours on e, one worker (two upserts creating
// the target and its unique index at once can deadlock in PostgreSQL, a
// limit of the upsert write apart from the ledger), and returns its
// task's result.
func runNRes(t *testing.T, e *engine.Engine, mode spec.StateMode) engine.TaskResult {
	t.Helper()
	res, err := e.Run(t.Context(), engine.RunRequest{Window: sixHours(), Mode: mode, Workers: 1}, e.Executor(), nil)
	must(t, err)
	for _, tr := range res.Tasks {
		if tr.Model == "wh.n" {
			return tr
		}
	}
	t.Fatalf("the run has no wh.n task: %+v", res.Tasks)
	return engine.TaskResult{}
}

// identityOf is s's identity.
func identityOf(t *testing.T, s state.Store) string {
	t.Helper()
	id, err := s.Identity(t.Context())
	must(t, err)
	return id
}

// checkAppendRefused checks that tr failed every unit with the ledger's
// conflict, naming other (a store's identity) and the commands that adopt
// or reset the window, and that table still holds the six rows of n = 1
// the other store wrote, nothing added.
func checkAppendRefused(t *testing.T, tr engine.TaskResult, other, dsn, table string) {
	t.Helper()
	if tr.Applied != 0 || tr.Failed != 6 || len(tr.Errors) == 0 {
		t.Fatalf("append over another store's window: %d applied, %d failed, %q; want all 6 failed", tr.Applied, tr.Failed, tr.Errors)
	}
	for _, msg := range tr.Errors {
		for _, want := range []string{other, "bollhav mark wh.n --since", "--status applied", "--status pending", "DELETE FROM "} {
			if !strings.Contains(msg, want) {
				t.Errorf("the unit's error %q does not say %q", msg, want)
			}
		}
	}
	if got := valueCounts(t, dsn, table); got != "1=6" {
		t.Errorf("after the refused append wh.n = %s, want the other store's six rows of n = 1 alone", got)
	}
}

// checkRewriteRan checks that the run tr (what names it) of a rewriting
// write applied all six hours, that table then holds want ("value=rows":
// each hour's row once, none duplicated) and that s's applied units each
// have their own ledger row.
func checkRewriteRan(t *testing.T, what string, tr engine.TaskResult, s state.Store, dsn, table, want string) {
	t.Helper()
	if tr.Applied != 6 || tr.Failed != 0 {
		t.Fatalf("%s: %+v, want all six hours applied", what, tr)
	}
	if got := valueCounts(t, dsn, table); got != want {
		t.Errorf("after %s wh.n = %s, want %s", what, got, want)
	}
	enginetest.CheckLedger(t, s, dsn, "wh.n")
}

// TestWarehouseNewStoreRunsTheNewQuery is the first case: a run
// writes six hours of n = 1; the state store is deleted and made again
// (the ledger's unit #1 with fence 1 is handed out again), the query
// changes to n = 2, and the new store runs the window. A rewriting write
// runs the new query and takes the ledger rows over: six rows of n = 2,
// none duplicated, each applied unit with its own ledger row. An append
// fails every unit naming the old store and the commands that adopt or
// reset the window, and the warehouse keeps its six rows of n = 1.
func TestWarehouseNewStoreRunsTheNewQuery(t *testing.T) {
	for _, whKind := range []string{"postgres", "sqlite"} {
		for _, m := range identityModes {
			t.Run("warehouse="+whKind+"/"+m.name, func(t *testing.T) {
				enginetest.Each(t, func(t *testing.T, s state.Store) {
					dsn, env, table := identityWarehouse(t, whKind)
					e1, _ := whEngine(t, s, identityYAML(m.write, "1"), env)
					if tr := runNRes(t, e1, spec.Discover); tr.Applied != 6 {
						t.Fatalf("the first run: %+v", tr)
					}
					if got := valueCounts(t, dsn, table); got != "1=6" {
						t.Fatalf("after the first run wh.n = %s", got)
					}
					// The store again, made anew: same backend, nothing kept.
					s2 := enginetest.Open(t, s.Backend())
					e2, _ := whEngine(t, s2, identityYAML(m.write, "2"), env)
					tr := runNRes(t, e2, spec.Discover)
					if m.name == "append" {
						checkAppendRefused(t, tr, identityOf(t, s), dsn, table)
						return
					}
					checkRewriteRan(t, "the new store's run", tr, s2, dsn, table, "2=6")
				})
			})
		}
	}
}

// TestWarehouseTwoStoresShareAWarehouse: a SQLite store and a PostgreSQL
// store run one spec into one warehouse, the second one's unit ids shifted
// (another model's units came first) so no ledger key is shared: the
// window, not the key, tells the second store that the first wrote there.
// A rewriting write runs and takes the window over, each hour holding its
// row once; the first store's next rerun takes it back, still once. An
// append into the first store's windows fails every unit naming that
// store, and writes nothing.
func TestWarehouseTwoStoresShareAWarehouse(t *testing.T) {
	for _, m := range identityModes {
		t.Run(m.name, func(t *testing.T) {
			dsn, env, table := identityWarehouse(t, "postgres")
			a := enginetest.Open(t, enginetest.SQLite)
			b := enginetest.Open(t, enginetest.Postgres)
			ea, _ := whEngine(t, a, identityYAML(m.write, "1"), env)
			if tr := runNRes(t, ea, spec.Discover); tr.Applied != 6 {
				t.Fatalf("store a's run: %+v", tr)
			}
			// Store b's ids start past store a's.
			shift := state.ModelRecord{Name: "other", Temporality: "temporal", Flexibility: "fix", Interval: "1h", Start: t0, Definition: []byte("{}")}
			_, err := b.Register(t.Context(), "", []state.ModelRecord{shift}, nil, clock())
			must(t, err)
			prefillHours(t, b, "other", 10)
			eb, _ := whEngine(t, b, identityYAML(m.write, "1"), env)
			tr := runNRes(t, eb, spec.Discover)
			if m.name == "append" {
				checkAppendRefused(t, tr, identityOf(t, a), dsn, table)
				return
			}
			checkRewriteRan(t, "store b's run", tr, b, dsn, table, "1=6")
			// Store a reruns its windows: it runs them (store b's rows are
			// not its commits) and takes them back.
			checkRewriteRan(t, "store a's rerun", runNRes(t, ea, spec.Bulldozer), a, dsn, table, "1=6")
		})
	}
}

// TestWarehouseUnrecordedCommitOfAnotherDefinition: a claim's data commits
// in the warehouse under n = 1 and the store never records it (the
// process died between the two commits: the lease expires). The model's
// query changes to n = 2 and the unit is claimed again in the same store.
// The ledger's commit is not replayed as the new definition's: a
// rewriting write runs the new query (the hour holds n = 2 once, the
// result is not a replay); an append fails naming the other definition,
// and the hour keeps its one row of n = 1. Under the same definition, the
// commit is replayed (TestWarehouseCrashBetweenCommitsIsRepairedFromTheLedger
// in engine, and the control below).
func TestWarehouseUnrecordedCommitOfAnotherDefinition(t *testing.T) {
	for _, m := range identityModes {
		for _, changed := range []bool{false, true} {
			name := m.name + "/same_definition"
			if changed {
				name = m.name + "/definition_changed"
			}
			t.Run(name, func(t *testing.T) {
				enginetest.Each(t, func(t *testing.T, s state.Store) {
					dsn, env, table := identityWarehouse(t, "postgres")
					ctx := t.Context()
					e1, sp1 := whEngine(t, s, identityYAML(m.write, "1"), env)
					_, err := e1.Apply(ctx)
					must(t, err)
					w := hours(0, 1)
					prefillHours(t, s, "wh.n", 1)
					claim := func(now time.Time) state.Claim {
						cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"wh.n"}, Worker: "w", Lease: time.Second, Limit: 1, Now: now})
						must(t, err)
						if len(cs) != 1 {
							t.Fatalf("claimed %d units", len(cs))
						}
						return cs[0]
					}
					now := time.Now()
					m1 := sp1.Model("wh.n")
					first := claim(now)
					_, err = e1.Executor().(executor.Applier).ExecuteAndApply(ctx, executor.UnitRun{Model: m1, Window: &w, Fingerprint: spec.Fingerprint(m1)}, first, clock())
					must(t, err)
					// Never recorded: the lease expires.
					_, err = s.ReleaseExpired(ctx, now.Add(2*time.Second))
					must(t, err)
					n := "1"
					if changed {
						n = "2"
					}
					e2, sp2 := whEngine(t, s, identityYAML(m.write, n), env)
					m2 := sp2.Model("wh.n")
					if changed == (spec.Fingerprint(m1) == spec.Fingerprint(m2)) {
						t.Fatalf("changed %v, but the fingerprints are %s and %s", changed, spec.Fingerprint(m1), spec.Fingerprint(m2))
					}
					second := claim(now.Add(2 * time.Second))
					r, err := e2.Executor().(executor.Applier).ExecuteAndApply(ctx, executor.UnitRun{Model: m2, Window: &w, Fingerprint: spec.Fingerprint(m2)}, second, clock())
					got := valueCounts(t, dsn, table)
					switch {
					case !changed:
						// The control: the same definition replays the commit.
						if err != nil || got != "1=1" || r.RowsWritten == nil || *r.RowsWritten != 1 {
							t.Errorf("the same definition: %+v, %v, wh.n = %s; want the commit replayed", r, err, got)
						}
					case m.name == "append":
						var conflict *state.LedgerConflict
						if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "under another definition") || !strings.Contains(err.Error(), "bollhav mark wh.n") {
							t.Errorf("an append over another definition's unrecorded commit: %v, want the ledger's conflict", err)
						}
						if got != "1=1" {
							t.Errorf("after the refused append wh.n = %s, want the one row of n = 1", got)
						}
					default:
						if err != nil || got != "2=1" {
							t.Errorf("a rewrite over another definition's unrecorded commit: %v, wh.n = %s; want the new query's row", err, got)
						}
						l, ok, lerr := warehouseLedger(t, dsn, state.LedgerKey("", "wh.n", w, second.Unit.ID))
						must(t, lerr)
						if !ok || l.DoneFence != second.Fence || l.Fingerprint != spec.Fingerprint(m2) {
							t.Errorf("ledger %+v, want the second claim's commit under the new definition", l)
						}
					}
				})
			})
		}
	}
}

// warehouseLedger reads one ledger row of the warehouse at dsn.
func warehouseLedger(t *testing.T, dsn, key string) (state.LedgerEntry, bool, error) {
	t.Helper()
	w, err := stores.OpenWarehouse(t.Context(), dsn)
	must(t, err)
	defer w.Close()
	return w.Ledger(t.Context(), key)
}
