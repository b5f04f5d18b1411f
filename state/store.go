package state

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// Store is the state store: the registry of models and tasks, the unit rows
// of every model, claims with leases, runs and their task run log, the audit
// log of operator actions and a change feed. The embedded SQLite file
// (state/sqlite) and PostgreSQL (state/postgres) implement it, and
// state/storetest is the one conformance suite both pass, so their behaviour
// cannot drift. No SQL lives outside those backends.
//
// Every method takes the caller's clock where time matters (now, lease
// expiry), so tests need no sleeping and a whole deployment agrees on one
// notion of time: the engine's.
type Store interface {
	// Backend names the implementation: "sqlite" or "postgres".
	Backend() string
	// SchemaVersion is the migration version the store is at.
	SchemaVersion(ctx context.Context) (int, error)
	// Identity is the store's id: random, made once when the store was
	// created (or upgraded from a bollhav before store identities) and
	// kept in it, so it is the same across reopens and processes and
	// differs between two stores. A warehouse's ledger records it with
	// each unit a store writes there (docs/semantics.md, "Exactly once
	// across two databases").
	Identity(ctx context.Context) (string, error)
	Close() error

	// Registry.

	// Register records the models and task edges of one environment in a
	// single transaction: each model's definition replaces its previous
	// one (keeping its task id and registration time when the content
	// hash is unchanged) and is kept in the model's definition history
	// under its Fingerprint, when set, first seen now unless kept before;
	// models not named are left alone; the edges of the named models are
	// replaced. It returns the task id of every
	// named model (ids are stable integers, new models get the next free
	// one) and which of them it created or changed, as it found them in
	// that transaction (Registered).
	Register(ctx context.Context, env string, models []ModelRecord, edges []EdgeRecord, now time.Time) (Registered, error)
	// RegisterSeq is Register of the models models yields, in that order,
	// in the same one transaction: a caller registering tens of thousands
	// of models makes each record as the store writes it rather than
	// holding them all (the records of a 60,000-model spec are 50 MB).
	RegisterSeq(ctx context.Context, env string, models iter.Seq[ModelRecord], edges []EdgeRecord, now time.Time) (Registered, error)
	// Models lists an environment's registered models by name.
	Models(ctx context.Context, env string) ([]ModelRecord, error)
	// ModelHeads is Models without the definitions (Definition nil): what
	// a caller that reads the registrations' shapes, content hashes and
	// task ids reads, at a fraction of the memory — the definitions of a
	// registry of 60,000 models are 35 MB.
	ModelHeads(ctx context.Context, env string) ([]ModelRecord, error)
	// Model returns one registration, or ErrNotFound.
	Model(ctx context.Context, env, name string) (ModelRecord, error)
	// Edges lists an environment's task edges.
	Edges(ctx context.Context, env string) ([]EdgeRecord, error)
	// Definitions lists the definitions model has been registered with in
	// env, oldest first (then by fingerprint): Register keeps each model's
	// definition under its ModelRecord.Fingerprint. An unregistered model
	// has none.
	Definitions(ctx context.Context, env, model string) ([]DefinitionRecord, error)
	// RecordDefinitions keeps definitions registered models had before the
	// store kept them (a registration from an earlier bollhav, about to be
	// replaced), in one transaction. A fingerprint already kept keeps its
	// definition and the earlier of the two times; a model that is not
	// registered is ErrNotFound, and nothing is kept.
	RecordDefinitions(ctx context.Context, defs []DefinitionRecord) error

	// Units.

	// Prefill inserts a pending unit for every window that has no unit of
	// the model yet, in one round trip however many windows there are
	// (100,000 is the design point), and returns how many it created. A
	// timeless model's existence row is the zero Window.
	Prefill(ctx context.Context, req PrefillRequest) (int, error)
	// ScanUnits streams the units matching q in window order; it never
	// loads a model's whole history into memory. fn returning an error
	// stops the scan with that error.
	ScanUnits(ctx context.Context, q UnitQuery, fn func(Unit) error) error
	// Stats counts a model's units by status and finds its newest
	// applied_at, without reading every row into memory.
	Stats(ctx context.Context, env, model string) (UnitStats, error)
	// FingerprintCounts counts an environment's applied units by model and
	// fingerprint in one grouped read of an index (Fingerprint "" counts
	// the units whose fingerprint is unknown): what outdated counts are
	// computed from, for every model at once.
	// A model name narrows the read to that model; "" reads them all.
	FingerprintCounts(ctx context.Context, env, model string) ([]FingerprintCount, error)
	// Summaries returns the units at a glance of every registered model
	// of env (ordered by name; model narrows it to that one, "" reads them
	// all): counts by status, newest applied_at and coverage, in one read
	// of a summary each store keeps in step with the units, so the cost is
	// a few rows per model whatever their history. What `status` and the
	// Pipelines view load.
	Summaries(ctx context.Context, env, model string) ([]ModelSummary, error)
	// StatusCounts returns every model of env that has units, ordered by
	// name, with its units counted by status (statuses with none left
	// out): the kept counts Summaries starts from, read alone — no
	// coverage, no newest applied_at — so its cost is one row per model and
	// status. What a first look at the incidents reads.
	StatusCounts(ctx context.Context, env string) ([]ModelCounts, error)
	// Applied returns the applied rows of a model that overlap w (all of
	// them when w is the zero Window), from an index, not a scan of the
	// model's whole history: what the gate reads.
	Applied(ctx context.Context, env, model string, w Window) ([]AppliedRow, error)
	// Coverage is the union of a model's applied windows within w (the
	// whole model when w is zero).
	Coverage(ctx context.Context, env, model string, w Window) (IntervalSet, error)
	// SetStatus moves the model's units inside w (all units when w is zero)
	// whose status is one of from to status to, clearing lease, error and
	// blocked reason, and returns how many moved: bulldozer's re-pending,
	// blocked units re-evaluated, operator marks. From must name at least
	// one status: an empty list is refused, not read as "every status",
	// so a caller that forgot it cannot re-pend applied history. An error
	// it clears that the unit's attempt history does not hold (a failure
	// from before the history existed) is logged there first, so a mark
	// never loses a unit's last error.
	SetStatus(ctx context.Context, req StatusChange) (int, error)
	// Delete removes the model's units inside w (all of them when w is
	// zero) and returns how many: torch on a fixed grid. It refuses with
	// ErrUnitsRunning, changing nothing, when one of them is running — also
	// one claimed by a concurrent worker after the caller planned.
	Delete(ctx context.Context, req RemoveRequest) (int, error)
	// Uncover subtracts w from a flexible model's coverage: units inside w
	// are deleted and units crossing its edges are trimmed to the part
	// outside it, so a re-chunk re-covers cleanly instead of layering a
	// second grain. Zero w uncovers everything. Like Delete, it refuses
	// with ErrUnitsRunning when a unit it would remove or cut is running.
	Uncover(ctx context.Context, req RemoveRequest) (int, error)

	// Claims.

	// Claim moves up to limit pending units of the given models (all
	// models of env when none are named) to running under a lease until
	// now+lease, each with a new fencing token. Two running units of one
	// flexible model never overlap: a unit whose window overlaps a running
	// one is left pending. Concurrent claimers never receive the same unit.
	// A limit below one, a lease that is not positive or an empty window is
	// refused (ClaimRequest.Check).
	Claim(ctx context.Context, req ClaimRequest) ([]Claim, error)
	// Heartbeat extends a claim's lease; ErrLeaseLost when the unit is no
	// longer running under this claim's fence.
	Heartbeat(ctx context.Context, c Claim, until time.Time) error
	// Complete records a claimed unit's outcome. It succeeds only while the
	// unit is running under the claim's fence (ErrLeaseLost otherwise); a
	// repeat of an outcome already recorded under the same fence — a retry
	// after a lost commit acknowledgement — is a no-op.
	Complete(ctx context.Context, c Claim, o Outcome) error
	// CompleteBatch records many claimed units' outcomes in one
	// transaction: a worker that finishes hundreds of short units a second
	// pays one commit for all of them instead of one each. Every item is
	// fenced exactly as Complete fences it, on its own: errs[i] is
	// ErrLeaseLost for a claim that no longer holds its unit (and that
	// item changes nothing), an error for an outcome that is not one, and
	// nil for an outcome recorded or already recorded under the same fence
	// (a retried batch after a lost acknowledgement is a no-op for those);
	// the other items commit either way. Items are taken in order, as if
	// by Complete one after another, so a unit named twice gets its first
	// outcome, and its second is a repeat or ErrLeaseLost; the change feed
	// gets one change per unit recorded, as from Complete. err is a failure
	// of the whole batch (a lost connection) with errs nil: the batch
	// committed whole or not at all, and sending it again as it is is
	// safe either way. Keep batches to a few hundred items: they hold
	// their units' row locks until the commit.
	CompleteBatch(ctx context.Context, items []Completion) (errs []error, err error)
	// ReleaseExpired returns every running unit whose lease ended before
	// now to pending with attempts+1, and returns how many. Each expired
	// lease is a failed attempt in the unit's history (Try 0: it counted
	// in no retry budget), logged in the same transaction.
	ReleaseExpired(ctx context.Context, now time.Time) (int, error)
	// Attempts returns the unit's failed attempts, oldest first, newest
	// last: the newest MaxAttemptHistory of them. Complete, CompleteBatch
	// and ReleaseExpired log one in the transaction that ends the attempt
	// (a final failure, a retry outcome, an expired lease); Delete and
	// Uncover drop a removed unit's. A unit with none, or no unit with
	// that id, has an empty history.
	Attempts(ctx context.Context, unitID int64) ([]Attempt, error)

	// Runs and the task run log (AUD_TASK_RUN_LOG).

	CreateRun(ctx context.Context, r Run) (int64, error)
	FinishRun(ctx context.Context, id int64, status RunStatus, at time.Time) error
	GetRun(ctx context.Context, id int64) (Run, error)
	// Runs lists the newest runs first, at most limit.
	Runs(ctx context.Context, env string, limit int) ([]Run, error)
	// UnfinishedRuns lists the runs of env that have not finished (going
	// on, or left so by a crash), oldest first.
	UnfinishedRuns(ctx context.Context, env string) ([]Run, error)
	// HeartbeatRun records that run id's process is alive at at (the
	// engine's lease clock): a running run beats it every lease/3 from its
	// start until it finishes. ErrNotFound for no such run.
	HeartbeatRun(ctx context.Context, id int64, at time.Time) error
	// AbandonRuns closes, in one transaction, every run of env that is
	// running, whose heartbeat is older than now−lease and that holds no
	// unit running under a lease live at now claimed for it: its process
	// is gone. Each becomes RunAbandoned, finished at now, and its task
	// attempts still IN_PROGRESS become FAILED with the error
	// AbandonedTask, finished at now. It returns the ids it closed, oldest
	// first; two callers at once close each run once. A lease that is not
	// positive is refused.
	AbandonRuns(ctx context.Context, env string, now time.Time, lease time.Duration) ([]int64, error)
	// StartTask opens a new attempt of a task under a run and returns its
	// attempt number (1 for the first).
	StartTask(ctx context.Context, runID int64, taskID int, at time.Time) (int, error)
	// FinishTask records the outcome of an attempt opened by StartTask.
	FinishTask(ctx context.Context, e TaskRunEntry) error
	// TaskLog returns every attempt of every task under a run, by task and
	// attempt.
	TaskLog(ctx context.Context, runID int64) ([]TaskRunEntry, error)

	// Audit log of operator actions.

	Audit(ctx context.Context, e AuditEntry) error
	AuditLog(ctx context.Context, limit int) ([]AuditEntry, error)

	// Change feed.

	// Changes returns the changes after seq, oldest first, at most limit.
	// Every unit transition the store makes is recorded in the same
	// transaction, so a reader that remembers its last seq never misses
	// one, whatever happened to its connection in between: every seq up to
	// the last one returned is final (returned, or rolled back), even
	// where transactions commit in another order than their seqs.
	Changes(ctx context.Context, after int64, limit int) ([]Change, error)
	// LatestSeq returns the seq of the newest change (0 when the feed is
	// empty) once every change up to it has committed or rolled back: a
	// read made after it reflects every change up to it. Use
	// state.LatestSeq.
	LatestSeq(ctx context.Context) (int64, error)
	// Wake returns a channel that receives a value whenever another
	// process may have changed the store (NOTIFY in PostgreSQL,
	// data_version polling in SQLite). It is only a hint: the reader then
	// calls Changes. The channel closes when ctx ends.
	Wake(ctx context.Context) (<-chan struct{}, error)
}

// Errors a Store returns; test them with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	// ErrLeaseLost is a transition refused because the unit is no longer
	// running under the caller's fencing token: another worker owns it now.
	ErrLeaseLost = errors.New("lease lost: the unit is no longer held by this claim")
	// ErrUnitsRunning is a Delete or Uncover refused because a unit it
	// would remove or cut is running: a worker holds it, and removing it
	// under the worker would let two loads of one window interleave.
	ErrUnitsRunning = errors.New("units are running")
	// ErrNewerSchema is a store migrated by a newer bollhav than this one.
	ErrNewerSchema = errors.New("the state store was written by a newer bollhav")
	// ErrWindowTaken is an Uncover refused because the part of a unit it
	// would leave has the very window of another unit of the model (only
	// overlapping units of a flexible model can): keeping both would
	// break one unit per window, replacing the other would lose its
	// status. Nothing changes.
	ErrWindowTaken = errors.New("the window is another unit's")
)

// ModelRecord is one model's registration in one environment.
type ModelRecord struct {
	Env      string
	Name     string
	Pipeline string
	// Temporality is "temporal" or "timeless".
	Temporality string
	// Flexibility is "fix" or "flex" (temporal models).
	Flexibility string
	// Interval is the grain as written ("1h", "1mo"); empty when timeless.
	Interval string
	Timezone string
	Start    time.Time
	End      *time.Time
	// Definition is the model's full definition as JSON, so a UI can be
	// opened from the store alone.
	Definition []byte
	// ContentHash fingerprints Definition.
	ContentHash  string
	RegisteredAt time.Time
	TaskID       int
	// Fingerprint is the definition fingerprint of Definition (what
	// changes the model's output; engine/spec), for Register to keep the
	// definition by; stores do not return it.
	Fingerprint string
}

// Registered is what one Register call did: every named model's task id,
// and which of the models it created or changed. The store decides both in
// the transaction that writes the registrations, under its register lock
// (PostgreSQL's advisory lock, SQLite's one writer), so of several
// registrations at once — four processes applying one spec — exactly one
// creates each new model. An engine that read the registry first and
// counted from that would have every one of them say it created them all.
type Registered struct {
	// TaskIDs is the task id of every named model.
	TaskIDs map[string]int
	// Created are the named models that had no registration in the
	// environment; Changed those whose registration the call replaced
	// with another (SameRegistration is false); the rest were unchanged.
	// Each in the order the models were given.
	Created, Changed []string
}

// SameRegistration reports whether registering neu over old changes
// nothing of the model's registration but its definition's bytes: the
// content hash, the pipeline and the shape (temporality, flexibility,
// interval, timezone, start and end, to the microsecond both stores keep)
// are equal. It is what Register counts as unchanged.
func SameRegistration(old, neu ModelRecord) bool {
	sameTime := func(a, b time.Time) bool { return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond)) }
	sameEnd := old.End == nil && neu.End == nil || old.End != nil && neu.End != nil && sameTime(*old.End, *neu.End)
	return old.ContentHash == neu.ContentHash && old.Pipeline == neu.Pipeline && old.Temporality == neu.Temporality &&
		old.Flexibility == neu.Flexibility && old.Interval == neu.Interval && old.Timezone == neu.Timezone &&
		sameTime(old.Start, neu.Start) && sameEnd
}

// DefinitionRecord is one definition a model has had, kept by its
// definition fingerprint with the time it was first seen.
type DefinitionRecord struct {
	Env, Model  string
	Fingerprint string
	Definition  []byte
	FirstSeen   time.Time
}

// EdgeRecord is one task dependency, by model name. Cross marks an edge onto
// another pipeline's task (or a model of another spec).
type EdgeRecord struct {
	Env       string
	Task      string
	DependsOn string
	// Type is SUCCESS, FAILURE, ALWAYS or HAS_DATA.
	Type     string
	Implicit bool
	Cross    bool
}

// UnitStatus is a unit's state; see docs/design.md, Units.
type UnitStatus string

// The five unit statuses.
const (
	Pending UnitStatus = "pending"
	Running UnitStatus = "running"
	Applied UnitStatus = "applied"
	Blocked UnitStatus = "blocked"
	Failed  UnitStatus = "failed"
)

// Statuses lists every unit status in display order.
var Statuses = []UnitStatus{Pending, Running, Applied, Blocked, Failed}

// Unit is one state row: a fixed grid window, a flexible model's covered
// unit, or a timeless model's existence row (zero Window).
type Unit struct {
	ID            int64
	Env           string
	Model         string
	Window        Window
	Status        UnitStatus
	AppliedAt     *time.Time
	BlockedReason string
	Error         string
	Attempts      int
	RunID         int64
	LeaseOwner    string
	LeaseUntil    *time.Time
	// NotBefore is when a pending unit that failed and waits for its retry
	// may be claimed again; nil when it may be claimed now.
	NotBefore   *time.Time
	Fence       int64
	RowsWritten *int64
	UpdatedAt   time.Time
	// Fingerprint is the definition fingerprint an applied unit was built
	// under; empty for every other status and when unknown (marked applied
	// by an operator, or applied before the store recorded fingerprints).
	Fingerprint string
}

// UnitStats summarises one model's units.
type UnitStats struct {
	Counts        map[UnitStatus]int
	LastAppliedAt *time.Time
}

// ModelSummary is one model's units at a glance, as Summaries reads them:
// Counts holds every status of Statuses, zero included; Coverage is empty
// for a timeless model, whose one row has no window.
type ModelSummary struct {
	Model string
	UnitStats
	Coverage IntervalSet
}

// ModelCounts is one model's units by status, as StatusCounts reads them.
type ModelCounts struct {
	Model  string
	Counts map[UnitStatus]int
}

// FingerprintCount is how many applied units of Model were built under
// Fingerprint ("": unknown).
type FingerprintCount struct {
	Model       string
	Fingerprint string
	Count       int
}

// AppliedRow is an applied unit as the gate sees it.
type AppliedRow struct {
	Window    Window
	AppliedAt time.Time
	// Fingerprint is the definition the unit was built under ("":
	// unknown), for a contract that requires its upstream current.
	Fingerprint string
}

// UnitQuery selects units to scan.
type UnitQuery struct {
	Env   string
	Model string
	// Window, when not zero, keeps units overlapping it.
	Window Window
	// Statuses, when not empty, keeps units in one of them.
	Statuses []UnitStatus
}

// StatusChange is a bulk status transition of one model's units.
type StatusChange struct {
	Env, Model string
	Window     Window
	From       []UnitStatus
	To         UnitStatus
	// AppliedAt is set on units moved to applied (operator marks).
	AppliedAt time.Time
	// Reason, with To blocked, is the blocked_reason the units are left
	// with (a run re-judging blocked units rewrites a reason that no
	// longer holds); other moves clear the reason and take none.
	Reason string
	RunID  int64
	Now    time.Time
}

// PrefillRequest asks for a pending unit in each of Windows that has no
// unit of the model yet.
type PrefillRequest struct {
	Env, Model string
	Windows    []Window
	Now        time.Time
}

// RemoveRequest is a Delete or an Uncover of one model's units inside
// Window (all of them when it is zero), on behalf of run RunID.
type RemoveRequest struct {
	Env, Model string
	Window     Window
	RunID      int64
	Now        time.Time
}

// ClaimRequest asks for pending units to run.
type ClaimRequest struct {
	Env    string
	Models []string
	// Window, when not zero, keeps units overlapping it: execution is
	// window-scoped.
	Window Window
	Worker string
	Lease  time.Duration
	Limit  int
	RunID  int64
	Now    time.Time
}

// Claim is a unit held by a worker under a lease and a fencing token.
type Claim struct {
	Unit  Unit
	Fence int64
}

// Outcome is what running a claimed unit came to.
type Outcome struct {
	// Status is Applied, Failed, Blocked or Pending: released unrun, or —
	// with an Error — a failed attempt that will be tried again (Retry).
	Status        UnitStatus
	At            time.Time
	BlockedReason string
	Error         string
	RowsWritten   *int64
	// NotBefore, with Status Pending, is when the unit may be claimed
	// again: no claim takes it earlier. With an Error it is a failed
	// attempt's retry time; without one it is a wait — the unit was
	// released unrun because upstream work it needs is under way, and
	// BlockedReason says what it waits for (IsWait).
	NotBefore time.Time
	// Try, for a failed attempt (Failed, or a Retry), is its try number
	// within the retry budget it counted in, from 1; the store keeps it in
	// the unit's attempt history. 0 is read as 1.
	Try int
	// Fingerprint, with Status Applied, is the definition fingerprint the
	// unit was built under; empty records it unknown. Other statuses
	// record none.
	Fingerprint string
}

// Retry reports whether o sends a failed attempt back to pending for
// another try: the attempt counts, its error is kept, and the unit waits
// until NotBefore.
func (o Outcome) Retry() bool { return o.Status == Pending && o.Error != "" }

// IsWait reports whether o releases a unit unrun to wait for upstream work
// under way: pending with no error, a NotBefore and the reason. It counts
// no attempt.
func (o Outcome) IsWait() bool {
	return o.Status == Pending && o.Error == "" && !o.NotBefore.IsZero()
}

// Completion is one claimed unit's outcome, an item of CompleteBatch.
type Completion struct {
	Claim   Claim
	Outcome Outcome
}

// RunStatus is a run's state.
type RunStatus string

// Run statuses.
const (
	RunRunning   RunStatus = "running"
	RunSucceeded RunStatus = "succeeded"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
	// RunAbandoned is a run whose process stopped without closing it (a
	// SIGKILL, a lost machine): no heartbeat and no live lease for a whole
	// lease period. Whoever rescued its leases closed it (AbandonRuns).
	RunAbandoned RunStatus = "abandoned"
)

// RunStatuses lists every run status.
var RunStatuses = []RunStatus{RunRunning, RunSucceeded, RunFailed, RunCancelled, RunAbandoned}

// AbandonedTask is the run log's error of a task attempt left IN_PROGRESS
// by a run closed as abandoned: recorded FAILED, so that a retry of the
// run gives it a new attempt like any failed task.
const AbandonedTask = "abandoned: its process stopped without closing the run"

// CheckAbandonLease refuses a lease that is not positive for AbandonRuns.
func CheckAbandonLease(lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("abandon runs: the lease must be positive, not %s", lease)
	}
	return nil
}

// Run is one engine run: a pipeline or named models, a window and a
// STATE_MODE.
type Run struct {
	ID         int64
	Env        string
	Pipeline   string
	Models     []string
	Window     Window
	StateMode  string
	Status     RunStatus
	Actor      string
	StartedAt  time.Time
	FinishedAt *time.Time
	// Heartbeat is when the run's process last said it was alive, on the
	// engine's lease clock (HeartbeatRun); CreateRun records StartedAt
	// when it is zero, and a run from before heartbeats reads StartedAt.
	Heartbeat time.Time
}

// TaskRunEntry is one attempt of a task under a run: a row of the task run
// log (AUD_TASK_RUN_LOG).
type TaskRunEntry struct {
	RunID      int64
	TaskID     int
	Attempt    int
	Status     string // SUCCESS, FAILED, SKIPPED, IN_PROGRESS
	StartedAt  time.Time
	FinishedAt *time.Time
	// RowsWritten is what the attempt inserted, updated or deleted.
	RowsWritten *int64
	TargetCount *int64
	Error       string
}

// AuditEntry is one operator action: who, when, what, with which
// arguments, and how it ended.
type AuditEntry struct {
	ID      int64
	At      time.Time
	Actor   string
	Action  string
	Args    map[string]string
	Outcome string
}

// Change is one recorded unit transition. A bulk operation (a prefill, a
// torch) is one change with Count units and Window their hull.
type Change struct {
	Seq    int64
	Env    string
	Model  string
	Window Window
	From   UnitStatus
	To     UnitStatus
	Count  int
	At     time.Time
	RunID  int64
}
