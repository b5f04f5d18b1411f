package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

var _ state.DataStore = (*Store)(nil)

// QuoteTable implements state.DataStore: each part quoted on its own.
func (s *Store) QuoteTable(parts ...string) (string, error) {
	if len(parts) == 0 || len(parts) > 3 {
		return "", fmt.Errorf("%w: a table name has one to three parts, got %d", state.ErrDataJob, len(parts))
	}
	for _, p := range parts {
		if p == "" {
			return "", fmt.Errorf("%w: empty part in table name %q", state.ErrDataJob, strings.Join(parts, "."))
		}
	}
	return pgx.Identifier(parts).Sanitize(), nil
}

// RunData implements state.DataStore. The job and the unit's transition
// share one transaction, whose time zone is UTC so that :since and :until
// compare with date and timestamp columns the same on every server.
func (s *Store) RunData(ctx context.Context, job state.DataJob, claim *state.Claim, at time.Time) (state.DataResult, error) {
	if err := job.Check(at); err != nil {
		return state.DataResult{}, err
	}
	target, err := s.dataTarget(job)
	if err != nil {
		return state.DataResult{}, err
	}
	var res state.DataResult
	err = s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		if _, err := tx.Exec(ctx, `SET LOCAL TIME ZONE 'UTC'`); err != nil {
			return nil, err
		}
		var err error
		res, err = s.runJob(ctx, tx, job, target, at)
		if err != nil || claim == nil {
			return nil, err
		}
		rows := res.Rows
		o := state.Outcome{Status: state.Applied, At: at, RowsWritten: &rows, Fingerprint: job.Fingerprint}
		v, err := columnsOf(*claim, o)
		if err != nil {
			return nil, err
		}
		return s.complete(ctx, tx, *claim, o, v)
	})
	return res, err
}

// dataTarget quotes the job's target, refusing one inside the store's own
// schema: model data must never overwrite state.
func (s *Store) dataTarget(job state.DataJob) (string, error) {
	if job.Kind == state.DataStatements && len(job.Target) == 0 {
		return "", nil
	}
	if len(job.Target) >= 2 && job.Target[len(job.Target)-2] == s.schema {
		return "", fmt.Errorf("%w: target %s is in the schema of the state store (%s); give the model another schema",
			state.ErrDataJob, strings.Join(job.Target, "."), s.schema)
	}
	return s.QuoteTable(job.Target...)
}

func (s *Store) runJob(ctx context.Context, tx pgx.Tx, job state.DataJob, target string, at time.Time) (state.DataResult, error) {
	switch job.Kind {
	case state.DataStatements:
		return s.runStatements(ctx, tx, job)
	case state.DataQuery:
		return s.runQueryWrite(ctx, tx, job, target)
	case state.DataView:
		if err := s.ensureSchema(ctx, tx, job.Target); err != nil {
			return state.DataResult{}, err
		}
		_, err := tx.Exec(ctx, "CREATE OR REPLACE VIEW "+target+" AS "+job.Query)
		return state.DataResult{}, err
	case state.DataTable:
		return s.loadTable(ctx, tx, job, target, at)
	}
	return state.DataResult{}, fmt.Errorf("%w: unknown kind %d", state.ErrDataJob, job.Kind)
}

// bind rewrites :since and :until into positional parameters and returns
// the arguments for them: the window's bounds, or NULL for a timeless unit.
func bind(sql string, w state.Window) (string, []any) {
	since, until := windowBounds(w)
	pos := map[string]int{}
	var args []any
	out, _ := state.BindNames(sql, func(name string) string {
		// Number the names in the order they first appear, so a
		// statement that uses only one of them binds exactly one.
		if _, ok := pos[name]; !ok {
			pos[name] = len(args) + 1
			if name == "since" {
				args = append(args, since)
			} else {
				args = append(args, until)
			}
		}
		return fmt.Sprintf("$%d::timestamptz", pos[name])
	})
	return out, args
}

// bindNull replaces :since and :until with typed NULLs, for statements
// that cannot take parameters (CREATE TABLE AS) and only need the types.
func bindNull(sql string) string {
	out, _ := state.BindNames(sql, func(string) string { return "NULL::timestamptz" })
	return out
}

func (s *Store) runStatements(ctx context.Context, tx pgx.Tx, job state.DataJob) (state.DataResult, error) {
	var res state.DataResult
	if _, err := tx.Exec(ctx, `SAVEPOINT `+state.UnitSavepoint); err != nil {
		return res, err
	}
	for i, stmt := range job.Statements {
		q, args := bind(stmt, job.Window)
		tag, err := tx.Exec(ctx, q, args...)
		if err != nil {
			return res, state.StatementFailed(i, err)
		}
		res.Rows = tag.RowsAffected()
	}
	if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT `+state.UnitSavepoint); err != nil {
		// The server's answer that no transaction or savepoint is open
		// (25P01 after a COMMIT, 3B001 when one was rolled back) means a
		// statement ended the transaction; a connection lost at the
		// release is just that.
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == "25P01" || pgErr.Code == "3B001") {
			return res, state.TransactionEnded(err)
		}
		return res, err
	}
	return res, nil
}

func (s *Store) ensureSchema(ctx context.Context, tx pgx.Tx, target []string) error {
	if len(target) < 2 {
		return nil
	}
	schema := pgx.Identifier(target[:len(target)-1]).Sanitize()
	var exists bool
	err := tx.QueryRow(ctx, `SELECT to_regnamespace($1) IS NOT NULL`, schema).Scan(&exists)
	if err != nil || exists {
		return err
	}
	// Two workers creating one schema race on the catalog's unique index;
	// a lock per name makes the second wait and find it.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.data:"+schema)); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema)
	return err
}

// ensureTable creates the target from the query's columns when it does not
// exist yet, under a lock on its name so concurrent first units do not race.
func (s *Store) ensureTable(ctx context.Context, tx pgx.Tx, target string, job state.DataJob) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, target).Scan(&exists); err != nil || exists {
		return err
	}
	if err := s.ensureSchema(ctx, tx, job.Target); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.data:"+target)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+target+" AS SELECT * FROM ("+bindNull(job.Query)+") AS q WITH NO DATA")
	return err
}

func (s *Store) queryColumns(ctx context.Context, tx pgx.Tx, job state.DataJob) ([]string, error) {
	q, args := bind("SELECT * FROM ("+job.Query+") AS q LIMIT 0", job.Window)
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for _, f := range rows.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	rows.Close()
	return cols, rows.Err()
}

func (s *Store) runQueryWrite(ctx context.Context, tx pgx.Tx, job state.DataJob, target string) (state.DataResult, error) {
	if err := s.ensureTable(ctx, tx, target, job); err != nil {
		return state.DataResult{}, fmt.Errorf("creating %s: %w", target, err)
	}
	cols, err := s.queryColumns(ctx, tx, job)
	if err != nil {
		return state.DataResult{}, err
	}
	list := state.QuoteList(cols, quoteIdent)
	insert := "INSERT INTO " + target + " (" + list + ") SELECT " + list + " FROM (" + job.Query + ") AS q"
	switch job.Write {
	case state.WriteAppend:
	case state.WriteRecreatePartition:
		del := "DELETE FROM " + target
		var args []any
		if !job.Window.IsZero() {
			// Typed, so a date column is compared as a time (midnight UTC)
			// rather than the window truncated to dates.
			del += " WHERE " + quoteIdent(job.Column) + " >= $1::timestamptz AND " + quoteIdent(job.Column) + " < $2::timestamptz"
			args = []any{nullTime(job.Window.Since), nullTime(job.Window.Until)}
		}
		if _, err := tx.Exec(ctx, del, args...); err != nil {
			return state.DataResult{}, fmt.Errorf("clearing the partition: %w", err)
		}
	case state.WriteUpsert:
		if err := s.ensureKeyIndex(ctx, tx, job, target); err != nil {
			return state.DataResult{}, err
		}
		insert += " ON CONFLICT (" + state.QuoteList(job.Keys, quoteIdent) + ") DO " + state.UpsertAction(cols, job.Keys, quoteIdent)
	default:
		return state.DataResult{}, fmt.Errorf("%w: unknown write mode %q", state.ErrDataJob, job.Write)
	}
	q, args := bind(insert, job.Window)
	tag, err := tx.Exec(ctx, q, args...)
	if err != nil {
		return state.DataResult{}, err
	}
	return state.DataResult{Rows: tag.RowsAffected()}, nil
}

// ensureKeyIndex gives upsert's ON CONFLICT the unique index it needs.
func (s *Store) ensureKeyIndex(ctx context.Context, tx pgx.Tx, job state.DataJob, target string) error {
	name := quoteIdent(job.Target[len(job.Target)-1] + "_upsert_key")
	_, err := tx.Exec(ctx, "CREATE UNIQUE INDEX IF NOT EXISTS "+name+" ON "+target+" ("+state.QuoteList(job.Keys, quoteIdent)+")")
	if err != nil {
		return fmt.Errorf("creating the unique index on the upsert keys: %w", err)
	}
	return nil
}

var pgColumnTypes = map[state.ColumnType]string{
	state.ColumnText: "text", state.ColumnInt: "bigint", state.ColumnFloat: "double precision",
	state.ColumnBool: "boolean", state.ColumnDate: "date", state.ColumnDatetime: "timestamp",
}

// loadBatch is how many rows one INSERT of a table load carries: well under
// PostgreSQL's 65,535 parameters for any sane column count.
const loadBatch = 500

// loadTable replaces the target with the job's rows, unless a conditional
// load finds its version already loaded; the load is recorded at the
// caller's at, not the server's now().
func (s *Store) loadTable(ctx context.Context, tx pgx.Tx, job state.DataJob, target string, at time.Time) (state.DataResult, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.data:"+target)); err != nil {
		return state.DataResult{}, err
	}
	if job.Version != "" {
		var loaded string
		var loadedAt time.Time
		err := tx.QueryRow(ctx, s.sql(`SELECT version, loaded_at FROM {schema}.data_loads WHERE target = $1`), target).Scan(&loaded, &loadedAt)
		if err == nil && loaded == job.Version {
			return state.DataResult{Skipped: true, LoadedAt: loadedAt.UTC()}, nil
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return state.DataResult{}, err
		}
	}
	if err := s.ensureSchema(ctx, tx, job.Target); err != nil {
		return state.DataResult{}, err
	}
	defs := make([]string, len(job.Columns))
	names := make([]string, len(job.Columns))
	for i, c := range job.Columns {
		defs[i] = quoteIdent(c.Name) + " " + pgColumnTypes[c.Type]
		names[i] = c.Name
	}
	if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+target); err != nil {
		return state.DataResult{}, err
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE "+target+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return state.DataResult{}, err
	}
	n, err := insertRows(ctx, tx, target, state.QuoteList(names, quoteIdent), len(job.Columns), job.Rows)
	if err != nil {
		return state.DataResult{}, err
	}
	_, err = tx.Exec(ctx, s.sql(`
		INSERT INTO {schema}.data_loads (target, version, rows, loaded_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (target) DO UPDATE SET version = EXCLUDED.version, rows = EXCLUDED.rows, loaded_at = EXCLUDED.loaded_at`),
		target, job.Version, n, at)
	return state.DataResult{Rows: n, LoadedAt: at.UTC().Truncate(time.Microsecond)}, err
}

// insertRows inserts src's rows in batches. Values go as text, which
// PostgreSQL parses into each column's type: a date string becomes a date.
func insertRows(ctx context.Context, tx pgx.Tx, target, cols string, width int, src state.RowSource) (int64, error) {
	var (
		n     int64
		args  []any
		marks []string
	)
	flush := func() error {
		if len(marks) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+target+" ("+cols+") VALUES "+strings.Join(marks, ", "), args...)
		args, marks = args[:0], marks[:0]
		return err
	}
	for src != nil {
		row, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		if err := state.RowWidth(n+1, row, width); err != nil {
			return n, err
		}
		ph := make([]string, width)
		for i, v := range row {
			args = append(args, textValue(v))
			ph[i] = fmt.Sprintf("$%d", len(args))
		}
		marks = append(marks, "("+strings.Join(ph, ", ")+")")
		n++
		if len(marks) == loadBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	return n, flush()
}

// textValue passes a loaded value as text (or NULL), so one code path
// serves every column type.
func textValue(v any) pgtype.Text {
	if v == nil {
		return pgtype.Text{}
	}
	return pgtype.Text{String: fmt.Sprint(v), Valid: true}
}

// ReadData implements state.DataStore.
func (s *Store) ReadData(ctx context.Context, query string, w state.Window, fn func(row []any) error) error {
	q, args := bind(query, w)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}
