package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bollhav/bollhav/state"
)

var _ state.StoreCopier = (*Store)(nil)

// CopyOut implements state.StoreCopier. A snapshot reads in one read
// transaction (WAL gives it one snapshot while writers go on); a move reads
// in a write transaction (BEGIN IMMEDIATE), so no other writer commits
// between the first read and the retirement written at its end.
func (s *Store) CopyOut(ctx context.Context, w state.CopyWriter, opts state.CopyOutOptions) error {
	db := s.r
	if opts.Retire != nil {
		db = s.w
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return errors.Join(fmt.Errorf("sqlite: copy: begin: %w", err), w.Rollback())
	}
	defer rollback(tx)
	if err := copyRows(ctx, tx, w, opts); err != nil {
		return errors.Join(err, w.Rollback())
	}
	if err := w.Commit(ctx); err != nil {
		return err
	}
	if opts.Retire == nil {
		return nil
	}
	if err := retire(ctx, tx, *opts.Retire); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: retire: commit: %w", err)
	}
	s.hub.signal()
	return nil
}

// copyRows writes every row the copy moves to w, in CopyWriter's order.
func copyRows(ctx context.Context, tx *sql.Tx, w state.CopyWriter, opts state.CopyOutOptions) error {
	if opts.Retire != nil {
		if err := refuseMove(ctx, tx); err != nil {
			return err
		}
	}
	var id string
	var created int64
	if err := tx.QueryRowContext(ctx, `SELECT "id", "created_at" FROM "store_identity"`).Scan(&id, &created); err != nil {
		return fmt.Errorf("sqlite: copy: identity: %w", err)
	}
	if err := w.Identity(id, fromMicros(created)); err != nil {
		return err
	}
	var models []modelRef
	err := eachRow(ctx, tx, "models", `SELECT "id", "flexibility", "max_unit", `+modelColumns+` FROM "models" ORDER BY "env", "name"`, nil, func(sc rowScanner) error {
		var ref modelRef
		var flex string
		m, err := scanModel(prefixScanner{sc, []any{&ref.id, &flex, &ref.maxUnit}})
		if err != nil {
			return err
		}
		ref.env, ref.name, ref.flexible = m.Env, m.Name, flex == "flex"
		models = append(models, ref)
		return w.Model(m)
	})
	if err != nil {
		return err
	}
	steps := []struct {
		what, query string
		row         func(rowScanner) error
	}{
		{"edges", `SELECT "env", "task", "depends_on", "type", "implicit", "cross" FROM "edges" ORDER BY "env", "task", "depends_on", "type"`, func(sc rowScanner) error {
			var e state.EdgeRecord
			if err := sc.Scan(&e.Env, &e.Task, &e.DependsOn, &e.Type, &e.Implicit, &e.Cross); err != nil {
				return err
			}
			return w.Edge(e)
		}},
		{"definitions", `SELECT m."env", m."name", d."fingerprint", d."definition", d."first_seen"
			FROM "definitions" d JOIN "models" m ON m."id" = d."model_id" ORDER BY m."env", m."name", d."first_seen"`, func(sc rowScanner) error {
			var d state.DefinitionRecord
			var first int64
			if err := sc.Scan(&d.Env, &d.Model, &d.Fingerprint, &d.Definition, &first); err != nil {
				return err
			}
			d.FirstSeen = fromMicros(first)
			return w.Definition(d)
		}},
		{"runs", `SELECT ` + runColumns + ` FROM "runs" ORDER BY "id"`, func(sc rowScanner) error {
			r, err := scanRun(sc)
			if err != nil {
				return err
			}
			return w.Run(r)
		}},
		{"task runs", `SELECT "run_id", "task_id", "attempt", "status", "started_at", "finished_at", "rows_written", "target_count", "error"
			FROM "task_runs" ORDER BY "run_id", "task_id", "attempt"`, func(sc rowScanner) error {
			e, err := scanTaskRun(sc)
			if err != nil {
				return err
			}
			return w.TaskRun(e)
		}},
	}
	for _, st := range steps {
		if err := eachRow(ctx, tx, st.what, st.query, nil, st.row); err != nil {
			return err
		}
	}
	if err := copyUnits(ctx, tx, w, models, opts.Progress); err != nil {
		return err
	}
	err = eachRow(ctx, tx, "attempts", `SELECT "unit_id", "number", "try", "error", "at", "run_id" FROM "attempts" ORDER BY "unit_id", "number"`, nil, func(sc rowScanner) error {
		var unit, at int64
		var a state.Attempt
		var run sql.NullInt64
		if err := sc.Scan(&unit, &a.Number, &a.Try, &a.Error, &at, &run); err != nil {
			return err
		}
		a.At, a.RunID = fromMicros(at), run.Int64
		return w.Attempt(unit, a)
	})
	if err != nil {
		return err
	}
	return eachRow(ctx, tx, "audit log", `SELECT "id", "at", "actor", "action", "args", "outcome" FROM "audit_log" ORDER BY "id"`, nil, func(sc rowScanner) error {
		var e state.AuditEntry
		var at int64
		var args string
		if err := sc.Scan(&e.ID, &at, &e.Actor, &e.Action, &args, &e.Outcome); err != nil {
			return err
		}
		e.At = fromMicros(at)
		if err := json.Unmarshal([]byte(args), &e.Args); err != nil {
			return fmt.Errorf("audit entry %d: args: %w", e.ID, err)
		}
		return w.Audit(e)
	})
}

// copyUnits writes every model's units, by model and then window start
// (what lets a writer rebuild coverage in one pass), reporting progress
// every 10,000 units and at the end.
func copyUnits(ctx context.Context, tx *sql.Tx, w state.CopyWriter, models []modelRef, progress func(done, total int64)) error {
	var total int64
	if progress != nil {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM "units"`).Scan(&total); err != nil {
			return fmt.Errorf("sqlite: copy: count units: %w", err)
		}
	}
	p := state.NewCopyProgress(progress, total)
	for _, m := range models {
		err := eachRow(ctx, tx, "units", `SELECT `+unitColumns+` FROM "units" WHERE "model_id" = ? ORDER BY "since"`, []any{m.id}, func(sc rowScanner) error {
			u, err := scanUnit(sc, m)
			if err != nil {
				return err
			}
			p.Add()
			return w.Unit(u)
		})
		if err != nil {
			return err
		}
	}
	p.Finish()
	return nil
}

// refuseMove refuses to move a store already retired, or one with units
// running: their workers would finish into a store that refuses them.
func refuseMove(ctx context.Context, tx *sql.Tx) error {
	r, err := readRetirement(ctx, tx)
	if err != nil {
		return err
	}
	var running int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM "units" WHERE "status" = 'running'`).Scan(&running); err != nil {
		return fmt.Errorf("sqlite: copy: running units: %w", err)
	}
	return state.CheckMove(r, running)
}

// eachRow runs a read on q and hands each row to fn, streaming: a copy of
// a million units never holds them all.
func eachRow(ctx context.Context, q querier, what, query string, args []any, fn func(rowScanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("sqlite: copy: %s: %w", what, err)
	}
	defer rows.Close()
	if err := state.Stream(rows, func(r *sql.Rows) error { return fn(r) }); err != nil {
		return fmt.Errorf("sqlite: copy: %s: %w", what, err)
	}
	return nil
}

// prefixScanner scans a row whose first columns go to pre and the rest to
// what the wrapped scan asks for: a scan function reused on a wider row.
type prefixScanner struct {
	sc  rowScanner
	pre []any
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.sc.Scan(append(p.pre[:len(p.pre):len(p.pre)], dest...)...)
}
