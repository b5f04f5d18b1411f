// Package engine is the embedded engine the CLI, the UI and the SSH server
// share: everything an operator can trigger goes through an Engine, so its
// rules — read-only refusals, the audit log, plan before apply, STATE_MODE —
// hold whichever front end asked. Its files read as a table of contents of
// those actions:
//
//   - register.go: Apply, registering the spec's models and task edges
//   - plan.go: Plan and ApplyPlan, what a run or reset would do, re-planned
//     and refused on drift
//   - run.go, tasks.go, claim_ahead*.go, complete_batch.go: Run, a pipeline's
//     tasks in waves, claims fetched ahead and completions group-committed
//   - run_others.go: waiting for units another worker holds
//   - work.go: Work, the long-running worker
//   - mark.go: Mark, an operator setting a unit's status
//   - status.go: Status, counts and coverage per model
//   - gates.go: GateSweep, Blocked, Why — read through engine/gate
//   - lint.go: Lint, the spec's warnings and errors beyond loading
//   - transient.go: store calls retried across a lost connection
//
// What the engine delegates lives in sub-packages that must not import it:
// engine/spec (definitions and the bollhav.yaml loader), engine/source (file
// sources and hardcoded rows), engine/executor (how a unit's work is done)
// and engine/gate (the contract gate, blocked and why).
package engine
