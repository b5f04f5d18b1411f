package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/bollhav/bollhav/state"
)

// The attempt history (migration 0004): one row per failed attempt of a
// unit, logged in the transaction that ends the attempt and trimmed there
// to the unit's newest state.MaxAttemptHistory. Deleting a unit deletes its
// rows (ON DELETE CASCADE).

// trimAttempts keeps the newest MaxAttemptHistory rows of the units that
// ids selects (a subquery, with its args) and drops the older ones. A unit
// with fewer has no row at the offset, the comparison is NULL, and nothing
// goes.
var trimAttempts = `DELETE FROM "attempts" WHERE "unit_id" IN (%s) AND "number" < (
	SELECT "b"."number" FROM "attempts" "b" WHERE "b"."unit_id" = "attempts"."unit_id"
	ORDER BY "b"."number" DESC LIMIT 1 OFFSET ` + strconv.Itoa(state.MaxAttemptHistory-1) + `)`

// logAttempt records the failed attempt that just ended unit id — its
// attempts column already counts it — and trims the unit's history.
func logAttempt(ctx context.Context, tx *sql.Tx, id int64, try int, msg string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO "attempts" ("unit_id", "number", "try", "error", "at", "run_id")
		SELECT "id", "attempts", ?, ?, ?, nullif("run_id", 0) FROM "units" WHERE "id" = ?`,
		max(try, 1), msg, micros(at), id)
	if err == nil {
		_, err = tx.ExecContext(ctx, fmt.Sprintf(trimAttempts, "?"), id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: log the failed attempt: %w", err)
	}
	return nil
}

// keepUnloggedErrors logs, before SetStatus clears them, the errors of the
// units where (with args) selects that their history does not hold yet: a
// failure from before the history existed (migration 0004) has its error on
// the unit alone, and an operator's mark or a plan's reset would otherwise
// lose it. A failure the history logged (the row numbered the unit's
// attempts) is not logged twice. Try 0: which try of a budget it was is
// not known.
func keepUnloggedErrors(ctx context.Context, tx *sql.Tx, where string, args []any) error {
	unlogged := `SELECT "id" FROM "units" WHERE ` + where + ` AND "error" <> '' AND NOT EXISTS (
		SELECT 1 FROM "attempts" "a" WHERE "a"."unit_id" = "units"."id" AND "a"."number" = "units"."attempts")`
	res, err := tx.ExecContext(ctx, `INSERT INTO "attempts" ("unit_id", "number", "try", "error", "at", "run_id")
		SELECT "id", "attempts", 0, "error", "updated_at", nullif("run_id", 0) FROM "units" WHERE "id" IN (`+unlogged+`)`, args...)
	if err != nil {
		return fmt.Errorf("sqlite: keep the errors of the units moved: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	logged := `SELECT "id" FROM "units" WHERE ` + where + ` AND "error" <> ''`
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(trimAttempts, logged), args...); err != nil {
		return fmt.Errorf("sqlite: keep the errors of the units moved: %w", err)
	}
	return nil
}

// logExpired records, before ReleaseExpired moves them, an attempt for
// every running unit whose lease ended before now: try 0, numbered as the
// attempt the release counts.
func logExpired(ctx context.Context, tx *sql.Tx, now time.Time) error {
	expired := `SELECT "id" FROM "units" WHERE "status" = 'running' AND "lease_until" < ?`
	_, err := tx.ExecContext(ctx, `INSERT INTO "attempts" ("unit_id", "number", "try", "error", "at", "run_id")
		SELECT "id", "attempts" + 1, 0, ? || CASE "lease_owner" WHEN '' THEN ? ELSE "lease_owner" END || ?, ?, nullif("run_id", 0)
		FROM "units" WHERE "status" = 'running' AND "lease_until" < ?`,
		leaseExpiredPrefix, leaseExpiredNoOwner, leaseExpiredSuffix, micros(now), micros(now))
	if err == nil {
		_, err = tx.ExecContext(ctx, fmt.Sprintf(trimAttempts, expired), micros(now))
	}
	if err != nil {
		return fmt.Errorf("sqlite: log the expired leases: %w", err)
	}
	return nil
}

// The pieces of state.LeaseExpiredError around the owner, so the SQL that
// logs many expired leases at once writes the same words.
var leaseExpiredPrefix, leaseExpiredNoOwner, leaseExpiredSuffix = state.LeaseExpiredParts()

// Attempts implements state.Store.
func (s *Store) Attempts(ctx context.Context, unitID int64) ([]state.Attempt, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT "number", "try", "error", "at", coalesce("run_id", 0) FROM "attempts"
		WHERE "unit_id" = ? ORDER BY "number"`, unitID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: attempts: %w", err)
	}
	defer rows.Close()
	out := []state.Attempt{}
	for rows.Next() {
		var a state.Attempt
		var at int64
		if err := rows.Scan(&a.Number, &a.Try, &a.Error, &at, &a.RunID); err != nil {
			return nil, fmt.Errorf("sqlite: attempts: %w", err)
		}
		a.At = fromMicros(at)
		out = append(out, a)
	}
	return out, rows.Err()
}
