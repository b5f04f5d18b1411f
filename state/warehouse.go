package state

import (
	"context"
	"errors"
	"strconv"
	"strings"
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
	Key string
	// Env, Model and Window are the unit's window: the ledger looks at
	// every row of another store that overlaps it, whatever its key (two
	// stores give one window different unit ids).
	Env, Model string
	Window     Window
	// Store is the identity of the state store the claim was made in
	// (Store.Identity); fences are compared only between rows of one store.
	Store string
	// Fingerprint is the definition fingerprint the claim runs (engine/spec):
	// a commit under another one is never replayed as this claim's.
	Fingerprint string
	// Rewrites says the job replaces what the window held, whatever that was
	// (recreate_partition, upsert, a view): it may run over rows another
	// store or definition wrote, and takes the window over. An append or a
	// sql model's statements may not (LedgerConflict).
	Rewrites bool
	Fence    int64
	// Attempts is the unit's attempt count as claimed, before this attempt:
	// the store logs a failed or expired attempt of this claim as number
	// Attempts+1, which is how a later claim tells whether this one's
	// outcome was recorded.
	Attempts int
	At       time.Time
}

// LedgerEntry is a unit's row in a warehouse's ledger.
type LedgerEntry struct {
	Key        string
	Env, Model string
	Window     Window
	// Store is the identity of the store whose claim wrote the row last,
	// Fingerprint the definition its commit ran: both "" on a row from a
	// bollhav before store identities, which counts as another store's.
	Store       string
	Fingerprint string
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

// ParseLedgerKey reads the environment, model and window back from a
// LedgerKey: what a ledger from before the window's own columns is
// upgraded with. ok is false for a key LedgerKey did not make.
func ParseLedgerKey(key string) (env, model string, w Window, ok bool) {
	parts := strings.Split(key, "|")
	if n := len(parts); (n != 3 && n != 5) || !strings.HasPrefix(parts[n-1], "#") {
		return "", "", Window{}, false
	}
	if len(parts) == 5 {
		since, err1 := time.Parse(time.RFC3339, parts[2])
		until, err2 := time.Parse(time.RFC3339, parts[3])
		if err1 != nil || err2 != nil {
			return "", "", Window{}, false
		}
		var err error
		if w, err = NewWindow(since, until); err != nil {
			return "", "", Window{}, false
		}
	}
	return parts[0], parts[1], w, true
}

// ErrWarehouse marks a warehouse that could not be opened: an unreachable
// server, a refused login, an unsupported DSN. Its text never holds the
// password.
var ErrWarehouse = errors.New("warehouse")

// LedgerSteps are one backend's parts of a unit's data transaction, all
// run inside that transaction: Fence writes the claim's fence into the
// unit's ledger row and returns the row as it was (ErrLeaseLost when it
// holds a newer fence of the same store), Others returns the committed rows
// of other stores (Store != u.Store, "" included) whose windows overlap the
// unit's, its own row left out, Run runs the job, Done records the claim's
// commit — under the claim's store and fingerprint — and, with takeOver,
// deletes the other stores' rows whose windows lie inside the unit's (the
// job rewrote them). Table names the ledger in messages.
type LedgerSteps struct {
	Fence  func() (LedgerEntry, error)
	Others func() ([]LedgerEntry, error)
	Run    func() (int64, error)
	Done   func(rows int64, takeOver bool) error
	Table  string
}

// RunLedgered is the exactly-once protocol of Warehouse.RunUnit, the same
// on every backend (docs/semantics.md): fence the ledger row first. When
// another store's commit is in the window — the unit's own row or any
// row overlapping it — nothing is replayed: a job that rewrites its window
// runs and takes the window over, any other fails with a LedgerConflict.
// Otherwise this claim's own commit (an acknowledgement lost) is
// replayed, and an earlier claim's commit the store never recorded
// (unrecorded says so) is replayed and passes to this claim — both only
// under the claim's definition; under another, the job that rewrites its
// window runs and any other fails with a LedgerConflict. Otherwise the job
// runs and its commit is recorded. Call it inside the transaction the
// steps use; an error rolls it back whole.
func RunLedgered(ctx context.Context, u LedgerUnit, steps LedgerSteps, unrecorded func(context.Context, LedgerEntry) (bool, error)) (UnitResult, error) {
	if u.Store == "" {
		return UnitResult{}, errors.New("a unit's ledger row needs its state store's identity")
	}
	prev, err := steps.Fence()
	if err != nil {
		return UnitResult{}, err
	}
	others, err := steps.Others()
	if err != nil {
		return UnitResult{}, err
	}
	if prev.DoneFence != 0 && prev.Store != u.Store {
		others = append([]LedgerEntry{prev}, others...)
	}
	run := func(takeOver bool) (UnitResult, error) {
		rows, err := steps.Run()
		if err != nil {
			return UnitResult{}, err
		}
		return UnitResult{Rows: rows}, steps.Done(rows, takeOver)
	}
	if len(others) > 0 {
		// Another store's commit is in the window: its fences and attempts
		// mean nothing here, so it is never replayed.
		if !u.Rewrites {
			return UnitResult{}, &LedgerConflict{Unit: u, Other: others[0], Table: steps.Table}
		}
		return run(true)
	}
	if prev.DoneFence != 0 {
		mine := prev.DoneFence == u.Fence
		if !mine {
			if mine, err = unrecorded(ctx, prev); err != nil {
				return UnitResult{}, err
			}
		}
		switch {
		case mine && prev.Fingerprint == u.Fingerprint && prev.DoneFence == u.Fence:
			// This claim's own commit, its acknowledgement lost.
			return UnitResult{Rows: prev.Rows, Replayed: true}, nil
		case mine && prev.Fingerprint == u.Fingerprint:
			// An earlier claim committed the data and the store never
			// recorded it: this claim records it instead of running.
			return UnitResult{Rows: prev.Rows, Replayed: true}, steps.Done(prev.Rows, false)
		case mine && !u.Rewrites:
			// Unrecorded data of another definition is in the window.
			return UnitResult{}, &LedgerConflict{Unit: u, Other: prev, Table: steps.Table}
		}
	}
	return run(false)
}

// LedgerConflict is a unit that may not write its window: the ledger
// shows the window's rows written by another state store (or by a
// bollhav before store identities), or committed by this store under
// another definition and never recorded, and the unit's job would add
// its rows beside them (an append, a sql model's statements). The unit
// fails, nothing written; the operator adopts or resets the window
// (docs/semantics.md, "Exactly once across two databases").
type LedgerConflict struct {
	Unit  LedgerUnit
	Other LedgerEntry
	// Table is the ledger, as the operator names it in SQL.
	Table string
}

func (c *LedgerConflict) Error() string {
	u, o := c.Unit, c.Other
	what := "the warehouse's ledger shows " + describeWindow(u.Model, u.Window) + " written by "
	switch {
	case o.Store == "":
		what += "a bollhav from before store identities (this store is " + u.Store + ")"
	case o.Store != u.Store:
		what += "another state store, " + o.Store + " (this store is " + u.Store + ")"
	default:
		what += "this store under another definition (fingerprint " + shortFingerprint(o.Fingerprint) + ", now " +
			shortFingerprint(u.Fingerprint) + "), a commit the store never recorded"
	}
	if o.DoneFence != 0 {
		what += ": " + strconv.FormatInt(o.Rows, 10) + " rows"
		if !o.DoneAt.IsZero() {
			what += " at " + FormatTime(o.DoneAt)
		}
	}
	mark := "bollhav mark " + u.Model
	if u.Env != "" {
		mark += " --env " + u.Env
	}
	if !u.Window.IsZero() {
		mark += " --since " + FormatTime(u.Window.Since) + " --until " + FormatTime(u.Window.Until)
	}
	forget := "DELETE FROM " + c.Table + " WHERE unit_key = '" + strings.ReplaceAll(o.Key, "'", "''") + "'"
	return what + "; this model's write would add its rows beside them, so it did not run. " +
		"To keep the rows there: " + forget + ", then " + mark + " --status applied. " +
		"To load the window again: also delete the window's rows from the target, then " + mark + " --status pending, and run"
}

// describeWindow is "model [since, until)", or the model alone when it is
// timeless.
func describeWindow(model string, w Window) string {
	if w.IsZero() {
		return model
	}
	return model + " " + w.String()
}

// shortFingerprint is a fingerprint's first 12 characters ("unknown" for
// none).
func shortFingerprint(f string) string {
	switch {
	case f == "":
		return "unknown"
	case len(f) > 12:
		return f[:12]
	}
	return f
}
