package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

var _ state.StoreCopier = (*Store)(nil)

// copyIdle bounds how long a copy's transactions may sit idle: each side
// waits while the other works (the source while the target rebuilds its
// counts at the end, the target while the source reads), which at millions
// of units takes longer than the store's usual 30 s.
const copyIdle = "10min"

// copiedTables are the tables a copy reads and a retirement refuses writes
// to (retire.go): all the state a run, a worker, an apply or a mark
// changes. The counts, coverage and change feed are written only beside
// them.
var copiedTables = []string{"models", "edges", "definitions", "units", "attempts", "runs", "task_runs", "audit", "data_loads"}

// CopyOut implements state.StoreCopier. A snapshot reads in one
// REPEATABLE READ, READ ONLY transaction while writers go on. A move first
// locks every copied table IN EXCLUSIVE MODE, which lets readers (the UI,
// status) on and holds every writer off until the retirement commits, so
// nothing written after the read is lost to the move.
func (s *Store) CopyOut(ctx context.Context, w state.CopyWriter, opts state.CopyOutOptions) error {
	begin := "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	if opts.Retire != nil {
		begin = "BEGIN"
	}
	if s.begin.BeginQuery != "" {
		begin += "; SET LOCAL idle_in_transaction_session_timeout = '" + copyIdle + "'"
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: begin})
	if err != nil {
		return errors.Join(fmt.Errorf("postgres: copy: begin: %w", err), w.Rollback())
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := s.copyRows(ctx, tx, w, opts); err != nil {
		return errors.Join(err, w.Rollback())
	}
	if err := w.Commit(ctx); err != nil {
		return err
	}
	if opts.Retire == nil {
		return nil
	}
	if err := s.retire(ctx, tx, *opts.Retire); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: retire: commit: %w", err)
	}
	return nil
}

// copyRows writes every row the copy moves to w, in CopyWriter's order.
func (s *Store) copyRows(ctx context.Context, tx pgx.Tx, w state.CopyWriter, opts state.CopyOutOptions) error {
	if opts.Retire != nil {
		if err := s.lockForMove(ctx, tx); err != nil {
			return err
		}
	}
	var ident struct {
		id      string
		created pgtype.Timestamptz
	}
	if err := tx.QueryRow(ctx, s.sql(`SELECT id, created_at FROM {schema}.store_identity`)).Scan(&ident.id, &ident.created); err != nil {
		return fmt.Errorf("postgres: copy: identity: %w", err)
	}
	if err := w.Identity(ident.id, timeOf(ident.created)); err != nil {
		return err
	}
	steps := []struct {
		what, query string
		row         func(pgx.CollectableRow) error
	}{
		{"models", `SELECT ` + modelColumns + ` FROM {schema}.models ORDER BY env, name`, func(r pgx.CollectableRow) error {
			m, err := scanModel(r)
			if err != nil {
				return err
			}
			return w.Model(m)
		}},
		{"edges", `SELECT env, task, depends_on, type, implicit, cross_pipeline FROM {schema}.edges ORDER BY env, task, depends_on, type`, func(r pgx.CollectableRow) error {
			var e state.EdgeRecord
			if err := r.Scan(&e.Env, &e.Task, &e.DependsOn, &e.Type, &e.Implicit, &e.Cross); err != nil {
				return err
			}
			return w.Edge(e)
		}},
		{"definitions", `SELECT env, model, fingerprint, definition, first_seen FROM {schema}.definitions ORDER BY env, model, first_seen`, func(r pgx.CollectableRow) error {
			var d state.DefinitionRecord
			if err := r.Scan(&d.Env, &d.Model, &d.Fingerprint, &d.Definition, &d.FirstSeen); err != nil {
				return err
			}
			d.FirstSeen = d.FirstSeen.UTC()
			return w.Definition(d)
		}},
		{"runs", `SELECT ` + runColumns + ` FROM {schema}.runs ORDER BY id`, func(r pgx.CollectableRow) error {
			run, err := scanRun(r)
			if err != nil {
				return err
			}
			return w.Run(run)
		}},
		{"task runs", `SELECT run_id, task_id, attempt, status, started_at, finished_at, rows_written, target_count, error
			FROM {schema}.task_runs ORDER BY run_id, task_id, attempt`, func(r pgx.CollectableRow) error {
			e, err := scanTaskRun(r)
			if err != nil {
				return err
			}
			return w.TaskRun(e)
		}},
	}
	for _, st := range steps {
		if err := eachRow(ctx, tx, st.what, s.sql(st.query), st.row); err != nil {
			return err
		}
	}
	if err := s.copyUnits(ctx, tx, w, opts.Progress); err != nil {
		return err
	}
	err := eachRow(ctx, tx, "attempts", s.sql(`SELECT unit_id, number, try, error, at, coalesce(run_id, 0) FROM {schema}.attempts ORDER BY unit_id, number`), func(r pgx.CollectableRow) error {
		var unit int64
		var a state.Attempt
		if err := r.Scan(&unit, &a.Number, &a.Try, &a.Error, &a.At, &a.RunID); err != nil {
			return err
		}
		a.At = a.At.UTC()
		return w.Attempt(unit, a)
	})
	if err != nil {
		return err
	}
	return eachRow(ctx, tx, "audit log", s.sql(`SELECT id, at, actor, action, args, outcome FROM {schema}.audit ORDER BY id`), func(r pgx.CollectableRow) error {
		var e state.AuditEntry
		if err := r.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.Args, &e.Outcome); err != nil {
			return err
		}
		e.At = e.At.UTC()
		return w.Audit(e)
	})
}

// copyUnits writes every unit, by environment, model and window start
// (what lets a writer rebuild coverage in one pass), reporting progress
// every 10,000 units and at the end.
func (s *Store) copyUnits(ctx context.Context, tx pgx.Tx, w state.CopyWriter, progress func(done, total int64)) error {
	var total int64
	if progress != nil {
		if err := tx.QueryRow(ctx, s.sql(`SELECT count(*) FROM {schema}.units`)).Scan(&total); err != nil {
			return fmt.Errorf("postgres: copy: count units: %w", err)
		}
	}
	p := state.NewCopyProgress(progress, total)
	sc := newUnitScanner()
	err := eachRow(ctx, tx, "units", s.sql(`SELECT `+unitColumns+` FROM {schema}.units u ORDER BY u.env, u.model, u.since NULLS FIRST`), func(r pgx.CollectableRow) error {
		u, err := sc.scan(r)
		if err != nil {
			return err
		}
		p.Add()
		return w.Unit(u)
	})
	if err == nil {
		p.Finish()
	}
	return err
}

// lockForMove locks every copied table IN EXCLUSIVE MODE, which lets
// readers on and holds writers off until tx ends, and then refuses a move
// refuseMove refuses.
func (s *Store) lockForMove(ctx context.Context, tx pgx.Tx) error {
	tables := make([]string, len(copiedTables))
	for i, t := range copiedTables {
		tables[i] = "{schema}." + t
	}
	if _, err := tx.Exec(ctx, s.sql(`LOCK TABLE `+strings.Join(tables, ", ")+` IN EXCLUSIVE MODE`)); err != nil {
		return fmt.Errorf("postgres: lock for a move: %w", err)
	}
	return s.refuseMove(ctx, tx)
}

// refuseMove refuses to move a store already retired, or one with units
// running: their workers would finish into a store that refuses them.
func (s *Store) refuseMove(ctx context.Context, q querier) error {
	r, err := s.readRetirement(ctx, q)
	if err != nil {
		return err
	}
	var running int64
	if err := q.QueryRow(ctx, s.sql(`SELECT count(*) FROM {schema}.units WHERE status = 'running'`)).Scan(&running); err != nil {
		return fmt.Errorf("postgres: copy: running units: %w", err)
	}
	return state.CheckMove(r, running)
}

// eachRow runs a read in tx and hands each row to fn, streaming: a copy of
// a million units never holds them all.
func eachRow(ctx context.Context, tx pgx.Tx, what, query string, fn func(pgx.CollectableRow) error) error {
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return fmt.Errorf("postgres: copy: %s: %w", what, err)
	}
	defer rows.Close()
	if err := state.Stream(rows, func(r pgx.Rows) error { return fn(r) }); err != nil {
		return fmt.Errorf("postgres: copy: %s: %w", what, err)
	}
	return nil
}
