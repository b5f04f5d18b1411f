// Package storetest is the conformance suite every state.Store backend runs,
// so the embedded SQLite file and PostgreSQL cannot drift apart. A backend's
// test calls Run with a function that opens a fresh, empty, migrated store;
// every subtest gets its own (its own file, its own schema) and may run in
// parallel with the others.
//
// Where state/store.go leaves a choice open, the suite pins it down here, so
// both backends make the same one:
//
//   - Times are kept to the microsecond (PostgreSQL's precision) and come back
//     in UTC. A zero time.Time (a timeless model's Start, the zero Window of an
//     existence row or of a run without a window) comes back zero.
//   - Registry: task ids are per environment, starting at 1; new models of one
//     Register call take the next free ids in the order they are given. Models
//     lists by name; Edges lists by task, then depends_on, and Register
//     replaces the edges whose Task is one of the named models.
//   - Every model-scoped call (Prefill, ScanUnits with a Model, Stats, Applied,
//     Coverage, SetStatus, Delete, Uncover) on a model not registered in the
//     environment fails with ErrNotFound, as do GetRun/FinishRun/StartTask on
//     an unknown run and FinishTask on an attempt never started.
//   - Units are keyed by (env, model, window): Prefill skips windows that
//     already have a unit of exactly that window (and duplicates within one
//     call), and refuses an empty or reversed window, creating nothing.
//   - A unit's AppliedAt is set only while it is applied, Error only while
//     failed, BlockedReason only while blocked, LeaseOwner and LeaseUntil only
//     while running (a status change clears what the old status carried);
//     every transition sets UpdatedAt to the caller's time. Claim sets RunID; SetStatus sets RunID when moving units.
//   - Attempts counts the claims that came to an outcome (Complete with
//     Applied, Failed or Blocked) or whose lease expired; a claim released
//     unrun (Outcome Pending) does not count.
//   - "Inside w" (SetStatus, Delete) means covered by w: a unit crossing w's
//     edge is left alone. SetStatus skips units already in the target status
//     and does not count them. SetStatus to Applied with a zero AppliedAt uses
//     Now.
//   - Uncover deletes the units inside w, trims the units crossing an edge of w
//     to their part outside it, and splits a unit spanning w into two; both
//     parts keep their status, applied_at and attempts. It returns how many
//     units it deleted, trimmed or split. When a part left would coincide
//     with another unit's window (only overlapping flexible units can), it
//     fails and changes nothing.
//   - Delete and Uncover refuse with ErrUnitsRunning, changing nothing, when
//     a unit they would remove or cut is running.
//   - ScanUnits orders by model name, then since, then until; a zero Window
//     matches every unit, a non-zero one only units overlapping it (a timeless
//     existence row overlaps nothing). Applied and Coverage include only
//     applied units; Applied with a zero Window returns them all, the
//     existence row included.
//   - Stats.Counts has an entry for every status, zeros included.
//   - Claim takes the oldest windows first (by since); with Window set it
//     keeps units overlapping it; an empty Models means every model of Env.
//     A pending unit of a flexible model that overlaps a running unit of the
//     same model, or one claimed earlier in the same call, is skipped. Each
//     claim gets a fence larger than any the unit had before, and unit ids
//     are never reused, so a stale claim on a deleted unit cannot match a new
//     one. Claim, Heartbeat and Complete identify the unit by Claim.Unit.ID.
//   - Complete repeated under the same fence with the status the unit already
//     has is a successful no-op that changes nothing (not even AppliedAt).
//     Anything else on a unit that is not running under the claim's fence —
//     re-claimed, re-pended by an operator, deleted — is ErrLeaseLost.
//   - ReleaseExpired releases leases that ended strictly before now.
//   - Attempts lists a unit's failed attempts oldest first: one per Complete
//     or CompleteBatch item with Failed or a Retry outcome (Try 0 stored as
//     1) and one per lease ReleaseExpired releases (Try 0, the error
//     state.LeaseExpiredError(lease owner), At its now); Number is the unit's
//     Attempts right after, RunID the unit's run (0 for none). SetStatus
//     logs a moved unit's non-empty error that has no row numbered its
//     Attempts yet (Try 0, At its UpdatedAt, RunID its run) before clearing
//     it, and never logs a failure twice. A unit keeps
//     its newest MaxAttemptHistory rows; Delete and Uncover remove a removed
//     unit's; an unknown unit has an empty history, not an error.
//   - Runs with an empty Status are created running. Runs and AuditLog list
//     newest first; a limit of 0 or less means no limit. TaskLog orders by
//     task id, then attempt; StartTask opens attempts IN_PROGRESS.
//   - The change feed: Changes with a limit of 0 or less returns everything
//     after seq. Every seq up to the last one returned is final (returned,
//     or its transaction rolled back), so a reader that remembers the last
//     seq it saw never skips one that commits later, even where seqs commit
//     out of order (PostgreSQL; the race is tested in state/postgres,
//     feed_order_test.go). LatestSeq is the newest seq, every one up to it
//     final. Claim and Complete
//     record one change per unit (Count 1). Prefill records one change from
//     "" to pending whose Window is the hull of the units it created, and none
//     when it created nothing. SetStatus, Delete, Uncover and ReleaseExpired
//     record one change per (env, model, from-status) of the units they
//     touched, with their Count and hull; Delete and Uncover record To "". A
//     no-op records nothing. Change.At is the caller's now (the outcome's At
//     for Complete) and RunID the run that caused it (the unit's run for
//     Complete, the largest run of the released units for ReleaseExpired).
//   - Wake signals every commit made after it returned, by this Store or by
//     another one on the same database, within a few seconds.
//   - Refusals read the same on both backends, word for word: not-found
//     (model, run, attempt), an empty or reversed window (Prefill, SetStatus,
//     Delete, Uncover, Claim), running units in a Delete or Uncover, a lost
//     lease, an outcome that is not one, a refused SetStatus and a Claim
//     with a limit below one or a lease that is not positive are built by
//     state's error builders (state/errors.go) and returned unwrapped.
package storetest

import (
	"testing"

	"github.com/bollhav/bollhav/state"
)

// Option configures Run.
type Option func(*config)

// WithReopen lets the suite open a second Store on the same database as s,
// the way another process would (a second file handle, a second pool). The
// suite then also checks that migrations are idempotent, that data survives a
// reopen, that Wake hears another process's commit and that concurrent
// claimers in different processes never share a unit. fn should close what it
// opens with t.Cleanup.
func WithReopen(fn func(t *testing.T, s state.Store) state.Store) Option {
	return func(c *config) { c.reopen = fn }
}

// WithLargePrefill sets the size of the Units/PrefillLarge check (100,000
// windows, the design point, by default). A backend whose race-instrumented
// build is much slower — the pure-Go SQLite under -race — may pass less, as
// long as it still exceeds any limit it has on statement parameters.
func WithLargePrefill(n int) Option {
	return func(c *config) { c.largePrefill = n }
}

type config struct {
	// open is Run's open: another fresh store.
	open         func(t *testing.T) state.Store
	reopen       func(t *testing.T, s state.Store) state.Store
	largePrefill int
}

// test is one conformance check; s is fresh and empty.
type test struct {
	name string
	fn   func(t *testing.T, s state.Store, c *config)
}

type group struct {
	name  string
	tests []test
}

// Run runs the whole suite against the stores open returns. open must return
// a fresh, empty, migrated store for the subtest it is given, and close it
// with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) state.Store, opts ...Option) {
	c := &config{open: open, largePrefill: 100_000}
	for _, o := range opts {
		o(c)
	}
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t, open(t), c)
				})
			}
		})
	}
}

func groups() []group {
	return []group{
		{"Registry", registryTests},
		{"Units", unitTests},
		{"Transitions", transitionTests},
		{"Claims", claimTests},
		{"CompleteBatch", batchTests},
		{"Attempts", attemptTests},
		{"Runs", runTests},
		{"AbandonedRuns", abandonTests},
		{"Feed", feedTests},
		{"Migrations", migrationTests},
		{"Data", dataTests},
		{"Errors", errorTests},
		{"Fingerprints", fingerprintTests},
		{"Definitions", definitionTests},
		{"Copy", copyTests},
		{"Stuck", stuckTests},
	}
}
