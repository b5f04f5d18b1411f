package executor

import (
	"context"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// UnitRun is one unit of work handed to an executor: a model, the window it
// must produce, and the context of the run that claimed it. Executors get
// everything they need from it, so they never read the state store — the run
// loop owns state transitions, and an executor only does the work.
type UnitRun struct {
	Model *spec.Model
	// Env is the environment the unit writes: its target and gated reads
	// move with Env's suffix.
	Env spec.Env
	// Window is the unit's [since, until); nil for a timeless model, whose
	// one unit has no time range.
	Window *state.Window
	// RunID identifies the pipeline run, so an executor's own logs and
	// audit rows can be joined with the run log.
	RunID int64
	// StateMode is the run's mode, passed on so that a loader can choose,
	// say, a full reload under torch. The zero value means Bulldozer.
	StateMode spec.StateMode
	// SpecDir is the directory of the spec file: relative paths in the spec
	// (a command's program, a file source's path) are relative to it, so a
	// project runs the same from any working directory.
	SpecDir string
	// Fingerprint is the model's definition fingerprint, which an executor
	// that records its unit applied itself (a data job) records with it.
	Fingerprint string
}

// Result is what an executor reports about a unit it applied.
type Result struct {
	// RowsWritten is nil when the executor does not know: a command that
	// prints no rows_written line. Zero is a real answer, which the HAS_DATA
	// edge of the task graph depends on, so it must not double as "unknown".
	RowsWritten *int64
	// Unrecorded, from an Applier's ExecuteAndApply, means the unit's data
	// committed (in its warehouse) but the unit is not recorded applied
	// yet: the caller records it under the claim, in its batched
	// completions, as it records any executor's result. Were that never to
	// happen, the warehouse's ledger lets the next claim record it.
	Unrecorded bool
}

// Executor does a unit's work. A nil error means the unit may be applied;
// an error fails the unit, and its text is what the unit's error column and
// the UI show, so it must say what went wrong without leaking secrets.
// Execute must return once ctx is done, having stopped the work it started.
type Executor interface {
	Execute(ctx context.Context, u UnitRun) (Result, error)
}
