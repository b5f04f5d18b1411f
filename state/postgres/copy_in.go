package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

// copyBatch is how many rows of one table a copy buffers before it sends
// them with one COPY: large enough that a million units take a hundred
// round trips, small enough that the buffer stays a few megabytes.
const copyBatch = 10_000

// CopyIn implements state.StoreCopier: one transaction, its rows sent
// with COPY, which writes the ids a unit, run and audit row had in the
// source as they are (COPY writes identity columns as given).
func (s *Store) CopyIn(ctx context.Context, opts state.CopyInOptions) (state.CopyWriter, error) {
	begin := "BEGIN"
	if s.begin.BeginQuery != "" {
		begin += "; SET LOCAL idle_in_transaction_session_timeout = '" + copyIdle + "'"
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: begin})
	if err != nil {
		return nil, fmt.Errorf("postgres: copy in: begin: %w", err)
	}
	w := &copyIn{s: s, ctx: ctx, tx: tx, snapshot: opts.Snapshot, flexible: map[[2]string]bool{}, batches: map[string]*copyRows{}}
	if err := w.checkEmpty(); err != nil {
		return nil, errors.Join(err, tx.Rollback(context.WithoutCancel(ctx)))
	}
	return w, nil
}

// copyRows is one table's buffered rows.
type copyRows struct {
	columns []string
	rows    [][]any
}

// copyIn is the PostgreSQL CopyWriter.
type copyIn struct {
	s        *Store
	ctx      context.Context
	tx       pgx.Tx
	snapshot *state.Retirement
	// flexible says, by (env, name), whether a copied model is flexible:
	// a unit row carries it for the overlap constraint.
	flexible map[[2]string]bool
	batches  map[string]*copyRows
	// order is the tables in the order their first row came, which is
	// the order they are flushed in: a task run after its run.
	order []string
}

var _ state.CopyWriter = (*copyIn)(nil)

func (w *copyIn) checkEmpty() error {
	var e state.NotEmptyError
	err := w.tx.QueryRow(w.ctx, w.s.sql(`SELECT (SELECT count(*) FROM {schema}.models), (SELECT count(*) FROM {schema}.units),
		(SELECT count(*) FROM {schema}.runs), (SELECT count(*) FROM {schema}.audit)`)).Scan(&e.Models, &e.Units, &e.Runs, &e.Audit)
	if err != nil {
		return fmt.Errorf("postgres: copy in: %w", err)
	}
	if e.Models+e.Units+e.Runs+e.Audit > 0 {
		return &e
	}
	r, err := w.s.readRetirement(w.ctx, w.tx)
	if err != nil {
		return err
	}
	if r != nil {
		return &state.RetiredError{Action: "store copy", Retirement: *r}
	}
	return nil
}

// add buffers one row of table, sending the buffer when it is full.
func (w *copyIn) add(table string, columns []string, row ...any) error {
	b := w.batches[table]
	if b == nil {
		b = &copyRows{columns: columns}
		w.batches[table] = b
		w.order = append(w.order, table)
	}
	b.rows = append(b.rows, row)
	if len(b.rows) < copyBatch {
		return nil
	}
	return w.flush(table)
}

// flush sends table's buffered rows with one COPY. Rows of the tables
// before it in order go first, so a row never arrives before one its
// foreign key names.
func (w *copyIn) flush(table string) error {
	for _, t := range w.order {
		b := w.batches[t]
		if len(b.rows) > 0 {
			if _, err := w.tx.CopyFrom(w.ctx, pgx.Identifier{w.s.schema, t}, b.columns, pgx.CopyFromRows(b.rows)); err != nil {
				return fmt.Errorf("postgres: copy in: %s: %w", t, err)
			}
			b.rows = b.rows[:0]
		}
		if t == table {
			break
		}
	}
	return nil
}

func (w *copyIn) Identity(id string, createdAt time.Time) error {
	if w.snapshot != nil {
		return nil
	}
	if _, err := w.tx.Exec(w.ctx, w.s.sql(`UPDATE {schema}.store_identity SET id = $1, created_at = $2`), id, createdAt); err != nil {
		return fmt.Errorf("postgres: copy in: identity: %w", err)
	}
	return nil
}

var modelCopyColumns = []string{"env", "name", "task_id", "pipeline", "temporality", "flexibility", "grain", "timezone",
	"start_at", "end_at", "definition", "content_hash", "registered_at"}

func (w *copyIn) Model(m state.ModelRecord) error {
	w.flexible[[2]string{m.Env, m.Name}] = m.Flexibility == "flex"
	var def any
	if len(m.Definition) > 0 {
		def = string(m.Definition)
	}
	return w.add("models", modelCopyColumns, m.Env, m.Name, int32(m.TaskID), m.Pipeline, m.Temporality, m.Flexibility, m.Interval,
		m.Timezone, nullTime(m.Start), nullTimePtr(m.End), def, m.ContentHash, m.RegisteredAt)
}

func (w *copyIn) Edge(e state.EdgeRecord) error {
	return w.add("edges", []string{"env", "task", "depends_on", "type", "implicit", "cross_pipeline"},
		e.Env, e.Task, e.DependsOn, e.Type, e.Implicit, e.Cross)
}

func (w *copyIn) Definition(d state.DefinitionRecord) error {
	def := "{}"
	if len(d.Definition) > 0 {
		def = string(d.Definition)
	}
	return w.add("definitions", []string{"env", "model", "fingerprint", "definition", "first_seen"},
		d.Env, d.Model, d.Fingerprint, def, d.FirstSeen)
}

func (w *copyIn) Run(r state.Run) error {
	models := r.Models
	if models == nil {
		models = []string{}
	}
	return w.add("runs", []string{"id", "env", "pipeline", "models", "since", "until", "state_mode", "status", "actor", "started_at", "finished_at", "heartbeat_at"},
		r.ID, r.Env, r.Pipeline, models, nullTime(r.Window.Since), nullTime(r.Window.Until), r.StateMode, string(r.Status), r.Actor,
		r.StartedAt, nullTimePtr(r.FinishedAt), nullTime(r.Heartbeat))
}

func (w *copyIn) TaskRun(e state.TaskRunEntry) error {
	return w.add("task_runs", []string{"run_id", "task_id", "attempt", "status", "started_at", "finished_at", "rows_written", "target_count", "error"},
		e.RunID, int32(e.TaskID), int32(e.Attempt), e.Status, e.StartedAt, nullTimePtr(e.FinishedAt), e.RowsWritten, e.TargetCount, e.Error)
}

var unitCopyColumns = []string{"id", "env", "model", "flexible", "since", "until", "status", "applied_at", "blocked_reason", "error",
	"attempts", "run_id", "lease_owner", "lease_until", "fence", "rows_written", "updated_at", "not_before", "fingerprint"}

func (w *copyIn) Unit(u state.Unit) error {
	flexible, ok := w.flexible[[2]string{u.Env, u.Model}]
	if !ok {
		return fmt.Errorf("postgres: copy in: unit %d of model %s, which the source does not register", u.ID, u.Model)
	}
	var fingerprint any
	if u.Fingerprint != "" {
		fingerprint = u.Fingerprint
	}
	return w.add("units", unitCopyColumns, u.ID, u.Env, u.Model, flexible, nullTime(u.Window.Since), nullTime(u.Window.Until), string(u.Status),
		nullTimePtr(u.AppliedAt), u.BlockedReason, u.Error, int32(u.Attempts), u.RunID, u.LeaseOwner, nullTimePtr(u.LeaseUntil), u.Fence,
		u.RowsWritten, u.UpdatedAt, nullTimePtr(u.NotBefore), fingerprint)
}

func (w *copyIn) Attempt(unitID int64, a state.Attempt) error {
	var run any
	if a.RunID != 0 {
		run = a.RunID
	}
	return w.add("attempts", []string{"unit_id", "number", "try", "error", "at", "run_id"}, unitID, int32(a.Number), int32(a.Try), a.Error, a.At, run)
}

func (w *copyIn) Audit(e state.AuditEntry) error {
	var args any // NULL, not the JSON null, when there are none, as Audit writes it
	if len(e.Args) > 0 {
		args = e.Args
	}
	return w.add("audit", []string{"id", "at", "actor", "action", "args", "outcome"}, e.ID, e.At, e.Actor, e.Action, args, e.Outcome)
}

// Commit sends what is buffered, rebuilds what the store keeps beside the
// units as the migrations that introduced each backfilled it, moves the
// id sequences and the fence sequence past the copied values (a claim in
// the new store must fence above every claim the old one made: a
// warehouse ledger compares them), retires a snapshot, and commits.
func (w *copyIn) Commit(ctx context.Context) error {
	rollback := func(err error) error { return errors.Join(err, w.tx.Rollback(context.WithoutCancel(ctx))) }
	if len(w.order) > 0 {
		if err := w.flush(w.order[len(w.order)-1]); err != nil {
			return rollback(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO {schema}.applied_counts (env, model, fingerprint, units)
		 SELECT env, model, coalesce(fingerprint, ''), count(*) FROM {schema}.units WHERE status = 'applied' GROUP BY env, model, coalesce(fingerprint, '')`,
		`INSERT INTO {schema}.status_counts (env, model, status, units, newest)
		 SELECT env, model, status, count(*), CASE WHEN status = 'applied' THEN max(applied_at) END FROM {schema}.units GROUP BY env, model, status`,
		`INSERT INTO {schema}.coverage (env, model, since, until)
		 SELECT a.env, a.model, lower(r), upper(r)
		 FROM (SELECT env, model, range_agg(span) AS m FROM {schema}.units WHERE status = 'applied' AND span IS NOT NULL GROUP BY env, model) a, unnest(a.m) AS r`,
		`UPDATE {schema}.models m SET longest_unit = l.micros
		 FROM (SELECT env, model, (max(extract(epoch FROM until) - extract(epoch FROM since)) * 1000000)::bigint AS micros
		       FROM {schema}.units WHERE since IS NOT NULL GROUP BY env, model) l
		 WHERE m.env = l.env AND m.name = l.model`,
		`SELECT setval(pg_get_serial_sequence('{schema}.units', 'id'), coalesce(max(id), 1), max(id) IS NOT NULL) FROM {schema}.units`,
		`SELECT setval(pg_get_serial_sequence('{schema}.runs', 'id'), coalesce(max(id), 1), max(id) IS NOT NULL) FROM {schema}.runs`,
		`SELECT setval(pg_get_serial_sequence('{schema}.audit', 'id'), coalesce(max(id), 1), max(id) IS NOT NULL) FROM {schema}.audit`,
		`SELECT setval('{schema}.fences', greatest(max(fence), 1), max(fence) > 0) FROM {schema}.units`,
	} {
		if _, err := w.tx.Exec(ctx, w.s.sql(q)); err != nil {
			return rollback(fmt.Errorf("postgres: copy in: rebuild: %w", err))
		}
	}
	if w.snapshot != nil {
		if err := w.s.retire(ctx, w.tx, *w.snapshot); err != nil {
			return rollback(err)
		}
	}
	if err := w.tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: copy in: commit: %w", err)
	}
	return nil
}

func (w *copyIn) Rollback() error {
	err := w.tx.Rollback(context.WithoutCancel(w.ctx))
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}
