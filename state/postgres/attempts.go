package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

// The attempt history (migration 0004): one row per failed attempt of a
// unit, logged in the transaction that ends the attempt and trimmed there
// to the unit's newest state.MaxAttemptHistory. Delete and Uncover drop
// the history of the units they remove in the statement that removes them.

// keepNewestAttempts is a condition on attempts a, for the units of
// relation src (column srcID), that holds for the rows a new attempt
// pushes out of the history. It runs in the statement that inserts that
// attempt, whose snapshot does not hold it yet: keeping the newest
// MaxAttemptHistory-1 rows already there makes room for the new one. A unit
// with fewer has no row at the offset, the comparison is NULL, and nothing
// goes.
func keepNewestAttempts(src, srcID string) string {
	return `a.unit_id = ` + src + `.` + srcID + ` AND a.number < (
		SELECT b.number FROM {schema}.attempts b WHERE b.unit_id = ` + src + `.` + srcID + `
		ORDER BY b.number DESC OFFSET ` + strconv.Itoa(state.MaxAttemptHistory-2) + ` LIMIT 1)`
}

// failedAttempts collects the failed attempts a Complete or CompleteBatch
// round ended, for logAttempts.
type failedAttempts struct {
	ids, runIDs    []int64
	numbers, tries []int32
	errs           []string
	ats            []time.Time
}

func (f *failedAttempts) add(id int64, number int32, try int, msg string, at time.Time, runID int64) {
	f.ids, f.numbers, f.tries = append(f.ids, id), append(f.numbers, number), append(f.tries, int32(max(try, 1)))
	f.errs, f.ats, f.runIDs = append(f.errs, msg), append(f.ats, at), append(f.runIDs, runID)
}

// logAttempts records f (distinct units) and trims each unit's history, in
// one statement of tx.
func (s *Store) logAttempts(ctx context.Context, tx pgx.Tx, f *failedAttempts) error {
	if len(f.ids) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, s.sql(`
		WITH f AS (
		    SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[], $5::timestamptz[], $6::bigint[])
		        AS f (unit_id, number, try, error, at, run_id)
		), logged AS (
		    INSERT INTO {schema}.attempts (unit_id, number, try, error, at, run_id)
		    SELECT unit_id, number, try, error, at, nullif(run_id, 0) FROM f
		)
		DELETE FROM {schema}.attempts a USING f WHERE `+keepNewestAttempts("f", "unit_id")),
		f.ids, f.numbers, f.tries, f.errs, f.ats, f.runIDs)
	return err
}

// isFailedAttempt reports whether o ends an attempt that failed: a final
// failure or one sent back for a retry.
func isFailedAttempt(o state.Outcome) bool { return o.Status == state.Failed || o.Retry() }

// Attempts returns a unit's failed attempts, oldest first.
func (s *Store) Attempts(ctx context.Context, unitID int64) ([]state.Attempt, error) {
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT number, try, error, at, coalesce(run_id, 0) FROM {schema}.attempts
		WHERE unit_id = $1 ORDER BY number`), unitID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Attempt, error) {
		var a state.Attempt
		err := row.Scan(&a.Number, &a.Try, &a.Error, &a.At, &a.RunID)
		a.At = a.At.UTC()
		return a, err
	})
	if out == nil && err == nil {
		out = []state.Attempt{}
	}
	return out, err
}
