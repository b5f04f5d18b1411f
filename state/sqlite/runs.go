package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bollhav/bollhav/state"
)

// CreateRun implements state.Store.
func (s *Store) CreateRun(ctx context.Context, r state.Run) (int64, error) {
	models, err := json.Marshal(nonNil(r.Models))
	if err != nil {
		return 0, err
	}
	if r.Status == "" {
		r.Status = state.RunRunning
	}
	var since, until sql.NullInt64
	if !r.Window.IsZero() {
		since, until = nullMicrosOf(r.Window.Since), nullMicrosOf(r.Window.Until)
	}
	var id int64
	err = s.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO "runs" ("env", "pipeline", "models", "since", "until", "state_mode", "status", "actor", "started_at", "finished_at", "heartbeat_at")
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING "id"`,
			r.Env, r.Pipeline, string(models), since, until, r.StateMode, string(r.Status), r.Actor, micros(r.StartedAt), nullMicros(r.FinishedAt),
			micros(cmp.Or(r.Heartbeat, r.StartedAt))).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: create run: %w", err)
	}
	return id, nil
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// FinishRun implements state.Store.
func (s *Store) FinishRun(ctx context.Context, id int64, status state.RunStatus, at time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE "runs" SET "status" = ?, "finished_at" = ? WHERE "id" = ?`, string(status), micros(at), id)
		if err != nil {
			return fmt.Errorf("sqlite: finish run %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return state.RunNotFound(id)
		}
		return nil
	})
}

const runColumns = `"id", "env", "pipeline", "models", "since", "until", "state_mode", "status", "actor", "started_at", "finished_at", coalesce("heartbeat_at", "started_at")`

func scanRun(sc rowScanner) (state.Run, error) {
	var r state.Run
	var models, status string
	var since, until, finished sql.NullInt64
	var started, beat int64
	if err := sc.Scan(&r.ID, &r.Env, &r.Pipeline, &models, &since, &until, &r.StateMode, &status, &r.Actor, &started, &finished, &beat); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(models), &r.Models); err != nil {
		return r, fmt.Errorf("run %d: models: %w", r.ID, err)
	}
	if len(r.Models) == 0 {
		r.Models = nil
	}
	if since.Valid && until.Valid {
		r.Window = window(since.Int64, until.Int64)
	}
	r.Status = state.RunStatus(status)
	r.StartedAt = fromMicros(started)
	r.FinishedAt = timePtr(finished)
	r.Heartbeat = fromMicros(beat)
	return r, nil
}

// HeartbeatRun implements state.Store.
func (s *Store) HeartbeatRun(ctx context.Context, id int64, at time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE "runs" SET "heartbeat_at" = ? WHERE "id" = ?`, micros(at), id)
		if err != nil {
			return fmt.Errorf("sqlite: heartbeat of run %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return state.RunNotFound(id)
		}
		return nil
	})
}

// AbandonRuns implements state.Store. SQLite serialises writers, so the
// runs it closes and their task attempts change in one transaction no
// other closer interleaves with.
func (s *Store) AbandonRuns(ctx context.Context, env string, now time.Time, lease time.Duration) ([]int64, error) {
	if err := state.CheckAbandonLease(lease); err != nil {
		return nil, err
	}
	var ids []int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		ids = nil
		rows, err := tx.QueryContext(ctx, `UPDATE "runs" SET "status" = 'abandoned', "finished_at" = ?1
			WHERE "env" = ?2 AND "status" = 'running' AND coalesce("heartbeat_at", "started_at") < ?3
			AND NOT EXISTS (SELECT 1 FROM "units" u WHERE u."run_id" = "runs"."id" AND u."status" = 'running' AND u."lease_until" >= ?1)
			RETURNING "id"`, micros(now), env, micros(now.Add(-lease)))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE "task_runs" SET "status" = 'FAILED', "finished_at" = ?, "error" = ?
				WHERE "run_id" = ? AND "status" = 'IN_PROGRESS'`, micros(now), state.AbandonedTask, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: abandon runs: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// GetRun implements state.Store.
func (s *Store) GetRun(ctx context.Context, id int64) (state.Run, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM "runs" WHERE "id" = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, state.RunNotFound(id)
	}
	if err != nil {
		return r, fmt.Errorf("sqlite: run %d: %w", id, err)
	}
	return r, nil
}

// Runs implements state.Store.
func (s *Store) Runs(ctx context.Context, env string, limit int) ([]state.Run, error) {
	return queryAll(ctx, s.r, "runs", scanRun, `SELECT `+runColumns+` FROM "runs" WHERE "env" = ? ORDER BY "id" DESC LIMIT ?`, env, sqlLimit(limit))
}

// UnfinishedRuns implements state.Store.
func (s *Store) UnfinishedRuns(ctx context.Context, env string) ([]state.Run, error) {
	return queryAll(ctx, s.r, "unfinished runs", scanRun, `SELECT `+runColumns+` FROM "runs" WHERE "env" = ? AND "finished_at" IS NULL ORDER BY "id"`, env)
}

// sqlLimit turns "0 or less means no limit" into SQLite's LIMIT -1.
func sqlLimit(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

// StartTask implements state.Store.
func (s *Store) StartTask(ctx context.Context, runID int64, taskID int, at time.Time) (int, error) {
	var attempt int
	err := s.write(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM "runs" WHERE "id" = ?`, runID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return state.RunNotFound(runID)
		}
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO "task_runs" ("run_id", "task_id", "attempt", "status", "started_at")
			SELECT ?, ?, coalesce(max("attempt"), 0) + 1, 'IN_PROGRESS', ? FROM "task_runs" WHERE "run_id" = ? AND "task_id" = ?
			RETURNING "attempt"`, runID, taskID, micros(at), runID, taskID).Scan(&attempt)
	})
	if errors.Is(err, state.ErrNotFound) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("start task %d of run %d: %w", taskID, runID, err)
	}
	return attempt, nil
}

// FinishTask implements state.Store.
func (s *Store) FinishTask(ctx context.Context, e state.TaskRunEntry) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE "task_runs" SET "status" = ?, "finished_at" = ?, "rows_written" = ?, "target_count" = ?, "error" = ?
			WHERE "run_id" = ? AND "task_id" = ? AND "attempt" = ?`,
			e.Status, nullMicros(e.FinishedAt), nullInt(e.RowsWritten), nullInt(e.TargetCount), e.Error, e.RunID, e.TaskID, e.Attempt)
		if err != nil {
			return fmt.Errorf("sqlite: finish task: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return state.AttemptNotFound(e.RunID, e.TaskID, e.Attempt)
		}
		return nil
	})
}

// TaskLog implements state.Store.
func (s *Store) TaskLog(ctx context.Context, runID int64) ([]state.TaskRunEntry, error) {
	return queryAll(ctx, s.r, "task log", scanTaskRun, `SELECT "run_id", "task_id", "attempt", "status", "started_at", "finished_at", "rows_written", "target_count", "error"
		FROM "task_runs" WHERE "run_id" = ? ORDER BY "task_id", "attempt"`, runID)
}

// scanTaskRun reads a task_runs row: run_id, task_id, attempt, status,
// started_at, finished_at, rows_written, target_count, error.
func scanTaskRun(sc rowScanner) (state.TaskRunEntry, error) {
	var e state.TaskRunEntry
	var started int64
	var finished, written, target sql.NullInt64
	err := sc.Scan(&e.RunID, &e.TaskID, &e.Attempt, &e.Status, &started, &finished, &written, &target, &e.Error)
	e.StartedAt, e.FinishedAt = fromMicros(started), timePtr(finished)
	e.RowsWritten, e.TargetCount = intPtr(written), intPtr(target)
	return e, err
}

// Audit implements state.Store.
func (s *Store) Audit(ctx context.Context, e state.AuditEntry) error {
	args, err := json.Marshal(e.Args)
	if err != nil {
		return err
	}
	if e.Args == nil {
		args = []byte("{}")
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO "audit_log" ("at", "actor", "action", "args", "outcome") VALUES (?, ?, ?, ?, ?)`,
			micros(e.At), e.Actor, e.Action, string(args), e.Outcome)
		if err != nil {
			return fmt.Errorf("sqlite: audit: %w", err)
		}
		return nil
	})
}

// AuditLog implements state.Store.
func (s *Store) AuditLog(ctx context.Context, limit int) ([]state.AuditEntry, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT "id", "at", "actor", "action", "args", "outcome" FROM "audit_log" ORDER BY "id" DESC LIMIT ?`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit log: %w", err)
	}
	defer rows.Close()
	var out []state.AuditEntry
	for rows.Next() {
		var e state.AuditEntry
		var at int64
		var args string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &args, &e.Outcome); err != nil {
			return nil, fmt.Errorf("sqlite: audit log: %w", err)
		}
		e.At = fromMicros(at)
		if err := json.Unmarshal([]byte(args), &e.Args); err != nil {
			return nil, fmt.Errorf("sqlite: audit entry %d: args: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
