package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/state"
)

// claimPerModelMax is the most models a claim may name for their
// registrations to be looked up one by one; past it they are read in
// chunks (claimModelsNamed).
const claimPerModelMax = 8

// claimBatch is how many pending candidates Claim reads at a time; a
// flexible model may skip many before it finds ones that do not overlap.
const claimBatch = 256

// Claim implements state.Store. SQLite has one writer, so the whole claim —
// reading candidates, checking a flexible model's running units, moving the
// chosen ones to running — is one BEGIN IMMEDIATE transaction that no other
// claimer, in this process or another, can interleave with.
func (s *Store) Claim(ctx context.Context, req state.ClaimRequest) ([]state.Claim, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	var out []state.Claim
	claimIn := func(tx *sql.Tx, counts statusDeltas) error {
		out = out[:0]
		models, err := claimModels(ctx, tx, req)
		if err != nil || len(models) == 0 {
			return err
		}
		byID := make(map[int64]modelRef, len(models))
		var ids []any
		var maxUnit int64
		for _, m := range models {
			byID[m.id] = m
			ids = append(ids, m.id)
			maxUnit = max(maxUnit, m.maxUnit)
		}
		where, args := `"status" = 'pending' AND "model_id" IN (`+placeholders(len(ids))+`)`, ids
		// A failed unit waiting for its retry is not claimable before then.
		where, args = where+` AND ("not_before" IS NULL OR "not_before" <= ?)`, append(args, micros(req.Now))
		if !req.Window.IsZero() {
			cond, a := overlap(req.Window, maxUnit)
			where, args = where+" AND "+cond, append(args, a...)
		}
		afterSince, afterID := int64(-1<<63), int64(0)
		for len(out) < req.Limit {
			cands, err := claimCandidates(ctx, tx, where, args, afterSince, afterID)
			if err != nil {
				return err
			}
			if len(cands) == 0 {
				return nil
			}
			for _, c := range cands {
				afterSince, afterID = c.since, c.id
				m := byID[c.modelID]
				if m.flexible {
					busy, err := overlapsRunning(ctx, tx, m, window(c.since, c.until))
					if err != nil {
						return err
					}
					if busy {
						continue
					}
				}
				cl, err := claimUnit(ctx, tx, m, c.id, req)
				if err != nil {
					return err
				}
				counts.move(m.id, state.Pending, state.Running, 1)
				out = append(out, cl)
				if len(out) == req.Limit {
					return nil
				}
			}
		}
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		counts := statusDeltas{}
		if err := claimIn(tx, counts); err != nil {
			return err
		}
		return counts.apply(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claimModels resolves the models a claim may take units of: the named ones
// (each must be registered) or every model of the environment.
func claimModels(ctx context.Context, tx *sql.Tx, req state.ClaimRequest) ([]modelRef, error) {
	var out []modelRef
	if len(req.Models) > claimPerModelMax {
		return claimModelsNamed(ctx, tx, req)
	}
	if len(req.Models) > 0 {
		for _, name := range req.Models {
			m, err := lookup(ctx, tx, req.Env, name)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT "id", "name", "flexibility", "max_unit" FROM "models" WHERE "env" = ?`, req.Env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim: %w", err)
	}
	return scanModelRefs(rows, req.Env)
}

// scanModelRefs reads rows of id, name, flexibility and max_unit, closing
// them, as models of env.
func scanModelRefs(rows *sql.Rows, env string) ([]modelRef, error) {
	defer rows.Close()
	var out []modelRef
	for rows.Next() {
		m := modelRef{env: env}
		var flex string
		if err := rows.Scan(&m.id, &m.name, &flex, &m.maxUnit); err != nil {
			return nil, err
		}
		m.flexible = flex == "flex"
		out = append(out, m)
	}
	return out, rows.Err()
}

// lookupChunk is how many names one read of claimModelsNamed matches: far
// below SQLite's limit on bound parameters.
const lookupChunk = 500

// claimModelsNamed is claimModels for a long list of names: read in chunks
// of lookupChunk, not one lookup a name (35 ms for 1,000 names on each
// claim). The first name that is not registered is the error, as with
// lookup.
func claimModelsNamed(ctx context.Context, tx *sql.Tx, req state.ClaimRequest) ([]modelRef, error) {
	found := make(map[string]modelRef, len(req.Models))
	for from := 0; from < len(req.Models); from += lookupChunk {
		names := req.Models[from:min(from+lookupChunk, len(req.Models))]
		args := make([]any, 0, len(names)+1)
		args = append(args, req.Env)
		for _, n := range names {
			args = append(args, n)
		}
		rows, err := tx.QueryContext(ctx, `SELECT "id", "name", "flexibility", "max_unit" FROM "models" WHERE "env" = ? AND "name" IN (`+placeholders(len(names))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: claim: %w", err)
		}
		for rows.Next() {
			m := modelRef{env: req.Env}
			var flex string
			if err := rows.Scan(&m.id, &m.name, &flex, &m.maxUnit); err != nil {
				rows.Close()
				return nil, err
			}
			m.flexible = flex == "flex"
			found[m.name] = m
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]modelRef, 0, len(req.Models))
	for _, name := range req.Models {
		m, ok := found[name]
		if !ok {
			return nil, state.ModelNotFound(req.Env, name)
		}
		out = append(out, m)
	}
	return out, nil
}

type candidate struct {
	id, modelID  int64
	since, until int64
}

// claimCandidates reads the next batch of pending units in claim order
// (oldest window first, then unit id), after the last one considered.
func claimCandidates(ctx context.Context, tx *sql.Tx, where string, args []any, afterSince, afterID int64) ([]candidate, error) {
	query, args := candidatesQuery(where, args, afterSince, afterID)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim: %w", err)
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.id, &c.modelID, &c.since, &c.until); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// candidatesQuery pages through pending units in claim order by keyset, so
// each batch is a seek, not a rescan of the units already considered.
func candidatesQuery(where string, args []any, afterSince, afterID int64) (string, []any) {
	return `SELECT "id", "model_id", "since", "until" FROM "units"
		WHERE ` + where + ` AND ("since", "id") > (?, ?)
		ORDER BY "since", "id" LIMIT ` + fmt.Sprint(claimBatch), append(append([]any{}, args...), afterSince, afterID)
}

// overlapsRunning reports whether a running unit of m overlaps w, which for
// a flexible model forbids running w now. Units claimed earlier in the same
// transaction are running already, so one query covers both.
func overlapsRunning(ctx context.Context, tx *sql.Tx, m modelRef, w state.Window) (bool, error) {
	if w.IsZero() {
		return false, nil
	}
	cond, args := overlap(w, m.maxUnit)
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM "units" WHERE "model_id" = ? AND "status" = 'running' AND `+cond+` LIMIT 1`, append([]any{m.id}, args...)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: claim: %w", err)
	}
	return true, nil
}

// claimUnit moves one pending unit to running under a new fence.
func claimUnit(ctx context.Context, tx *sql.Tx, m modelRef, id int64, req state.ClaimRequest) (state.Claim, error) {
	u, err := scanUnit(tx.QueryRowContext(ctx, `UPDATE "units" SET "status" = 'running', "lease_owner" = ?, "lease_until" = ?,
			"fence" = "fence" + 1, "run_id" = ?, "updated_at" = ?, "not_before" = NULL, "fingerprint" = NULL,
			"applied_at" = NULL, "error" = '', "blocked_reason" = ''
		WHERE "id" = ? AND "status" = 'pending' RETURNING `+unitColumns,
		req.Worker, micros(req.Now.Add(req.Lease)), req.RunID, micros(req.Now), id), m)
	if err != nil {
		return state.Claim{}, fmt.Errorf("sqlite: claim unit %d: %w", id, err)
	}
	c := state.Change{Env: m.env, Model: m.name, Window: u.Window, From: state.Pending, To: state.Running, Count: 1, At: req.Now, RunID: req.RunID}
	if err := recordChange(ctx, tx, c); err != nil {
		return state.Claim{}, err
	}
	return state.Claim{Unit: u, Fence: u.Fence}, nil
}

// Heartbeat implements state.Store.
func (s *Store) Heartbeat(ctx context.Context, c state.Claim, until time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE "units" SET "lease_until" = ? WHERE "id" = ? AND "status" = 'running' AND "fence" = ?`,
			micros(until), c.Unit.ID, c.Fence)
		if err != nil {
			return fmt.Errorf("sqlite: heartbeat: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return state.LeaseLost(c)
		}
		return nil
	})
}

// Complete implements state.Store.
func (s *Store) Complete(ctx context.Context, c state.Claim, o state.Outcome) error {
	if err := state.CheckOutcome(c, o); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error { return completeTx(ctx, tx, c, o) })
}

// completeTx moves the claimed unit to its outcome inside tx, so a data job
// can record its unit in the transaction that wrote the data.
func completeTx(ctx context.Context, tx *sql.Tx, c state.Claim, o state.Outcome) error {
	m, w, err := completeRow(ctx, tx, c, o, nil, nil)
	if err != nil || o.Status != state.Applied || m.id == 0 {
		return err
	}
	counts := appliedDeltas{}
	counts.add(m.id, o.Fingerprint, 1)
	if err := counts.apply(ctx, tx); err != nil {
		return err
	}
	return refreshCoverage(ctx, tx, m, w)
}

// completeRow moves the claimed unit to its outcome and records the change,
// but leaves the model's coverage to the caller: it returns the unit's model
// and window when it moved (m.id is 0 for a repeat of an outcome already
// recorded, which changes nothing). models, when not nil, caches models by
// id across the calls of one transaction; counts, when not nil, collects
// the status move for the caller to apply once (nil: applied here).
func completeRow(ctx context.Context, tx *sql.Tx, c state.Claim, o state.Outcome, models map[int64]modelRef, counts statusDeltas) (modelRef, state.Window, error) {
	lost := state.LeaseLost(c)
	var status string
	var fence, modelID, since, until, runID int64
	err := tx.QueryRowContext(ctx, `SELECT "status", "fence", "model_id", "since", "until", "run_id" FROM "units" WHERE "id" = ?`, c.Unit.ID).
		Scan(&status, &fence, &modelID, &since, &until, &runID)
	if errors.Is(err, sql.ErrNoRows) || err == nil && fence != c.Fence {
		return modelRef{}, state.Window{}, lost
	}
	if err != nil {
		return modelRef{}, state.Window{}, fmt.Errorf("sqlite: complete: %w", err)
	}
	if state.UnitStatus(status) != state.Running {
		if state.UnitStatus(status) == o.Status {
			return modelRef{}, state.Window{}, nil // a retry of an outcome already recorded
		}
		return modelRef{}, state.Window{}, lost
	}
	var appliedAt, notBefore sql.NullInt64
	var fingerprint sql.NullString
	var reason, msg string
	attempt := 1
	switch {
	case o.Status == state.Applied:
		appliedAt = nullMicrosOf(o.At)
		fingerprint = sql.NullString{String: o.Fingerprint, Valid: o.Fingerprint != ""}
	case o.Status == state.Blocked:
		reason = o.BlockedReason
	case o.Status == state.Failed:
		msg = o.Error
	case o.Retry():
		msg, notBefore = o.Error, nullMicrosOf(o.NotBefore)
	case o.Status == state.Pending:
		// Released unrun, not an attempt; a wait keeps its reason and time.
		attempt, reason, notBefore = 0, o.BlockedReason, nullMicrosOf(o.NotBefore)
	}
	_, err = tx.ExecContext(ctx, `UPDATE "units" SET "status" = ?, "applied_at" = ?, "blocked_reason" = ?, "error" = ?,
			"attempts" = "attempts" + ?, "lease_owner" = '', "lease_until" = NULL, "rows_written" = ?, "updated_at" = ?,
			"not_before" = ?, "fingerprint" = ?
		WHERE "id" = ?`,
		string(o.Status), appliedAt, reason, msg, attempt, nullInt(o.RowsWritten), micros(o.At), notBefore, fingerprint, c.Unit.ID)
	if err != nil {
		return modelRef{}, state.Window{}, fmt.Errorf("sqlite: complete: %w", err)
	}
	if o.Status == state.Failed || o.Retry() {
		if err := logAttempt(ctx, tx, c.Unit.ID, o.Try, o.Error, o.At); err != nil {
			return modelRef{}, state.Window{}, err
		}
	}
	m, ok := models[modelID]
	if !ok {
		if m, err = modelByID(ctx, tx, modelID); err != nil {
			return modelRef{}, state.Window{}, err
		}
		if models != nil {
			models[modelID] = m
		}
	}
	w := window(since, until)
	if err := recordChange(ctx, tx, state.Change{Env: m.env, Model: m.name, Window: w, From: state.Running, To: o.Status, Count: 1, At: o.At, RunID: runID}); err != nil {
		return modelRef{}, state.Window{}, err
	}
	if counts != nil {
		counts.move(modelID, state.Running, o.Status, 1)
	} else if err := moveStatus(ctx, tx, modelID, state.Running, o.Status, 1); err != nil {
		return modelRef{}, state.Window{}, err
	}
	return m, w, nil
}

func modelByID(ctx context.Context, q querier, id int64) (modelRef, error) {
	m := modelRef{id: id}
	var flex string
	err := q.QueryRowContext(ctx, `SELECT "env", "name", "flexibility", "max_unit" FROM "models" WHERE "id" = ?`, id).Scan(&m.env, &m.name, &flex, &m.maxUnit)
	if err != nil {
		return m, fmt.Errorf("sqlite: model %d: %w", id, err)
	}
	m.flexible = flex == "flex"
	return m, nil
}

// ReleaseExpired implements state.Store.
func (s *Store) ReleaseExpired(ctx context.Context, now time.Time) (int, error) {
	released := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		released = 0
		rows, err := tx.QueryContext(ctx, `SELECT "model_id", count(*), min("since"), max("until"), max("run_id") FROM "units"
			WHERE "status" = 'running' AND "lease_until" < ? GROUP BY "model_id" ORDER BY "model_id"`, micros(now))
		if err != nil {
			return fmt.Errorf("sqlite: release expired: %w", err)
		}
		type group struct {
			modelID, since, until, runID int64
			count                        int
		}
		var groups []group
		for rows.Next() {
			var g group
			if err := rows.Scan(&g.modelID, &g.count, &g.since, &g.until, &g.runID); err != nil {
				rows.Close()
				return err
			}
			groups = append(groups, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(groups) == 0 {
			return err
		}
		if err := logExpired(ctx, tx, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE "units" SET "status" = 'pending', "attempts" = "attempts" + 1,
				"lease_owner" = '', "lease_until" = NULL, "updated_at" = ?
			WHERE "status" = 'running' AND "lease_until" < ?`, micros(now), micros(now)); err != nil {
			return fmt.Errorf("sqlite: release expired: %w", err)
		}
		counts := statusDeltas{}
		for _, g := range groups {
			m, err := modelByID(ctx, tx, g.modelID)
			if err != nil {
				return err
			}
			released += g.count
			c := state.Change{Env: m.env, Model: m.name, Window: window(g.since, g.until), From: state.Running, To: state.Pending, Count: g.count, At: now, RunID: g.runID}
			if err := recordChange(ctx, tx, c); err != nil {
				return err
			}
			counts.move(g.modelID, state.Running, state.Pending, g.count)
		}
		return counts.apply(ctx, tx)
	})
	if err != nil {
		return 0, err
	}
	return released, nil
}
