package state

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Copying a store (`bollhav store copy`, docs/semantics.md "Moving a
// store"): one backend reads its whole content and hands it, row by row,
// to a CopyWriter another store (of either backend) opened, which writes it
// in one transaction. What is copied is the state: the registry, the
// definition history, units, runs, task attempts, unit attempts, the audit
// log and the store's identity. What is not: the change feed (a copy starts
// its own), the counts and coverage kept beside the units (the writer
// rebuilds them from the units), and the models' data a store keeps in its
// own database (data_loads says what data it loaded; the data stays
// behind, so the bookkeeping does too).

// StoreCopier is a store `bollhav store copy` can read from and fill.
type StoreCopier interface {
	// CopyOut reads the store's whole content in one consistent read and
	// writes it to w in the order CopyWriter documents, then commits w.
	// With opts.Retire set it holds off every writer from the first read
	// on, refuses with a *CopyBusyError while units are running, and,
	// once w has committed, retires the store in the same transaction as
	// the read, so no write can land between the copy and the retirement.
	// Any error before w commits rolls w back and leaves this store as it
	// was.
	CopyOut(ctx context.Context, w CopyWriter, opts CopyOutOptions) error
	// CopyIn opens the one transaction a copy is written in, refused with
	// a *NotEmptyError when the store already holds state (a model, a
	// unit, a run or an audit row). With opts.Snapshot set the store keeps
	// its own identity, ignores the source's, and is retired as a
	// snapshot in the same transaction.
	CopyIn(ctx context.Context, opts CopyInOptions) (CopyWriter, error)
	// Retirement is how the store was retired; nil for a live store.
	Retirement(ctx context.Context) (*Retirement, error)
	// Retire retires a live store as r says: a move whose target
	// committed but whose source was not retired is finished by it. It
	// refuses a store already retired, and one with units running.
	Retire(ctx context.Context, r Retirement) error
}

// CopyOutOptions is what CopyOut is asked to do besides reading.
type CopyOutOptions struct {
	// Retire, when set, retires the source once the target committed.
	Retire *Retirement
	// Progress, when set, is called as units are read: done of total.
	Progress func(done, total int64)
}

// CopyInOptions is how CopyIn fills the target.
type CopyInOptions struct {
	// Snapshot, when set, makes the target a read-only snapshot that
	// keeps its own identity (so it never claims the source's commits in
	// a warehouse).
	Snapshot *Retirement
}

// CopyWriter receives a store's content. CopyOut calls it in this order,
// each kind complete before the next: Identity, Model, Edge, Definition,
// Run, TaskRun, Unit, Attempt, Audit; then Commit, or Rollback on any
// error. IDs (units, runs, audit rows, task ids) are kept as they are:
// a warehouse ledger names units by id, and a unit's attempts and a task
// attempt's run by theirs.
type CopyWriter interface {
	Identity(id string, createdAt time.Time) error
	Model(m ModelRecord) error
	Edge(e EdgeRecord) error
	Definition(d DefinitionRecord) error
	Run(r Run) error
	TaskRun(e TaskRunEntry) error
	Unit(u Unit) error
	Attempt(unitID int64, a Attempt) error
	Audit(a AuditEntry) error
	// Commit rebuilds what the store keeps beside the units (counts,
	// coverage, the longest unit per model, id sequences past the copied
	// ids) and commits.
	Commit(ctx context.Context) error
	// Rollback abandons the copy; the target is left as CopyIn found it.
	Rollback() error
}

// RetirementKind is why a store no longer takes writes.
type RetirementKind string

const (
	// RetiredMoved is a store whose state moved to another store: the
	// other store now holds its identity, and two live stores must never
	// share one.
	RetiredMoved RetirementKind = "moved"
	// RetiredSnapshot is a read-only copy of another store with an
	// identity of its own: something to inspect, never to run from.
	RetiredSnapshot RetirementKind = "snapshot"
)

// Retirement is a store's refusal of every write, kept in the store.
type Retirement struct {
	Kind RetirementKind
	// Other is the other store, its DSN without a password: where a moved
	// store went, what a snapshot was taken of.
	Other string
	At    time.Time
}

// Refusal is the sentence a write to the retired store is refused with:
// what it is, since when, and where to go instead.
func (r Retirement) Refusal() string {
	if r.Kind == RetiredSnapshot {
		return fmt.Sprintf("this store is a read-only snapshot of %s taken at %s: it refuses every write; run against %s instead",
			r.Other, FormatTime(r.At), r.Other)
	}
	return fmt.Sprintf("this store was moved to %s at %s (bollhav store copy): it refuses every write; point --dsn at %s",
		r.Other, FormatTime(r.At), r.Other)
}

// ErrRetired is a write refused because the store is retired.
var ErrRetired = errors.New("the state store is retired")

// RetiredError is a write (Action: run, apply, mark, work…) refused by a
// retired store.
type RetiredError struct {
	Action string
	Retirement
}

func (e *RetiredError) Error() string {
	if e.Action == "" {
		return e.Refusal()
	}
	return e.Action + " refused: " + e.Refusal()
}

func (e *RetiredError) Unwrap() error { return ErrRetired }

// NotEmptyError refuses a copy into a store that already holds state.
type NotEmptyError struct {
	Models, Units, Runs, Audit int64
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("the target store already holds state (%d models, %d units, %d runs, %d audit rows): store copy fills only an empty store; "+
		"point --to at a new database, schema or file", e.Models, e.Units, e.Runs, e.Audit)
}

// CopyBusyError refuses a move while units run: their workers would
// finish into a store that refuses them.
type CopyBusyError struct {
	Running int64
}

func (e *CopyBusyError) Error() string {
	return fmt.Sprintf("%d unit(s) are running in this store: a move would strand their workers; wait for the runs to end (bollhav ui's runs view), then copy again "+
		"(a unit whose worker died stays running until its lease expires and a run or a worker takes it over)", e.Running)
}

// CheckMove is the refusal both backends give a move of a store retired
// as r (nil: live) with running units running: a retired store is not
// moved again, and running units would strand their workers.
func CheckMove(r *Retirement, running int64) error {
	if r != nil {
		return &RetiredError{Action: "store copy", Retirement: *r}
	}
	if running > 0 {
		return &CopyBusyError{Running: running}
	}
	return nil
}

// Stream hands each row of rows to fn until one fails, then returns the
// rows' own error: a backend's streaming read, whatever its driver.
func Stream[R interface {
	Next() bool
	Err() error
}](rows R, fn func(R) error) error {
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CopyProgress reports a CopyOut's units to CopyOutOptions.Progress: at
// the start, every 10,000 units and at the end. Its zero value (no
// Progress asked for) reports nothing.
type CopyProgress struct {
	fn          func(done, total int64)
	done, total int64
}

// NewCopyProgress starts reporting to fn, which may be nil, total units.
func NewCopyProgress(fn func(done, total int64), total int64) *CopyProgress {
	p := &CopyProgress{fn: fn, total: total}
	if fn != nil {
		fn(0, total)
	}
	return p
}

// Add counts one unit copied.
func (p *CopyProgress) Add() {
	if p.done++; p.fn != nil && p.done%10_000 == 0 {
		p.fn(p.done, p.total)
	}
}

// Finish reports the last count.
func (p *CopyProgress) Finish() {
	if p.fn != nil {
		p.fn(p.done, p.total)
	}
}
