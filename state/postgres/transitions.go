package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// The bulk transitions: one statement each however many units they touch,
// reporting back per from-status how many moved and their hull, which is
// what the change feed records.

// SetStatus moves the model's units inside w whose status is one of From to
// To, clearing lease, error and blocked reason.
func (s *Store) SetStatus(ctx context.Context, req state.StatusChange) (int, error) {
	if err := req.Check(); err != nil {
		return 0, err
	}
	var applied pgtype.Timestamptz
	if req.To == state.Applied {
		applied = nullTime(req.AppliedAt)
		if !applied.Valid {
			applied = nullTime(req.Now)
		}
	}
	// $1…$5 are the new values; the filter's parameters follow.
	where := filter{args: []any{string(req.To), applied, req.RunID, req.Now, req.Reason}}
	where.add("env = $%d", req.Env)
	where.add("model = $%d", req.Model)
	if req.Reason == "" {
		// A unit already in the status does not move; a new reason
		// rewrites a blocked unit's (blocked to blocked).
		where.add("status <> $%d", string(req.To))
	}
	where.add("status = ANY($%d)", statusStrings(req.From))
	if !req.Window.IsZero() {
		where.addInside("units", req.Window)
	}

	var moved int
	err := s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		if _, err := s.modelFlexible(ctx, tx, req.Env, req.Model); err != nil {
			return nil, err
		}
		// kept logs the errors the history does not hold yet (a failure
		// from before it existed), which the update clears: the trim makes
		// room for them, as the statement's snapshot does not hold them.
		rows, err := tx.Query(ctx, s.sql(`
			WITH target AS (
			    SELECT id, status, fingerprint, attempts, error, updated_at, run_id,
			        error <> '' AND NOT EXISTS (SELECT 1 FROM {schema}.attempts a
			            WHERE a.unit_id = units.id AND a.number = units.attempts) AS unlogged
			    FROM {schema}.units WHERE `+where.sql()+`
			    FOR UPDATE
			), kept AS (
			    INSERT INTO {schema}.attempts (unit_id, number, try, error, at, run_id)
			    SELECT id, attempts, 0, error, updated_at, nullif(run_id, 0) FROM target WHERE unlogged
			), trimmed AS (
			    DELETE FROM {schema}.attempts a USING target t WHERE t.unlogged AND `+keepNewestAttempts("t", "id")+`
			), moved AS (
			    UPDATE {schema}.units u
			    SET status = $1, applied_at = $2, run_id = $3, updated_at = $4,
			        error = '', blocked_reason = $5, lease_owner = '', lease_until = NULL, not_before = NULL,
			        fingerprint = NULL
			    FROM target t WHERE u.id = t.id
			    RETURNING t.status AS from_status, t.fingerprint, u.since, u.until
			)
			SELECT from_status, coalesce(fingerprint, ''), count(*), min(since), max(until), 0
			FROM moved GROUP BY 1, 2`), where.args...)
		if err != nil {
			return nil, err
		}
		chs, n, err := collectGroups(rows, req.Env, req.Model, req.To, req.Now, req.RunID, false)
		moved = n
		return chs, err
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// Delete removes the model's units inside w (all when w is zero): torch on a
// fixed grid.
func (s *Store) Delete(ctx context.Context, req state.RemoveRequest) (int, error) {
	env, model, w, runID, now := req.Env, req.Model, req.Window, req.RunID, req.Now
	if err := state.CheckWindow("delete units of "+model, w); err != nil {
		return 0, err
	}
	var deleted int
	err := s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		if _, err := s.modelFlexible(ctx, tx, env, model); err != nil {
			return nil, err
		}
		chs, n, err := s.deleteInside(ctx, tx, env, model, w, runID, now)
		deleted = n
		return chs, err
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

func (s *Store) deleteInside(ctx context.Context, tx pgx.Tx, env, model string, w state.Window, runID int64, now time.Time) ([]change, int, error) {
	var where filter
	where.add("env = $%d", env)
	where.add("model = $%d", model)
	if !w.IsZero() {
		where.addInside("units", w)
	}
	rows, err := tx.Query(ctx, s.sql(`
		WITH gone AS (
		    DELETE FROM {schema}.units WHERE `+where.sql()+`
		    RETURNING id, status, since, until, fingerprint
		), history AS (
		    DELETE FROM {schema}.attempts a USING gone g WHERE a.unit_id = g.id
		)
		SELECT status, coalesce(fingerprint, ''), count(*), min(since), max(until), 0 FROM gone GROUP BY 1, 2`), where.args...)
	if err != nil {
		return nil, 0, err
	}
	chs, n, err := collectGroups(rows, env, model, "", now, runID, false)
	if err == nil {
		// The DELETE re-reads a row a concurrent claim committed first,
		// so a unit claimed after the caller planned shows up here as
		// running; returning the error rolls the whole removal back.
		err = refuseRunning(model, chs)
	}
	return chs, n, err
}

// refuseRunning fails a removal whose units include running ones.
func refuseRunning(model string, chs []change) error {
	for _, c := range chs {
		if c.from == state.Running {
			return state.UnitsRunning(model, c.count, c.window)
		}
	}
	return nil
}

// Uncover subtracts w from the model's coverage: units inside w are deleted,
// units crossing an edge of w are trimmed to their part outside it, and a
// unit spanning all of w is split in two, both parts keeping the unit's
// status, applied_at and attempts. The multirange difference span - w gives
// each crossing unit's remaining parts. The change feed records the part
// removed: deleted units whole, crossing units clipped to w.
func (s *Store) Uncover(ctx context.Context, req state.RemoveRequest) (int, error) {
	env, model, w, runID, now := req.Env, req.Model, req.Window, req.RunID, req.Now
	if err := state.CheckWindow("uncover "+model, w); err != nil {
		return 0, err
	}
	var touched int
	err := s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		if _, err := s.modelFlexible(ctx, tx, env, model); err != nil {
			return nil, err
		}
		if !w.IsZero() {
			// Running units inside w or crossing its edges: Uncover
			// would remove or cut every one of them.
			var running int
			var since, until pgtype.Timestamptz
			if err := tx.QueryRow(ctx, s.sql(`SELECT count(*), min(since), max(until) FROM {schema}.units
				WHERE env = $1 AND model = $2 AND since < $4 AND until > $3 AND status = 'running'`),
				env, model, w.Since, w.Until).Scan(&running, &since, &until); err != nil {
				return nil, err
			}
			if running > 0 {
				return nil, state.UnitsRunning(model, running, state.Window{Since: since.Time.UTC(), Until: until.Time.UTC()})
			}
		}
		deleted, n, err := s.deleteInside(ctx, tx, env, model, w, runID, now)
		if err != nil || w.IsZero() {
			touched = n
			return deleted, err
		}
		rows, err := tx.Query(ctx, s.sql(`
			WITH crossing AS (
			    SELECT id, status, since, until, fingerprint,
			           tstzmultirange(span) - tstzmultirange(tstzrange($3, $4, '[)')) AS rest
			    FROM {schema}.units
			    WHERE env = $1 AND model = $2 AND since < $4 AND until > $3
			      AND since >= $3 - (SELECT longest_unit FROM {schema}.models WHERE env = $1 AND name = $2) * interval '1 microsecond'
			    FOR UPDATE
			), parts AS (
			    SELECT c.id, p.part, row_number() OVER (PARTITION BY c.id ORDER BY lower(p.part)) AS n
			    FROM crossing c, unnest(c.rest) AS p (part)
			), trimmed AS (
			    UPDATE {schema}.units u SET since = lower(p.part), until = upper(p.part), updated_at = $5
			    FROM parts p WHERE u.id = p.id AND p.n = 1
			), split AS (
			    INSERT INTO {schema}.units (env, model, flexible, since, until, status, applied_at, blocked_reason,
			                                error, attempts, run_id, lease_owner, lease_until, fence, rows_written, updated_at, fingerprint)
			    SELECT u.env, u.model, u.flexible, lower(p.part), upper(p.part), u.status, u.applied_at, u.blocked_reason,
			           u.error, u.attempts, u.run_id, u.lease_owner, u.lease_until, u.fence, u.rows_written, $5, u.fingerprint
			    FROM parts p JOIN {schema}.units u ON u.id = p.id
			    WHERE p.n = 2
			)
			SELECT status, coalesce(fingerprint, ''), count(*), min(greatest(since, $3)), max(least(until, $4)),
			       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM parts p WHERE p.id = crossing.id AND p.n = 2))
			FROM crossing GROUP BY 1, 2`),
			env, model, w.Since, w.Until, now)
		if err != nil {
			return nil, err
		}
		cut, m, err := collectGroups(rows, env, model, "", now, runID, true)
		if err == nil {
			err = refuseRunning(model, cut)
		}
		touched = n + m
		return mergeChanges(deleted, cut), err
	})
	if pgCode(err) == codeUniqueViolation {
		// A trimmed or split part has another unit's window (flexible
		// units overlap): the statement rolled back, nothing changed.
		return 0, state.UncoverCollides(model, w)
	}
	if err != nil {
		return 0, err
	}
	return touched, nil
}

// collectGroups reads (from status, fingerprint, count, min since, max
// until, split) rows into one change per from-status, sums the counts, and
// records each group's applied count deltas: units that left applied (or
// were deleted) leave their fingerprint's count, units moved to applied
// join the unknown one (a status change records no fingerprint). For
// crossing units, which Uncover trims or splits but keeps, only a split
// adds: the second part of an applied unit is one applied unit more.
func collectGroups(rows pgx.Rows, env, model string, to state.UnitStatus, at time.Time, runID int64, crossing bool) ([]change, int, error) {
	var (
		chs       []change
		total     int
		from, fp  string
		n, splits int
		lo, hi    pgtype.Timestamptz
	)
	_, err := pgx.ForEachRow(rows, []any{&from, &fp, &n, &lo, &hi, &splits}, func() error {
		c := change{env: env, model: model, window: windowOf(lo, hi), from: state.UnitStatus(from), to: to, count: n, at: at, runID: runID}
		if crossing {
			// Trimmed units stay; a split one is one unit more.
			c.units = []statusDelta{{c.from, splits}}
		}
		switch {
		case crossing && c.from == state.Applied && splits > 0:
			c.applied = []appliedDelta{{fingerprint: fp, n: splits}}
		case crossing:
		case c.from == state.Applied:
			c.applied = []appliedDelta{{fingerprint: fp, n: -n}}
		case to == state.Applied:
			c.applied = []appliedDelta{{fingerprint: "", n: n}}
		}
		chs = mergeChanges(chs, []change{c})
		total += n
		return nil
	})
	return chs, total, err
}

// mergeChanges folds b into a: one change per from-status, counts added,
// windows hulled, status deltas made explicit (a merged count may mix units
// removed with units trimmed) and kept.
func mergeChanges(a, b []change) []change {
	for _, c := range b {
		merged := false
		for i := range a {
			if a[i].from == c.from {
				a[i].units = append(unitDeltas(a[i]), unitDeltas(c)...)
				a[i].count += c.count
				a[i].window = state.Hull(a[i].window, c.window)
				a[i].applied = append(a[i].applied, c.applied...)
				merged = true
				break
			}
		}
		if !merged {
			a = append(a, c)
		}
	}
	return a
}
