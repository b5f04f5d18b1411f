package state

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Warehouse is a database that holds models' data apart from the state
// store: the one a model's connection: {dsn_env_var: …} names. A unit's data
// and its applied state can no longer commit in one transaction, so the
// warehouse keeps a ledger (a bollhav-owned schema of its own) that the
// unit's data transaction writes together with the data, fenced by the
// claim's token. docs/semantics.md, "Exactly once across two databases",
// gives the protocol and why each failure is safe.
type Warehouse interface {
	// QuoteTable renders table parts in the warehouse's dialect, as
	// DataStore.QuoteTable does.
	QuoteTable(parts ...string) (string, error)
	// RunData runs a job that belongs to no claimed unit (a hardcoded or
	// file source's load, a unit run outside any claim) in one transaction.
	RunData(ctx context.Context, job DataJob, at time.Time) (DataResult, error)
	// RunUnit runs a claimed unit's job in one transaction that also
	// writes the unit's ledger row under u.Fence. It returns ErrLeaseLost,
	// with nothing written, when the ledger already holds a newer fence
	// for the unit (this claim is a zombie). When the ledger shows the data
	// of u.Fence already committed (a retry after a lost acknowledgement),
	// or of an earlier claim whose outcome unrecorded says the store never
	// recorded, the job does not run again: the result is Replayed with the
	// rows that commit wrote, and the ledger row passes to u.Fence.
	RunUnit(ctx context.Context, job DataJob, u LedgerUnit, unrecorded func(ctx context.Context, prev LedgerEntry) (bool, error)) (UnitResult, error)
	// Ledger returns the ledger row of a unit key; ok is false when the
	// unit never wrote one.
	Ledger(ctx context.Context, key string) (e LedgerEntry, ok bool, err error)
	// ReadData runs a SELECT with :since and :until bound to w, as
	// DataStore.ReadData does.
	ReadData(ctx context.Context, query string, w Window, fn func(row []any) error) error
	// Location is where the warehouse is: never the user or password.
	Location() Location
	Close() error
}

// LedgerUnit is the claim a unit's data transaction runs under.
type LedgerUnit struct {
	// Key names the unit across stores and runs (LedgerKey).
	Key   string
	Fence int64
	// Attempts is the unit's attempt count as claimed, before this attempt:
	// the store logs a failed or expired attempt of this claim as number
	// Attempts+1, which is how a later claim tells whether this one's
	// outcome was recorded.
	Attempts int
	At       time.Time
}

// LedgerEntry is a unit's row in a warehouse's ledger.
type LedgerEntry struct {
	Key string
	// Fence is the newest claim that wrote the row; an older one can no
	// longer commit data for the unit.
	Fence int64
	// DoneFence is the claim whose data committed last (0: none yet), with
	// the attempt count it was claimed with, the rows it wrote and when.
	DoneFence    int64
	DoneAttempts int
	Rows         int64
	DoneAt       time.Time
}

// UnitResult is what RunUnit came to.
type UnitResult struct {
	Rows int64
	// Replayed is a unit whose data had committed before: the job did not
	// run, and Rows are that commit's.
	Replayed bool
}

// Location says where a database is, for status and why: the driver, the
// host and the database (or file), never the user or the password.
type Location struct {
	Driver   string
	Host     string
	Database string
}

// String renders the location as "postgres 127.0.0.1:5432/shop".
func (l Location) String() string {
	switch {
	case l.Driver == "":
		return ""
	case l.Host == "":
		return l.Driver + " " + l.Database
	}
	return l.Driver + " " + l.Host + "/" + l.Database
}

// LedgerKey names a unit in a warehouse's ledger: its environment, model,
// window (none for a timeless unit) and the store's unit id. Fencing tokens
// grow per unit id, and ids are never reused, so a unit torched and created
// again starts a ledger row of its own rather than meeting the old row's
// higher fence.
func LedgerKey(env, model string, w Window, unitID int64) string {
	k := env + "|" + model
	if !w.IsZero() {
		k += "|" + w.Since.UTC().Format(time.RFC3339) + "|" + w.Until.UTC().Format(time.RFC3339)
	}
	return k + "|#" + strconv.FormatInt(unitID, 10)
}

// ErrWarehouse marks a warehouse that could not be opened: an unreachable
// server, a refused login, an unsupported DSN. Its text never holds the
// password.
var ErrWarehouse = errors.New("warehouse")

// LedgerSteps are one backend's parts of a unit's data transaction, all
// run inside that transaction: Fence writes the claim's fence into the
// unit's ledger row and returns the row as it was (ErrLeaseLost when it
// holds a newer one), Run runs the job, Done records the claim's commit.
type LedgerSteps struct {
	Fence func() (LedgerEntry, error)
	Run   func() (int64, error)
	Done  func(rows int64) error
}

// RunLedgered is the exactly-once protocol of Warehouse.RunUnit, the same
// on every backend (docs/semantics.md): fence the ledger row first; this
// claim's own commit (an acknowledgement lost) is replayed; an earlier
// claim's commit the store never recorded (unrecorded says so) is replayed
// and passes to this claim; otherwise the job runs and its commit is
// recorded. Call it inside the transaction the steps use.
func RunLedgered(ctx context.Context, u LedgerUnit, steps LedgerSteps, unrecorded func(context.Context, LedgerEntry) (bool, error)) (UnitResult, error) {
	prev, err := steps.Fence()
	if err != nil {
		return UnitResult{}, err
	}
	switch {
	case prev.DoneFence == u.Fence:
		return UnitResult{Rows: prev.Rows, Replayed: true}, nil
	case prev.DoneFence != 0:
		lost, err := unrecorded(ctx, prev)
		if err != nil {
			return UnitResult{}, err
		}
		if lost {
			// An earlier claim committed the data and the store never
			// recorded it: this claim records it instead of running.
			return UnitResult{Rows: prev.Rows, Replayed: true}, steps.Done(prev.Rows)
		}
	}
	rows, err := steps.Run()
	if err != nil {
		return UnitResult{}, err
	}
	return UnitResult{Rows: rows}, steps.Done(rows)
}
