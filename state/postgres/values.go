package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// querier is what the pool and a transaction have in common, so read helpers
// work inside and outside a write.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Conversions between Go values and columns. The zero time.Time is NULL, so
// a timeless model's Start, a run without a window and the existence row's
// bounds come back zero; every time comes back in UTC.

func nullTime(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: t, Valid: true}
}

func nullTimePtr(t *time.Time) pgtype.Timestamptz {
	if t == nil {
		return pgtype.Timestamptz{}
	}
	return nullTime(*t)
}

func timeOf(ts pgtype.Timestamptz) time.Time {
	if !ts.Valid || ts.InfinityModifier != pgtype.Finite {
		return time.Time{}
	}
	return ts.Time.UTC()
}

func timePtrOf(ts pgtype.Timestamptz) *time.Time {
	if !ts.Valid {
		return nil
	}
	t := timeOf(ts)
	return &t
}

// windowBounds are w's bounds as parameters: NULL for the zero Window, the
// existence row's.
func windowBounds(w state.Window) (since, until pgtype.Timestamptz) {
	if w.IsZero() {
		return pgtype.Timestamptz{}, pgtype.Timestamptz{}
	}
	return nullTime(w.Since), nullTime(w.Until)
}

func windowOf(since, until pgtype.Timestamptz) state.Window {
	return state.Window{Since: timeOf(since), Until: timeOf(until)}
}

// unitColumns are a unit's columns in scanUnit's order, from alias u.
const unitColumns = `u.id, u.env, u.model, u.since, u.until, u.status, u.applied_at, u.blocked_reason,
	u.error, u.attempts, u.run_id, u.lease_owner, u.lease_until, u.fence, u.rows_written, u.updated_at, u.not_before, u.fingerprint`

// unitScanner decodes unit rows into destinations it reuses, and keeps the
// env and model strings of the previous row, so streaming a million units of
// one model allocates little beyond what a Unit must own. Text arrives as
// pgtype.DriverBytes, which point into pgx's read buffer and are copied only
// when a row's string differs from what the scanner already holds.
type unitScanner struct {
	dest                                   []any
	u                                      state.Unit
	since, until, applied, leased, updated pgtype.Timestamptz
	notBefore                              pgtype.Timestamptz
	rows                                   pgtype.Int8
	env, model, status, reason, errText    pgtype.DriverBytes
	owner, fingerprint                     pgtype.DriverBytes
}

func newUnitScanner() *unitScanner {
	sc := &unitScanner{}
	sc.dest = []any{&sc.u.ID, &sc.env, &sc.model, &sc.since, &sc.until, &sc.status, &sc.applied, &sc.reason,
		&sc.errText, &sc.u.Attempts, &sc.u.RunID, &sc.owner, &sc.leased, &sc.u.Fence, &sc.rows, &sc.updated, &sc.notBefore, &sc.fingerprint}
	return sc
}

// scan decodes the current row of rows; use it only with pgx.Rows, whose
// buffer stays valid until the next call to Next.
func (sc *unitScanner) scan(rows pgx.CollectableRow) (state.Unit, error) {
	if err := rows.Scan(sc.dest...); err != nil {
		return state.Unit{}, err
	}
	u := sc.u
	u.Env = reuse(sc.env, sc.u.Env)
	u.Model = reuse(sc.model, sc.u.Model)
	sc.u.Env, sc.u.Model = u.Env, u.Model
	u.Status = statusOf(sc.status)
	u.BlockedReason, u.Error, u.LeaseOwner = string(sc.reason), string(sc.errText), string(sc.owner)
	u.Fingerprint = string(sc.fingerprint)
	u.Window = windowOf(sc.since, sc.until)
	u.AppliedAt, u.LeaseUntil, u.NotBefore = timePtrOf(sc.applied), timePtrOf(sc.leased), timePtrOf(sc.notBefore)
	u.UpdatedAt = timeOf(sc.updated)
	u.RowsWritten = nil
	if sc.rows.Valid {
		n := sc.rows.Int64
		u.RowsWritten = &n
	}
	return u, nil
}

// reuse returns prev when b spells it, without allocating, and a copy of b
// otherwise.
func reuse(b []byte, prev string) string {
	if string(b) == prev {
		return prev
	}
	return string(b)
}

func statusOf(b []byte) state.UnitStatus {
	for _, st := range state.Statuses {
		if string(b) == string(st) {
			return st
		}
	}
	return state.UnitStatus(b)
}

func scanUnit(row pgx.CollectableRow) (state.Unit, error) { return newUnitScanner().scan(row) }

// statusStrings is statuses as a text[] parameter.
func statusStrings(ss []state.UnitStatus) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
