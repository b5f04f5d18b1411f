package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/state"
)

const unitColumns = `"id", "since", "until", "status", "applied_at", "blocked_reason", "error", "attempts", "run_id", "lease_owner", "lease_until", "fence", "rows_written", "updated_at", "not_before", "fingerprint"`

// scanUnit reads unitColumns into a unit of m.
func scanUnit(sc rowScanner, m modelRef) (state.Unit, error) {
	u := state.Unit{Env: m.env, Model: m.name}
	var since, until, updated int64
	var status string
	var appliedAt, leaseUntil, rows, notBefore sql.NullInt64
	var fingerprint sql.NullString
	err := sc.Scan(&u.ID, &since, &until, &status, &appliedAt, &u.BlockedReason, &u.Error, &u.Attempts, &u.RunID,
		&u.LeaseOwner, &leaseUntil, &u.Fence, &rows, &updated, &notBefore, &fingerprint)
	u.Fingerprint = fingerprint.String
	u.Window = window(since, until)
	u.Status = state.UnitStatus(status)
	u.AppliedAt = timePtr(appliedAt)
	u.LeaseUntil = timePtr(leaseUntil)
	u.NotBefore = timePtr(notBefore)
	u.RowsWritten = intPtr(rows)
	u.UpdatedAt = fromMicros(updated)
	return u, err
}

// overlap is the SQL condition "the unit overlaps w" for a model whose units
// are at most maxUnit long, with its arguments. The lower bound on since is
// what lets the (model_id, …, since) indexes seek to the window instead of
// walking every unit that starts before it. Use it inside a write
// transaction, where maxUnit cannot change under the query; readers use
// overlapOf.
func overlap(w state.Window, maxUnit int64) (string, []any) {
	return `"since" > ? AND "since" < ? AND "until" > ?`, []any{micros(w.Since) - maxUnit, micros(w.Until), micros(w.Since)}
}

// overlapOf is overlap for readers: the bound is read from the model's row
// in the same statement, so a longer unit committed between looking the
// model up and running the query cannot be missed.
func overlapOf(w state.Window, modelID int64) (string, []any) {
	return `"since" > ? - (SELECT "max_unit" FROM "models" WHERE "id" = ?) AND "since" < ? AND "until" > ?`,
		[]any{micros(w.Since), modelID, micros(w.Until), micros(w.Since)}
}

// inside is the SQL condition "the unit lies inside w" (covered by it).
func inside(w state.Window) (string, []any) {
	return `"since" >= ? AND "until" <= ?`, []any{micros(w.Since), micros(w.Until)}
}

// Prefill implements state.Store. The windows go in one transaction through
// one prepared statement: with an embedded database a round trip is a
// function call, and the transaction is what makes 100,000 inserts cheap
// (one commit, one fsync).
func (s *Store) Prefill(ctx context.Context, req state.PrefillRequest) (int, error) {
	env, model, windows, now := req.Env, req.Model, req.Windows, req.Now
	for _, w := range windows {
		if err := state.CheckWindow("prefill "+model, w); err != nil {
			return 0, err
		}
	}
	created := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		created = 0
		m, err := lookup(ctx, tx, env, model)
		if err != nil {
			return err
		}
		if len(windows) == 0 {
			return nil
		}
		var hw state.Window
		var longest int64
		created, hw, longest, err = insertWindows(ctx, tx, m.id, windows, micros(now))
		if err != nil {
			return fmt.Errorf("sqlite: prefill %s: %w", model, err)
		}
		if created == 0 {
			return nil
		}
		if longest > m.maxUnit {
			if _, err := tx.ExecContext(ctx, `UPDATE "models" SET "max_unit" = ? WHERE "id" = ?`, longest, m.id); err != nil {
				return err
			}
		}
		if err := moveStatus(ctx, tx, m.id, "", state.Pending, created); err != nil {
			return err
		}
		return recordChange(ctx, tx, state.Change{Env: env, Model: model, Window: hw, To: state.Pending, Count: created, At: now})
	})
	if err != nil {
		return 0, err
	}
	return created, nil
}

// ScanUnits implements state.Store. Rows stream from a read connection; fn
// runs while the cursor is open, so it must not wait on another read of this
// store for longer than the pool allows (it may write freely).
func (s *Store) ScanUnits(ctx context.Context, q state.UnitQuery, fn func(state.Unit) error) error {
	if q.Model == "" && q.Window.IsZero() && len(q.Statuses) > 0 {
		return s.scanEnv(ctx, q, fn)
	}
	var models []modelRef
	if q.Model != "" {
		m, err := lookup(ctx, s.r, q.Env, q.Model)
		if err != nil {
			return err
		}
		models = append(models, m)
	} else {
		var err error
		if models, err = s.envModels(ctx, q.Env); err != nil {
			return err
		}
	}
	for _, m := range models {
		if err := s.scanModel(ctx, m, q, fn); err != nil {
			return err
		}
	}
	return nil
}

// scanEnv is ScanUnits over every model of an environment, for units of
// some statuses: one statement that seeks each model's (model_id, status)
// index, instead of a statement a model — at ten thousand models the round
// trips alone cost a second. Same order as the per-model scan: by model
// name, then timeline. INDEXED BY: for that order the planner prefers the
// (model_id, since, until) index and reads every unit of every model to
// keep the few of a status (300 ms at a million units, against 20).
func (s *Store) scanEnv(ctx context.Context, q state.UnitQuery, fn func(state.Unit) error) error {
	args := []any{q.Env}
	for _, st := range q.Statuses {
		args = append(args, string(st))
	}
	return s.eachEnvUnit(ctx, q.Env, "scan", `SELECT u."model_id", `+prefixedUnitColumns+`
		FROM "models" m JOIN "units" u INDEXED BY "units_status" ON u."model_id" = m."id"
		WHERE m."env" = ? AND u."status" IN (`+placeholders(len(q.Statuses))+`)
		ORDER BY m."name", u."since", u."until"`, args, fn)
}

// eachEnvUnit runs query, a read of env's units whose rows are model_id
// then unitColumns, and calls fn with each unit, its env and model named.
// what names the read in its errors.
func (s *Store) eachEnvUnit(ctx context.Context, env, what, query string, args []any, fn func(state.Unit) error) error {
	models, err := s.envModels(ctx, env)
	if err != nil {
		return err
	}
	byID := make(map[int64]modelRef, len(models))
	for _, m := range models {
		byID[m.id] = m
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("sqlite: %s %q: %w", what, env, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		u, err := scanUnit(withModelID{rows, &id}, modelRef{})
		if err != nil {
			return fmt.Errorf("sqlite: %s %q: %w", what, env, err)
		}
		m, ok := byID[id]
		if !ok {
			continue // registered after the model list was read
		}
		u.Env, u.Model = m.env, m.name
		if err := fn(u); err != nil {
			return err
		}
	}
	return rows.Err()
}

// prefixedUnitColumns is unitColumns of the units table aliased u.
var prefixedUnitColumns = "u." + strings.ReplaceAll(unitColumns, `, "`, `, u."`)

// withModelID scans a row of model_id then unitColumns, for scanUnit.
type withModelID struct {
	rows *sql.Rows
	id   *int64
}

func (w withModelID) Scan(dest ...any) error {
	return w.rows.Scan(append([]any{w.id}, dest...)...)
}

// envModels lists an environment's models by name.
func (s *Store) envModels(ctx context.Context, env string) ([]modelRef, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT "id", "name", "flexibility", "max_unit" FROM "models" WHERE "env" = ? ORDER BY "name"`, env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: models of %q: %w", env, err)
	}
	return scanModelRefs(rows, env)
}

func (s *Store) scanModel(ctx context.Context, m modelRef, q state.UnitQuery, fn func(state.Unit) error) error {
	query, args := unitsQuery(m, q)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("sqlite: scan %s: %w", m.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		u, err := scanUnit(rows, m)
		if err != nil {
			return fmt.Errorf("sqlite: scan %s: %w", m.name, err)
		}
		if err := fn(u); err != nil {
			return err
		}
	}
	return rows.Err()
}

// unitsQuery selects m's units matching q in timeline order.
func unitsQuery(m modelRef, q state.UnitQuery) (string, []any) {
	where := []string{`"model_id" = ?`}
	args := []any{m.id}
	if !q.Window.IsZero() {
		cond, a := overlapOf(q.Window, m.id)
		where, args = append(where, cond), append(args, a...)
	}
	if len(q.Statuses) > 0 {
		where = append(where, `"status" IN (`+placeholders(len(q.Statuses))+`)`)
		for _, st := range q.Statuses {
			args = append(args, string(st))
		}
	}
	return `SELECT ` + unitColumns + ` FROM "units" WHERE ` + strings.Join(where, " AND ") + ` ORDER BY "since", "until"`, args
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Stats implements state.Store: counts from the (model_id, status, since)
// index, the newest applied_at from the partial applied_at index.
func (s *Store) Stats(ctx context.Context, env, model string) (state.UnitStats, error) {
	st := state.UnitStats{Counts: map[state.UnitStatus]int{}}
	for _, status := range state.Statuses {
		st.Counts[status] = 0
	}
	m, err := lookup(ctx, s.r, env, model)
	if err != nil {
		return st, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT "status", count(*) FROM "units" WHERE "model_id" = ? GROUP BY "status"`, m.id)
	if err != nil {
		return st, fmt.Errorf("sqlite: stats of %s: %w", model, err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return st, err
		}
		st.Counts[state.UnitStatus(status)] = n
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	var last sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT max("applied_at") FROM "units" WHERE "model_id" = ? AND "status" = 'applied'`, m.id).Scan(&last); err != nil {
		return st, fmt.Errorf("sqlite: stats of %s: %w", model, err)
	}
	st.LastAppliedAt = timePtr(last)
	return st, nil
}

// FingerprintCounts implements state.Store: a read of the applied_counts
// table (migration 0006), which every transition keeps in step with the
// units: a few rows per model of env whatever the number of applied units.
func (s *Store) FingerprintCounts(ctx context.Context, env, model string) ([]state.FingerprintCount, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m."name", c."fingerprint", c."units"
		FROM "models" m JOIN "applied_counts" c ON c."model_id" = m."id"
		WHERE m."env" = ? AND (? = '' OR m."name" = ?) AND c."units" > 0 ORDER BY m."name", c."fingerprint"`, env, model, model)
	if err != nil {
		return nil, fmt.Errorf("sqlite: fingerprint counts of %q: %w", env, err)
	}
	defer rows.Close()
	var out []state.FingerprintCount
	for rows.Next() {
		var c state.FingerprintCount
		if err := rows.Scan(&c.Model, &c.Fingerprint, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Applied implements state.Store.
func (s *Store) Applied(ctx context.Context, env, model string, w state.Window) ([]state.AppliedRow, error) {
	m, err := lookup(ctx, s.r, env, model)
	if err != nil {
		return nil, err
	}
	var out []state.AppliedRow
	err = appliedRows(ctx, s.r, m, w, func(since, until, appliedAt int64, fingerprint string) {
		out = append(out, state.AppliedRow{Window: window(since, until), AppliedAt: fromMicros(appliedAt), Fingerprint: fingerprint})
	})
	return out, err
}

// appliedRows calls fn for each applied unit of m overlapping w (every one
// when w is zero), in window order. A model has a handful of fingerprints
// however many rows, so each is allocated once per call.
func appliedRows(ctx context.Context, q querier, m modelRef, w state.Window, fn func(since, until, appliedAt int64, fingerprint string)) error {
	query, args := appliedQuery(m, w)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("sqlite: applied rows of %s: %w", m.name, err)
	}
	defer rows.Close()
	seen := map[string]string{}
	for rows.Next() {
		var (
			since, until, at int64
			raw              sql.RawBytes
		)
		if err := rows.Scan(&since, &until, &at, &raw); err != nil {
			return err
		}
		fp, ok := seen[string(raw)]
		if !ok {
			fp = string(raw)
			seen[fp] = fp
		}
		fn(since, until, at, fp)
	}
	return rows.Err()
}

// appliedQuery selects m's applied units overlapping w: a range seek on the
// (model_id, status, since) index between w.since minus the longest unit and
// w.until — what the gate asks per downstream unit.
func appliedQuery(m modelRef, w state.Window) (string, []any) {
	where, args := `"model_id" = ? AND "status" = 'applied'`, []any{m.id}
	if !w.IsZero() {
		cond, a := overlapOf(w, m.id)
		where, args = where+" AND "+cond, append(args, a...)
	}
	return `SELECT "since", "until", coalesce("applied_at", "updated_at"), coalesce("fingerprint", '') FROM "units" WHERE ` + where + ` ORDER BY "since", "until"`, args
}

// insertWindows inserts a pending unit for each window that has none, in one
// statement: the windows travel as one JSON array that json_each unpacks
// inside SQLite, so 100,000 windows cost one statement execution instead of
// 100,000 trips through the driver. Unit ids only grow (AUTOINCREMENT), so
// the units with an id above the largest before the insert are exactly the
// ones it created: one range read gives their count, hull and longest
// length without shipping every row back through RETURNING.
func insertWindows(ctx context.Context, tx *sql.Tx, modelID int64, windows []state.Window, at int64) (created int, hw state.Window, longest int64, err error) {
	buf := make([]byte, 0, len(windows)*40)
	buf = append(buf, '[')
	for i, w := range windows {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '[')
		buf = strconv.AppendInt(buf, micros(w.Since), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, micros(w.Until), 10)
		buf = append(buf, ']')
	}
	buf = append(buf, ']')
	var before int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max("id"), 0) FROM "units"`).Scan(&before); err != nil {
		return 0, hw, 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO "units" ("model_id", "since", "until", "status", "updated_at")
		SELECT ?, "value" ->> 0, "value" ->> 1, 'pending', ? FROM json_each(?) WHERE true
		ON CONFLICT DO NOTHING`, modelID, at, string(buf)); err != nil {
		return 0, hw, 0, err
	}
	var lo, hi, long sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT count(*), min("since"), max("until"), max("until" - "since") FROM "units" WHERE "id" > ?`, before).
		Scan(&created, &lo, &hi, &long)
	if err != nil || created == 0 {
		return 0, hw, 0, err
	}
	return created, window(lo.Int64, hi.Int64), long.Int64, nil
}
