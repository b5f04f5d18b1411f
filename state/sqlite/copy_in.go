package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/state"
)

// CopyIn implements state.StoreCopier: one write transaction (BEGIN
// IMMEDIATE) holds the file's write lock from the emptiness check to the
// commit, so nothing else lands in the store while it fills.
func (s *Store) CopyIn(ctx context.Context, opts state.CopyInOptions) (state.CopyWriter, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: copy in: begin: %w", err)
	}
	w := &copyIn{s: s, ctx: ctx, tx: tx, snapshot: opts.Snapshot, models: map[[2]string]modelRef{}}
	if err := w.checkEmpty(); err != nil {
		return nil, errors.Join(err, rollback(tx))
	}
	if w.unit, err = tx.PrepareContext(ctx, `INSERT INTO "units" ("id", "model_id", "since", "until", "status", "applied_at", "blocked_reason", "error",
		"attempts", "run_id", "lease_owner", "lease_until", "fence", "rows_written", "updated_at", "not_before", "fingerprint")
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return nil, errors.Join(fmt.Errorf("sqlite: copy in: %w", err), rollback(tx))
	}
	return w, nil
}

// copyIn is the SQLite CopyWriter. Coverage is rebuilt as units arrive
// (by model, then window start: each model's islands come out merged in
// one pass); the counts and each model's longest unit at Commit.
type copyIn struct {
	s        *Store
	ctx      context.Context
	tx       *sql.Tx
	snapshot *state.Retirement
	unit     *sql.Stmt
	// models maps (env, name) to the row the copy made for it.
	models map[[2]string]modelRef
	// island is the coverage island being grown for islandOf.
	islandOf int64
	island   state.Window
}

var _ state.CopyWriter = (*copyIn)(nil)

func (w *copyIn) checkEmpty() error {
	var e state.NotEmptyError
	err := w.tx.QueryRowContext(w.ctx, `SELECT (SELECT count(*) FROM "models"), (SELECT count(*) FROM "units"),
		(SELECT count(*) FROM "runs"), (SELECT count(*) FROM "audit_log")`).Scan(&e.Models, &e.Units, &e.Runs, &e.Audit)
	if err != nil {
		return fmt.Errorf("sqlite: copy in: %w", err)
	}
	if e.Models+e.Units+e.Runs+e.Audit > 0 {
		return &e
	}
	r, err := readRetirement(w.ctx, w.tx)
	if err != nil {
		return err
	}
	if r != nil {
		return &state.RetiredError{Action: "store copy", Retirement: *r}
	}
	return nil
}

func (w *copyIn) exec(what, query string, args ...any) error {
	if _, err := w.tx.ExecContext(w.ctx, query, args...); err != nil {
		return fmt.Errorf("sqlite: copy in: %s: %w", what, err)
	}
	return nil
}

func (w *copyIn) Identity(id string, createdAt time.Time) error {
	if w.snapshot != nil {
		return nil
	}
	return w.exec("identity", `UPDATE "store_identity" SET "id" = ?, "created_at" = ?`, id, micros(createdAt))
}

func (w *copyIn) Model(m state.ModelRecord) error {
	var id int64
	err := w.tx.QueryRowContext(w.ctx, `INSERT INTO "models" ("env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval", "timezone",
		"start", "end", "definition", "content_hash", "registered_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING "id"`,
		m.Env, m.Name, m.TaskID, m.Pipeline, m.Temporality, m.Flexibility, m.Interval, m.Timezone,
		nullMicrosOf(m.Start), nullMicros(m.End), definition(m.Definition), m.ContentHash, micros(m.RegisteredAt)).Scan(&id)
	if err != nil {
		return fmt.Errorf("sqlite: copy in: model %s: %w", m.Name, err)
	}
	w.models[[2]string{m.Env, m.Name}] = modelRef{id: id, env: m.Env, name: m.Name, flexible: m.Flexibility == "flex"}
	return nil
}

func (w *copyIn) Edge(e state.EdgeRecord) error {
	return w.exec("edge", `INSERT INTO "edges" ("env", "task", "depends_on", "type", "implicit", "cross") VALUES (?, ?, ?, ?, ?, ?)`,
		e.Env, e.Task, e.DependsOn, e.Type, e.Implicit, e.Cross)
}

// model is the copied row of (env, name); a row the source holds for a
// model it does not is a corrupt source, and refused.
func (w *copyIn) model(env, name string) (modelRef, error) {
	m, ok := w.models[[2]string{env, name}]
	if !ok {
		return m, fmt.Errorf("sqlite: copy in: a row of model %s%s, which the source does not register", name, map[bool]string{true: "", false: " in " + env}[env == ""])
	}
	return m, nil
}

func (w *copyIn) Definition(d state.DefinitionRecord) error {
	m, err := w.model(d.Env, d.Model)
	if err != nil {
		return err
	}
	return w.exec("definition", `INSERT INTO "definitions" ("model_id", "fingerprint", "definition", "first_seen") VALUES (?, ?, ?, ?)`,
		m.id, d.Fingerprint, definition(d.Definition), micros(d.FirstSeen))
}

func (w *copyIn) Run(r state.Run) error {
	models, err := json.Marshal(nonNil(r.Models))
	if err != nil {
		return err
	}
	var since, until sql.NullInt64
	if !r.Window.IsZero() {
		since, until = nullMicrosOf(r.Window.Since), nullMicrosOf(r.Window.Until)
	}
	return w.exec("run", `INSERT INTO "runs" ("id", "env", "pipeline", "models", "since", "until", "state_mode", "status", "actor", "started_at", "finished_at", "heartbeat_at")
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Env, r.Pipeline, string(models), since, until, r.StateMode, string(r.Status), r.Actor, micros(r.StartedAt), nullMicros(r.FinishedAt), nullMicrosOf(r.Heartbeat))
}

func (w *copyIn) TaskRun(e state.TaskRunEntry) error {
	return w.exec("task run", `INSERT INTO "task_runs" ("run_id", "task_id", "attempt", "status", "started_at", "finished_at", "rows_written", "target_count", "error")
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.RunID, e.TaskID, e.Attempt, e.Status, micros(e.StartedAt), nullMicros(e.FinishedAt), nullInt(e.RowsWritten), nullInt(e.TargetCount), e.Error)
}

func (w *copyIn) Unit(u state.Unit) error {
	m, err := w.model(u.Env, u.Model)
	if err != nil {
		return err
	}
	var fingerprint sql.NullString
	if u.Fingerprint != "" {
		fingerprint = sql.NullString{String: u.Fingerprint, Valid: true}
	}
	_, err = w.unit.ExecContext(w.ctx, u.ID, m.id, micros(u.Window.Since), micros(u.Window.Until), string(u.Status), nullMicros(u.AppliedAt),
		u.BlockedReason, u.Error, u.Attempts, u.RunID, u.LeaseOwner, nullMicros(u.LeaseUntil), u.Fence, nullInt(u.RowsWritten),
		micros(u.UpdatedAt), nullMicros(u.NotBefore), fingerprint)
	if err != nil {
		return fmt.Errorf("sqlite: copy in: unit %d of %s: %w", u.ID, u.Model, err)
	}
	if u.Status != state.Applied || u.Window.IsZero() {
		return nil
	}
	if m.id == w.islandOf && !u.Window.Since.After(w.island.Until) {
		if u.Window.Until.After(w.island.Until) {
			w.island.Until = u.Window.Until
		}
		return nil
	}
	if err := w.flushIsland(); err != nil {
		return err
	}
	w.islandOf, w.island = m.id, u.Window
	return nil
}

// flushIsland writes the island being grown, if any.
func (w *copyIn) flushIsland() error {
	if w.islandOf == 0 {
		return nil
	}
	id := w.islandOf
	w.islandOf = 0
	return w.exec("coverage", `INSERT INTO "coverage" ("model_id", "since", "until") VALUES (?, ?, ?)`,
		id, micros(w.island.Since), micros(w.island.Until))
}

func (w *copyIn) Attempt(unitID int64, a state.Attempt) error {
	var run sql.NullInt64
	if a.RunID != 0 {
		run = sql.NullInt64{Int64: a.RunID, Valid: true}
	}
	return w.exec("attempt", `INSERT INTO "attempts" ("unit_id", "number", "try", "error", "at", "run_id") VALUES (?, ?, ?, ?, ?, ?)`,
		unitID, a.Number, a.Try, a.Error, micros(a.At), run)
}

func (w *copyIn) Audit(e state.AuditEntry) error {
	args := []byte("{}")
	if e.Args != nil {
		var err error
		if args, err = json.Marshal(e.Args); err != nil {
			return err
		}
	}
	return w.exec("audit", `INSERT INTO "audit_log" ("id", "at", "actor", "action", "args", "outcome") VALUES (?, ?, ?, ?, ?, ?)`,
		e.ID, micros(e.At), e.Actor, e.Action, string(args), e.Outcome)
}

// Commit writes what the store keeps beside the units, as the migrations
// that introduced each backfilled it, retires a snapshot, and commits.
// An audit row or unit copied with its id leaves AUTOINCREMENT's counter
// past it already: SQLite keeps sqlite_sequence at the largest id
// inserted.
func (w *copyIn) Commit(ctx context.Context) error {
	w.unit.Close()
	if err := w.flushIsland(); err != nil {
		return errors.Join(err, rollback(w.tx))
	}
	for _, q := range []string{
		`INSERT INTO "applied_counts" ("model_id", "fingerprint", "units")
		 SELECT "model_id", coalesce("fingerprint", ''), count(*) FROM "units" WHERE "status" = 'applied' GROUP BY "model_id", coalesce("fingerprint", '')`,
		`INSERT INTO "status_counts" ("model_id", "status", "units") SELECT "model_id", "status", count(*) FROM "units" GROUP BY "model_id", "status"`,
		`UPDATE "models" SET "max_unit" = coalesce((SELECT max("until" - "since") FROM "units" WHERE "model_id" = "models"."id"), 0)`,
	} {
		if err := w.exec("counts", q); err != nil {
			return errors.Join(err, rollback(w.tx))
		}
	}
	if w.snapshot != nil {
		if err := retire(ctx, w.tx, *w.snapshot); err != nil {
			return errors.Join(err, rollback(w.tx))
		}
	}
	if err := w.tx.Commit(); err != nil {
		return fullDisk(w.s.path, fmt.Errorf("sqlite: copy in: commit: %w", err))
	}
	w.s.hub.signal()
	return nil
}

func (w *copyIn) Rollback() error {
	w.unit.Close()
	return rollback(w.tx)
}
