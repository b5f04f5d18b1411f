package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/bollhav/bollhav/state"
)

// statusGroup is what a bulk operation touched of one previous status: how
// many units and their hull, which becomes one row of the change feed.
type statusGroup struct {
	status state.UnitStatus
	count  int
	hull   state.Window
}

// groupsWhere counts the units matching where by status.
func groupsWhere(ctx context.Context, tx *sql.Tx, where string, args []any) ([]statusGroup, error) {
	rows, err := tx.QueryContext(ctx, `SELECT "status", count(*), min("since"), max("until") FROM "units" WHERE `+where+` GROUP BY "status" ORDER BY "status"`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []statusGroup
	for rows.Next() {
		var g statusGroup
		var status string
		var since, until int64
		if err := rows.Scan(&status, &g.count, &since, &until); err != nil {
			return nil, err
		}
		g.status, g.hull = state.UnitStatus(status), window(since, until)
		out = append(out, g)
	}
	return out, rows.Err()
}

// SetStatus implements state.Store.
func (s *Store) SetStatus(ctx context.Context, req state.StatusChange) (int, error) {
	if err := req.Check(); err != nil {
		return 0, err
	}
	var from []any
	for _, st := range req.From {
		// A unit already in the status does not move, unless a new reason
		// rewrites a blocked unit's (blocked to blocked).
		if (st != req.To || req.Reason != "") && !slices.Contains(from, any(string(st))) {
			from = append(from, string(st))
		}
	}
	moved := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		moved = 0
		m, err := lookup(ctx, tx, req.Env, req.Model)
		if err != nil || len(from) == 0 {
			return err
		}
		where, args := `"model_id" = ? AND "status" IN (`+placeholders(len(from))+`)`, append([]any{m.id}, from...)
		if !req.Window.IsZero() {
			cond, a := inside(req.Window)
			where, args = where+" AND "+cond, append(args, a...)
		}
		groups, err := groupsWhere(ctx, tx, where, args)
		if err != nil {
			return fmt.Errorf("sqlite: set status of %s: %w", req.Model, err)
		}
		if len(groups) == 0 {
			return nil
		}
		if err := keepUnloggedErrors(ctx, tx, where, args); err != nil {
			return err
		}
		counts := appliedDeltas{}
		if err := counts.leaving(ctx, tx, m.id, where, args); err != nil {
			return fmt.Errorf("sqlite: set status of %s: %w", req.Model, err)
		}
		var appliedAt sql.NullInt64
		if req.To == state.Applied {
			at := req.AppliedAt
			if at.IsZero() {
				at = req.Now
			}
			appliedAt = nullMicrosOf(at)
		}
		_, err = tx.ExecContext(ctx, `UPDATE "units" SET "status" = ?, "applied_at" = ?, "blocked_reason" = ?, "error" = '',
				"lease_owner" = '', "lease_until" = NULL, "run_id" = ?, "updated_at" = ?, "not_before" = NULL,
				"fingerprint" = NULL
			WHERE `+where, append([]any{string(req.To), appliedAt, req.Reason, req.RunID, micros(req.Now)}, args...)...)
		if err != nil {
			return fmt.Errorf("sqlite: set status of %s: %w", req.Model, err)
		}
		var touched state.Window // applied units gained or lost here
		moves := statusDeltas{}
		for _, g := range groups {
			moved += g.count
			moves.move(m.id, g.status, req.To, g.count)
			if req.To == state.Applied {
				counts.add(m.id, "", g.count) // a status change records no fingerprint
			}
			if req.To == state.Applied || g.status == state.Applied {
				touched = state.Hull(touched, g.hull)
			}
			err := recordChange(ctx, tx, state.Change{Env: req.Env, Model: req.Model, Window: g.hull, From: g.status, To: req.To, Count: g.count, At: req.Now, RunID: req.RunID})
			if err != nil {
				return err
			}
		}
		if err := counts.apply(ctx, tx); err != nil {
			return err
		}
		if err := moves.apply(ctx, tx); err != nil {
			return err
		}
		return refreshCoverage(ctx, tx, m, touched)
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// Delete implements state.Store.
func (s *Store) Delete(ctx context.Context, req state.RemoveRequest) (int, error) {
	env, model, w, runID, now := req.Env, req.Model, req.Window, req.RunID, req.Now
	if err := state.CheckWindow("delete units of "+model, w); err != nil {
		return 0, err
	}
	deleted := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		m, err := lookup(ctx, tx, env, model)
		if err != nil {
			return err
		}
		where, args := `"model_id" = ?`, []any{m.id}
		if !w.IsZero() {
			cond, a := inside(w)
			where, args = where+" AND "+cond, append(args, a...)
		}
		deleted, err = deleteWhere(ctx, tx, m, where, args, runID, now)
		if err != nil {
			return err
		}
		if w.IsZero() {
			return forgetShape(ctx, tx, m)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

// deleteWhere deletes m's units matching where, records one change per
// previous status and rebuilds coverage where applied units went.
func deleteWhere(ctx context.Context, tx *sql.Tx, m modelRef, where string, args []any, runID int64, now time.Time) (int, error) {
	groups, err := groupsWhere(ctx, tx, where, args)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete units of %s: %w", m.name, err)
	}
	if len(groups) == 0 {
		return 0, nil
	}
	if err := refuseRunning(m.name, groups); err != nil {
		return 0, err
	}
	counts := appliedDeltas{}
	if err := counts.leaving(ctx, tx, m.id, where, args); err != nil {
		return 0, fmt.Errorf("sqlite: delete units of %s: %w", m.name, err)
	}
	if err := counts.apply(ctx, tx); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM "units" WHERE `+where, args...); err != nil {
		return 0, fmt.Errorf("sqlite: delete units of %s: %w", m.name, err)
	}
	n := 0
	moves := statusDeltas{}
	for _, g := range groups {
		moves.move(m.id, g.status, "", g.count)
	}
	if err := moves.apply(ctx, tx); err != nil {
		return 0, err
	}
	for _, g := range groups {
		n += g.count
		if err := recordChange(ctx, tx, state.Change{Env: m.env, Model: m.name, Window: g.hull, From: g.status, Count: g.count, At: now, RunID: runID}); err != nil {
			return 0, err
		}
		if g.status == state.Applied {
			if err := refreshCoverage(ctx, tx, m, g.hull); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// forgetShape resets what the store remembers about a model's units once it
// has none (torch), so a finer re-chunk gets tight overlap seeks again.
func forgetShape(ctx context.Context, tx *sql.Tx, m modelRef) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM "coverage" WHERE "model_id" = ?`, m.id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE "models" SET "max_unit" = 0 WHERE "id" = ?`, m.id)
	return err
}

// Uncover implements state.Store.
func (s *Store) Uncover(ctx context.Context, req state.RemoveRequest) (int, error) {
	env, model, w, runID, now := req.Env, req.Model, req.Window, req.RunID, req.Now
	if w.IsZero() {
		return s.Delete(ctx, req)
	}
	if err := state.CheckWindow("uncover "+model, w); err != nil {
		return 0, err
	}
	changed := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		changed = 0
		m, err := lookup(ctx, tx, env, model)
		if err != nil {
			return err
		}
		type cut struct {
			id           int64
			since, until time.Time
			status       state.UnitStatus
			fingerprint  string
		}
		cond, args := overlap(w, m.maxUnit)
		rows, err := tx.QueryContext(ctx, `SELECT "id", "since", "until", "status", coalesce("fingerprint", '') FROM "units" WHERE "model_id" = ? AND `+cond+` ORDER BY "since"`, append([]any{m.id}, args...)...)
		if err != nil {
			return fmt.Errorf("sqlite: uncover %s: %w", model, err)
		}
		var cuts []cut
		for rows.Next() {
			var c cut
			var since, until int64
			var status string
			if err := rows.Scan(&c.id, &since, &until, &status, &c.fingerprint); err != nil {
				rows.Close()
				return err
			}
			c.since, c.until, c.status = fromMicros(since), fromMicros(until), state.UnitStatus(status)
			cuts = append(cuts, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		running := statusGroup{status: state.Running}
		for _, c := range cuts {
			if c.status != state.Running {
				continue
			}
			if running.count == 0 {
				running.hull = state.Window{Since: c.since, Until: c.until}
			}
			running.count++
			running.hull = state.Window{Since: state.Earlier(running.hull.Since, c.since), Until: state.Later(running.hull.Until, c.until)}
		}
		if err := refuseRunning(model, []statusGroup{running}); err != nil {
			return err
		}
		groups := map[state.UnitStatus]*statusGroup{}
		var order []state.UnitStatus
		counts := appliedDeltas{}
		moves := statusDeltas{}
		for _, c := range cuts {
			u := state.Window{Since: c.since, Until: c.until}
			if err := uncoverUnit(ctx, tx, c.id, u, w, now); err != nil {
				if isUniqueViolation(err) {
					return state.UncoverCollides(model, w)
				}
				return fmt.Errorf("sqlite: uncover %s: %w", model, err)
			}
			switch {
			case w.Covers(u): // deleted
				moves.move(m.id, c.status, "", 1)
			case u.Since.Before(w.Since) && u.Until.After(w.Until): // split in two
				moves.move(m.id, "", c.status, 1)
			}
			if c.status == state.Applied {
				switch {
				case w.Covers(u): // deleted
					counts.add(m.id, c.fingerprint, -1)
				case u.Since.Before(w.Since) && u.Until.After(w.Until): // split in two
					counts.add(m.id, c.fingerprint, 1)
				}
			}
			removed := state.Window{Since: state.Later(c.since, w.Since), Until: state.Earlier(c.until, w.Until)}
			g := groups[c.status]
			if g == nil {
				g = &statusGroup{status: c.status}
				groups[c.status] = g
				order = append(order, c.status)
			}
			g.count++
			g.hull = state.Hull(g.hull, removed)
			changed++
		}
		for _, st := range order {
			g := groups[st]
			if err := recordChange(ctx, tx, state.Change{Env: env, Model: model, Window: g.hull, From: st, Count: g.count, At: now, RunID: runID}); err != nil {
				return err
			}
		}
		if err := counts.apply(ctx, tx); err != nil {
			return err
		}
		if err := moves.apply(ctx, tx); err != nil {
			return err
		}
		if g := groups[state.Applied]; g != nil {
			return refreshCoverage(ctx, tx, m, g.hull)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return changed, nil
}

// uncoverUnit removes w from one unit u: deletes it when w covers it, trims
// it when w covers one end, and splits it in two when w lies strictly inside.
// Should a trimmed or split part coincide with another unit's window (only
// overlapping units of a flexible model can make it so), the unique index
// refuses it and the whole uncover rolls back, as in PostgreSQL: silently
// replacing the other unit would lose its status without a change record.
func uncoverUnit(ctx context.Context, tx *sql.Tx, id int64, u, w state.Window, now time.Time) error {
	var err error
	switch {
	case w.Covers(u):
		_, err = tx.ExecContext(ctx, `DELETE FROM "units" WHERE "id" = ?`, id)
	case u.Since.Before(w.Since) && u.Until.After(w.Until):
		_, err = tx.ExecContext(ctx, `INSERT INTO "units" ("model_id", "since", "until", "status", "applied_at", "blocked_reason", "error",
				"attempts", "run_id", "lease_owner", "lease_until", "fence", "rows_written", "updated_at", "fingerprint")
			SELECT "model_id", ?, "until", "status", "applied_at", "blocked_reason", "error",
				"attempts", "run_id", "lease_owner", "lease_until", "fence", "rows_written", ?, "fingerprint"
			FROM "units" WHERE "id" = ?`, micros(w.Until), micros(now), id)
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE "units" SET "until" = ?, "updated_at" = ? WHERE "id" = ?`, micros(w.Since), micros(now), id)
		}
	case u.Since.Before(w.Since):
		_, err = tx.ExecContext(ctx, `UPDATE "units" SET "until" = ?, "updated_at" = ? WHERE "id" = ?`, micros(w.Since), micros(now), id)
	default:
		_, err = tx.ExecContext(ctx, `UPDATE "units" SET "since" = ?, "updated_at" = ? WHERE "id" = ?`, micros(w.Until), micros(now), id)
	}
	return err
}

// refuseRunning fails a removal whose units include running ones.
func refuseRunning(model string, groups []statusGroup) error {
	for _, g := range groups {
		if g.status == state.Running && g.count > 0 {
			return state.UnitsRunning(model, g.count, g.hull)
		}
	}
	return nil
}
