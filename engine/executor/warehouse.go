package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/state"
)

// AfterWarehouseCommit, when set, is called after a unit's data committed
// in its warehouse and before the state store records it applied: the one
// instant where a crash leaves the two databases disagreeing. Only tests
// set it (they SIGKILL the process there); it must be set before a run
// starts.
var AfterWarehouseCommit func(model string)

// BeforeWarehouseUnit, when set, is called when a claimed unit is about to
// open its warehouse transaction. Only tests set it (they SIGSTOP the
// process there to make a zombie); it must be set before a run starts.
var BeforeWarehouseUnit func(model string)

// runInWarehouse runs a claimed unit in its warehouse; the caller then
// records it applied in the state store — exactly once across the two
// databases (docs/semantics.md, "Exactly once across two databases"):
//
//  1. The warehouse transaction writes the unit's ledger row with the
//     claim's fence first, then the data, and commits both. A newer fence
//     in the row means a newer claim owns the unit: ErrLeaseLost, and the
//     transaction rolls back, data and all.
//  2. The run loop records the unit applied under the claim's fence, in
//     its batched completions (one store commit for many units).
//
// A crash between 1 and 2 leaves the data and the ledger row behind. The
// store meanwhile sees an expired lease (a failed attempt, numbered one
// above the count the claim was made with); the next claim finds the
// ledger's committed claim, asks the store whether that attempt ended
// unrecorded, and records the unit applied without running it again.
//
// The ledger row also names the store the claim is from and the
// definition it runs: a commit of another store, or one this store never
// recorded under another definition, is never replayed. A job that
// rewrites its window runs over it; an append or a sql model's
// statements fail the unit with a state.LedgerConflict that says how to
// adopt or reset the window.
func (d *dataExecutor) runInWarehouse(ctx context.Context, wh state.Warehouse, job state.DataJob, u UnitRun, c state.Claim, at time.Time) (int64, error) {
	store, err := d.storeIdentity(ctx)
	if err != nil {
		return 0, err
	}
	lu := state.LedgerUnit{
		Key:         state.LedgerKey(u.Env.Suffix, u.Model.Name, c.Unit.Window, c.Unit.ID),
		Env:         u.Env.Suffix,
		Model:       u.Model.Name,
		Window:      c.Unit.Window,
		Store:       store,
		Fingerprint: u.Fingerprint,
		Rewrites:    rewritesWindow(job),
		Fence:       c.Fence,
		Attempts:    c.Unit.Attempts,
		At:          at,
	}
	if hook := BeforeWarehouseUnit; hook != nil {
		hook(u.Model.Name)
	}
	res, err := wh.RunUnit(ctx, job, lu, func(ctx context.Context, prev state.LedgerEntry) (bool, error) {
		return d.unrecorded(ctx, c.Unit.ID, prev)
	})
	if err != nil {
		return 0, err
	}
	if hook := AfterWarehouseCommit; hook != nil {
		hook(u.Model.Name)
	}
	return res.Rows, nil
}

// storeIdentity is the state store's identity, read from the store the
// first time a warehouse unit needs it: it never changes while the store
// is open.
func (d *dataExecutor) storeIdentity(ctx context.Context) (string, error) {
	d.identityMu.Lock()
	defer d.identityMu.Unlock()
	if d.identity == "" {
		id, err := d.state.Identity(ctx)
		if err != nil {
			return "", fmt.Errorf("reading the state store's identity for the warehouse's ledger: %w", err)
		}
		d.identity = id
	}
	return d.identity, nil
}

// rewritesWindow says whether job replaces what its window held, whatever
// wrote it: a recreate_partition or upsert query (an upsert rewrites every
// key the window's rows have) or a view. An append adds rows, and a sql
// model's statements may do anything, so neither may run over rows another
// store or definition left in the window.
func rewritesWindow(job state.DataJob) bool {
	switch job.Kind {
	case state.DataView:
		return true
	case state.DataQuery:
		return job.Write == state.WriteRecreatePartition || job.Write == state.WriteUpsert
	}
	return false
}

// unrecorded reports whether the claim that committed prev's data ended in
// the store without being recorded applied: its attempt (numbered
// prev.DoneAttempts+1) is in the unit's history of failed attempts, as an
// expired lease or a failure. An applied attempt is not in that history,
// so a unit re-pended after it was recorded (a bulldozer rerun) runs again.
func (d *dataExecutor) unrecorded(ctx context.Context, unitID int64, prev state.LedgerEntry) (bool, error) {
	atts, err := d.state.Attempts(ctx, unitID)
	if err != nil {
		return false, fmt.Errorf("reading the unit's attempts to settle the warehouse's ledger: %w", err)
	}
	for _, a := range atts {
		if a.Number == prev.DoneAttempts+1 {
			return true, nil
		}
	}
	return false, nil
}
