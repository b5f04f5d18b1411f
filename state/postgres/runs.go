package postgres

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// CreateRun records a run and returns its id; a run without a status starts
// running.
func (s *Store) CreateRun(ctx context.Context, r state.Run) (int64, error) {
	if r.Status == "" {
		r.Status = state.RunRunning
	}
	models := r.Models
	if models == nil {
		models = []string{}
	}
	since, until := windowBounds(r.Window)
	var id int64
	err := s.pool.QueryRow(ctx, s.sql(`
		INSERT INTO {schema}.runs (env, pipeline, models, since, until, state_mode, status, actor, started_at, finished_at, heartbeat_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		RETURNING id`),
		r.Env, r.Pipeline, models, since, until, r.StateMode, string(r.Status), r.Actor, r.StartedAt, nullTimePtr(r.FinishedAt),
		cmp.Or(r.Heartbeat, r.StartedAt),
	).Scan(&id)
	return id, err
}

// FinishRun records how a run ended.
func (s *Store) FinishRun(ctx context.Context, id int64, status state.RunStatus, at time.Time) error {
	tag, err := s.pool.Exec(ctx, s.sql(`UPDATE {schema}.runs SET status = $2, finished_at = $3 WHERE id = $1`), id, string(status), at)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return state.RunNotFound(id)
	}
	return nil
}

const runColumns = `id, env, pipeline, models, since, until, state_mode, status, actor, started_at, finished_at,
	coalesce(heartbeat_at, started_at)`

func scanRun(row pgx.CollectableRow) (state.Run, error) {
	var (
		r                      state.Run
		since, until, finished pgtype.Timestamptz
		status                 string
	)
	err := row.Scan(&r.ID, &r.Env, &r.Pipeline, &r.Models, &since, &until, &r.StateMode, &status, &r.Actor, &r.StartedAt, &finished, &r.Heartbeat)
	if len(r.Models) == 0 {
		r.Models = nil
	}
	r.Window = windowOf(since, until)
	r.Status = state.RunStatus(status)
	r.StartedAt = r.StartedAt.UTC()
	r.FinishedAt = timePtrOf(finished)
	r.Heartbeat = r.Heartbeat.UTC()
	return r, err
}

// HeartbeatRun records that the run's process is alive at at.
func (s *Store) HeartbeatRun(ctx context.Context, id int64, at time.Time) error {
	tag, err := s.pool.Exec(ctx, s.sql(`UPDATE {schema}.runs SET heartbeat_at = $2 WHERE id = $1`), id, at)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return state.RunNotFound(id)
	}
	return nil
}

// AbandonRuns closes the env's running runs whose process is gone, with
// their task attempts in progress, in one statement. Two closers at once
// close each run once: the second waits on the first's row lock and, once
// it commits, re-checks the row, no longer running, and leaves it.
func (s *Store) AbandonRuns(ctx context.Context, env string, now time.Time, lease time.Duration) ([]int64, error) {
	if err := state.CheckAbandonLease(lease); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql(`
		WITH closed AS (
		    UPDATE {schema}.runs r SET status = 'abandoned', finished_at = $1
		    WHERE r.env = $2 AND r.status = 'running' AND coalesce(r.heartbeat_at, r.started_at) < $3
		    AND NOT EXISTS (SELECT 1 FROM {schema}.units u
		        WHERE u.run_id = r.id AND u.status = 'running' AND u.lease_until >= $1)
		    RETURNING r.id
		), tasks AS (
		    UPDATE {schema}.task_runs t SET status = 'FAILED', finished_at = $1, error = $4
		    FROM closed c WHERE t.run_id = c.id AND t.status = 'IN_PROGRESS'
		)
		SELECT id FROM closed ORDER BY id`), now, env, now.Add(-lease), state.AbandonedTask)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// GetRun returns one run, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id int64) (state.Run, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+runColumns+` FROM {schema}.runs WHERE id = $1`), id)
	if err != nil {
		return state.Run{}, err
	}
	r, err := pgx.CollectExactlyOneRow(rows, scanRun)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, state.RunNotFound(id)
	}
	return r, err
}

// Runs lists an environment's runs newest first, at most limit (no limit
// when limit <= 0).
func (s *Store) Runs(ctx context.Context, env string, limit int) ([]state.Run, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+runColumns+` FROM {schema}.runs WHERE env = $1
		ORDER BY started_at DESC, id DESC LIMIT $2`), env, limitParam(limit))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanRun)
}

// UnfinishedRuns implements state.Store.
func (s *Store) UnfinishedRuns(ctx context.Context, env string) ([]state.Run, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+runColumns+` FROM {schema}.runs WHERE env = $1 AND finished_at IS NULL
		ORDER BY started_at, id`), env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanRun)
}

// StartTask opens the next attempt of a task under a run, IN_PROGRESS.
func (s *Store) StartTask(ctx context.Context, runID int64, taskID int, at time.Time) (int, error) {
	var (
		attempt int
		err     error
	)
	// Two workers starting the same task at once compute the same attempt
	// number; the primary key refuses the second, which then takes the next.
	for range claimAttempts {
		err = s.pool.QueryRow(ctx, s.sql(`
			INSERT INTO {schema}.task_runs (run_id, task_id, attempt, status, started_at)
			SELECT $1, $2, coalesce(max(attempt), 0) + 1, 'IN_PROGRESS', $3
			FROM {schema}.task_runs WHERE run_id = $1 AND task_id = $2
			RETURNING attempt`), runID, taskID, at).Scan(&attempt)
		if pgCode(err) != codeUniqueViolation {
			break
		}
	}
	if pgCode(err) == codeForeignKeyViolation {
		return 0, state.RunNotFound(runID)
	}
	return attempt, err
}

// FinishTask records the outcome of an attempt opened by StartTask.
func (s *Store) FinishTask(ctx context.Context, e state.TaskRunEntry) error {
	tag, err := s.pool.Exec(ctx, s.sql(`
		UPDATE {schema}.task_runs
		SET status = $4, finished_at = $5, rows_written = $6, target_count = $7, error = $8
		WHERE run_id = $1 AND task_id = $2 AND attempt = $3`),
		e.RunID, e.TaskID, e.Attempt, e.Status, nullTimePtr(e.FinishedAt), e.RowsWritten, e.TargetCount, e.Error)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return state.AttemptNotFound(e.RunID, e.TaskID, e.Attempt)
	}
	return nil
}

// TaskLog returns every attempt under a run, by task id, then attempt.
func (s *Store) TaskLog(ctx context.Context, runID int64) ([]state.TaskRunEntry, error) {
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT run_id, task_id, attempt, status, started_at, finished_at, rows_written, target_count, error
		FROM {schema}.task_runs WHERE run_id = $1 ORDER BY task_id, attempt`), runID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanTaskRun)
}

// scanTaskRun reads a task_runs row: run_id, task_id, attempt, status,
// started_at, finished_at, rows_written, target_count, error.
func scanTaskRun(row pgx.CollectableRow) (state.TaskRunEntry, error) {
	var (
		e        state.TaskRunEntry
		finished pgtype.Timestamptz
	)
	err := row.Scan(&e.RunID, &e.TaskID, &e.Attempt, &e.Status, &e.StartedAt, &finished, &e.RowsWritten, &e.TargetCount, &e.Error)
	e.StartedAt = e.StartedAt.UTC()
	e.FinishedAt = timePtrOf(finished)
	return e, err
}

// limitParam is a LIMIT parameter: NULL, no limit, when limit <= 0.
func limitParam(limit int) *int {
	if limit <= 0 {
		return nil
	}
	return &limit
}
