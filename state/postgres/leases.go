package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// Leases and fencing: a claim holds its unit while the unit is running under
// the claim's fence. Every call below checks the fence, so a worker whose
// lease expired and whose unit went to another worker can change nothing.

// Heartbeat extends a claim's lease while the unit is still running under
// the claim's fence.
func (s *Store) Heartbeat(ctx context.Context, c state.Claim, until time.Time) error {
	tag, err := s.pool.Exec(ctx, s.sql(`
		UPDATE {schema}.units SET lease_until = $3
		WHERE id = $1 AND status = 'running' AND fence = $2`), c.Unit.ID, c.Fence, until)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return state.LeaseLost(c)
	}
	return nil
}

// Complete records a claimed unit's outcome, only while the unit is running
// under the claim's fence. A repeat under the same fence of an outcome
// already recorded — a retry after a lost commit acknowledgement — changes
// nothing and succeeds.
func (s *Store) Complete(ctx context.Context, c state.Claim, o state.Outcome) error {
	v, err := columnsOf(c, o)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		return s.complete(ctx, tx, c, o, v)
	})
}

// columnsOf checks that o is an outcome a claim can end in and returns its
// values as the units table stores them.
func columnsOf(c state.Claim, o state.Outcome) (outcomeColumns, error) {
	v := outcomeColumns{attempt: 1}
	if err := state.CheckOutcome(c, o); err != nil {
		return v, err
	}
	switch {
	case o.Status == state.Applied:
		v.applied = nullTime(o.At)
		v.fingerprint = pgtype.Text{String: o.Fingerprint, Valid: o.Fingerprint != ""}
	case o.Status == state.Failed:
		v.errText = o.Error
	case o.Status == state.Blocked:
		v.reason = o.BlockedReason
	case o.Retry():
		v.errText, v.notBefore = o.Error, nullTime(o.NotBefore)
	case o.Status == state.Pending:
		// Released unrun, not an attempt; a wait keeps its reason and time.
		v.attempt, v.reason, v.notBefore = 0, o.BlockedReason, nullTime(o.NotBefore)
	}
	return v, nil
}

// outcomeColumns are an Outcome's values as the units table stores them.
type outcomeColumns struct {
	applied         pgtype.Timestamptz
	notBefore       pgtype.Timestamptz
	fingerprint     pgtype.Text
	errText, reason string
	attempt         int
}

// complete moves the claimed unit to its outcome inside tx, so a data job
// can record its unit in the transaction that wrote the data.
func (s *Store) complete(ctx context.Context, tx pgx.Tx, c state.Claim, o state.Outcome, v outcomeColumns) ([]change, error) {
	var (
		env, model   string
		since, until pgtype.Timestamptz
		runID        int64
		attempts     int32
	)
	err := tx.QueryRow(ctx, s.sql(`
		UPDATE {schema}.units
		SET status = $3, applied_at = $4, error = $5, blocked_reason = $6, rows_written = $7,
		    attempts = attempts + $8, lease_owner = '', lease_until = NULL, updated_at = $9, not_before = $10,
		    fingerprint = $11
		WHERE id = $1 AND status = 'running' AND fence = $2
		RETURNING env, model, since, until, run_id, attempts`),
		c.Unit.ID, c.Fence, string(o.Status), v.applied, v.errText, v.reason, o.RowsWritten, v.attempt, o.At, v.notBefore, v.fingerprint,
	).Scan(&env, &model, &since, &until, &runID, &attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, s.repeatedOutcome(ctx, tx, c, o)
	}
	if err != nil {
		return nil, err
	}
	if isFailedAttempt(o) {
		var f failedAttempts
		f.add(c.Unit.ID, attempts, o.Try, o.Error, o.At, runID)
		if err := s.logAttempts(ctx, tx, &f); err != nil {
			return nil, err
		}
	}
	return []change{{env: env, model: model, window: windowOf(since, until), from: state.Running, to: o.Status, count: 1, at: o.At, runID: runID,
		applied: appliedBy(o), appliedAt: appliedAtOf(o)}}, nil
}

// appliedBy is an outcome's applied count delta: one unit under its
// fingerprint when it applies the unit, none otherwise.
func appliedBy(o state.Outcome) []appliedDelta {
	if o.Status != state.Applied {
		return nil
	}
	return []appliedDelta{{fingerprint: o.Fingerprint, n: 1}}
}

// repeatedOutcome accepts a Complete that found its unit no longer running
// when the unit still carries the claim's fence and already has the
// outcome's status: the same worker recording the same result again.
func (s *Store) repeatedOutcome(ctx context.Context, tx pgx.Tx, c state.Claim, o state.Outcome) error {
	var (
		status string
		fence  int64
	)
	err := tx.QueryRow(ctx, s.sql(`SELECT status, fence FROM {schema}.units WHERE id = $1`), c.Unit.ID).Scan(&status, &fence)
	if err == nil && fence == c.Fence && status == string(o.Status) {
		return nil
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return state.LeaseLost(c)
}

// ReleaseExpired returns every running unit whose lease ended before now to
// pending with one more attempt, in every environment, and records one change
// per model (its RunID the newest run among the released units). A partial
// index holds only running units' lease ends, so this is cheap to call often.
func (s *Store) ReleaseExpired(ctx context.Context, now time.Time) (int, error) {
	var released int
	err := s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		// Each expired lease is a failed attempt in its unit's history,
		// named after the lease owner the release clears.
		prefix, noOwner, suffix := state.LeaseExpiredParts()
		rows, err := tx.Query(ctx, s.sql(`
			WITH expired AS (
			    SELECT id, lease_owner FROM {schema}.units
			    WHERE status = 'running' AND lease_until < $1
			    FOR UPDATE
			), released AS (
			    UPDATE {schema}.units u
			    SET status = 'pending', lease_owner = '', lease_until = NULL, attempts = u.attempts + 1, updated_at = $1
			    FROM expired e
			    WHERE u.id = e.id AND u.status = 'running'
			    RETURNING u.id, u.env, u.model, u.run_id, u.since, u.until, u.attempts, e.lease_owner
			), logged AS (
			    INSERT INTO {schema}.attempts (unit_id, number, try, error, at, run_id)
			    SELECT id, attempts, 0, $2 || coalesce(nullif(lease_owner, ''), $3) || $4, $1, nullif(run_id, 0) FROM released
			), trimmed AS (
			    DELETE FROM {schema}.attempts a USING released r WHERE `+keepNewestAttempts("r", "id")+`
			)
			SELECT env, model, max(run_id), count(*), min(since), max(until) FROM released
			GROUP BY env, model`), now, prefix, noOwner, suffix)
		if err != nil {
			return nil, err
		}
		var (
			chs        []change
			env, model string
			runID      int64
			n          int
			lo, hi     pgtype.Timestamptz
		)
		_, err = pgx.ForEachRow(rows, []any{&env, &model, &runID, &n, &lo, &hi}, func() error {
			chs = append(chs, change{env: env, model: model, window: windowOf(lo, hi), from: state.Running, to: state.Pending, count: n, at: now, runID: runID})
			released += n
			return nil
		})
		return chs, err
	})
	if err != nil {
		return 0, err
	}
	return released, nil
}
