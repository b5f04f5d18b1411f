package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

var _ state.DataStore = (*Store)(nil)

// QuoteTable implements state.DataStore. SQLite has no schemas, so model data
// lives in the store's own file with the schema folded into the name:
// warehouse.orders is the table "warehouse.orders". Its dot can never collide
// with the store's own tables, none of which has one, and the demo stays one
// self-contained file whose data and state commit together.
func (s *Store) QuoteTable(parts ...string) (string, error) {
	if len(parts) == 0 || len(parts) > 2 {
		return "", fmt.Errorf("%w: SQLite table names are schema.table; %q has %d parts", state.ErrDataJob, strings.Join(parts, "."), len(parts))
	}
	for _, p := range parts {
		if p == "" {
			return "", fmt.Errorf("%w: empty part in table name %q", state.ErrDataJob, strings.Join(parts, "."))
		}
	}
	return quoteIdent(strings.Join(parts, ".")), nil
}

func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// timeText is how :since and :until are bound: SQLite's own datetime()
// format in UTC, so they compare as text with what datetime() returns and,
// through datetime(), with any ISO 8601 value.
const timeText = "2006-01-02 15:04:05"

// RunData implements state.DataStore, in one write transaction with the
// unit's transition. SQLite has one writer, so a long job holds back other
// writers of this file until it commits.
func (s *Store) RunData(ctx context.Context, job state.DataJob, claim *state.Claim, at time.Time) (state.DataResult, error) {
	if err := job.Check(at); err != nil {
		return state.DataResult{}, err
	}
	var target string
	if job.Kind != state.DataStatements || len(job.Target) > 0 {
		var err error
		if target, err = s.QuoteTable(job.Target...); err != nil {
			return state.DataResult{}, err
		}
	}
	var res state.DataResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = runJob(ctx, tx, job, target, at)
		if err != nil || claim == nil {
			return err
		}
		rows := res.Rows
		return completeTx(ctx, tx, *claim, state.Outcome{Status: state.Applied, At: at, RowsWritten: &rows, Fingerprint: job.Fingerprint})
	})
	return res, err
}

func runJob(ctx context.Context, tx *sql.Tx, job state.DataJob, target string, at time.Time) (state.DataResult, error) {
	switch job.Kind {
	case state.DataStatements:
		var res state.DataResult
		if _, err := tx.ExecContext(ctx, `SAVEPOINT "`+state.UnitSavepoint+`"`); err != nil {
			return res, err
		}
		for i, stmt := range job.Statements {
			q, args := bind(stmt, job.Window)
			r, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return res, state.StatementFailed(i, err)
			}
			res.Rows, _ = r.RowsAffected()
		}
		if _, err := tx.ExecContext(ctx, `RELEASE "`+state.UnitSavepoint+`"`); err != nil {
			return res, state.TransactionEnded(err)
		}
		return res, nil
	case state.DataQuery:
		return queryWrite(ctx, tx, job, target)
	case state.DataView:
		if _, err := tx.ExecContext(ctx, "DROP VIEW IF EXISTS "+target); err != nil {
			return state.DataResult{}, err
		}
		_, err := tx.ExecContext(ctx, "CREATE VIEW "+target+" AS "+job.Query)
		return state.DataResult{}, err
	case state.DataTable:
		return loadTable(ctx, tx, job, target, at)
	}
	return state.DataResult{}, fmt.Errorf("%w: unknown kind %d", state.ErrDataJob, job.Kind)
}

// bind rewrites :since and :until to ?1 and ?2 and returns as many arguments
// as the highest one used: the window's bounds as text, NULL when the window
// is zero (a timeless unit).
func bind(q string, w state.Window) (string, []any) {
	out, names := state.BindNames(q, func(name string) string {
		if name == "since" {
			return "?1"
		}
		return "?2"
	})
	if len(names) == 0 {
		return out, nil
	}
	args := []any{nil, nil}
	if !w.IsZero() {
		args = []any{w.Since.UTC().Format(timeText), w.Until.UTC().Format(timeText)}
	}
	if !slices.Contains(names, "until") {
		args = args[:1]
	}
	return out, args
}

func queryWrite(ctx context.Context, tx *sql.Tx, job state.DataJob, target string) (state.DataResult, error) {
	q, args := bind("CREATE TABLE IF NOT EXISTS "+target+" AS SELECT * FROM ("+job.Query+") LIMIT 0", job.Window)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return state.DataResult{}, fmt.Errorf("creating %s: %w", target, err)
	}
	cols, err := queryColumns(ctx, tx, job)
	if err != nil {
		return state.DataResult{}, err
	}
	list := state.QuoteList(cols, quoteIdent)
	insert := "INSERT INTO " + target + " (" + list + ") SELECT " + list + " FROM (" + job.Query + ") WHERE true"
	switch job.Write {
	case state.WriteAppend:
	case state.WriteRecreatePartition:
		del, dargs := "DELETE FROM "+target, []any(nil)
		if !job.Window.IsZero() {
			col := quoteIdent(job.Column)
			del += " WHERE datetime(" + col + ") >= datetime(?1) AND datetime(" + col + ") < datetime(?2)"
			dargs = []any{job.Window.Since.UTC().Format(timeText), job.Window.Until.UTC().Format(timeText)}
		}
		if _, err := tx.ExecContext(ctx, del, dargs...); err != nil {
			return state.DataResult{}, fmt.Errorf("clearing the partition: %w", err)
		}
	case state.WriteUpsert:
		index := quoteIdent(strings.Join(job.Target, ".") + "_upsert_key")
		if _, err := tx.ExecContext(ctx, "CREATE UNIQUE INDEX IF NOT EXISTS "+index+" ON "+target+" ("+state.QuoteList(job.Keys, quoteIdent)+")"); err != nil {
			return state.DataResult{}, fmt.Errorf("creating the unique index on the upsert keys: %w", err)
		}
		insert += " ON CONFLICT (" + state.QuoteList(job.Keys, quoteIdent) + ") DO " + state.UpsertAction(cols, job.Keys, quoteIdent)
	default:
		return state.DataResult{}, fmt.Errorf("%w: unknown write mode %q", state.ErrDataJob, job.Write)
	}
	q, args = bind(insert, job.Window)
	r, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return state.DataResult{}, err
	}
	n, _ := r.RowsAffected()
	return state.DataResult{Rows: n}, nil
}

func queryColumns(ctx context.Context, tx *sql.Tx, job state.DataJob) ([]string, error) {
	q, args := bind("SELECT * FROM ("+job.Query+") LIMIT 0", job.Window)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.Columns()
}

var sqliteColumnTypes = map[state.ColumnType]string{
	state.ColumnText: "TEXT", state.ColumnInt: "INTEGER", state.ColumnFloat: "REAL",
	state.ColumnBool: "INTEGER", state.ColumnDate: "TEXT", state.ColumnDatetime: "TEXT",
}

// loadTable replaces the target with the job's rows, unless a conditional
// load finds its version already loaded; the load is recorded at the
// caller's at.
func loadTable(ctx context.Context, tx *sql.Tx, job state.DataJob, target string, at time.Time) (state.DataResult, error) {
	if job.Version != "" {
		var loaded string
		var loadedAt int64
		err := tx.QueryRowContext(ctx, `SELECT "version", "loaded_at" FROM "data_loads" WHERE "target" = ?`, target).Scan(&loaded, &loadedAt)
		if err == nil && loaded == job.Version {
			return state.DataResult{Skipped: true, LoadedAt: fromMicros(loadedAt)}, nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return state.DataResult{}, err
		}
	}
	defs := make([]string, len(job.Columns))
	names := make([]string, len(job.Columns))
	for i, c := range job.Columns {
		defs[i] = quoteIdent(c.Name) + " " + sqliteColumnTypes[c.Type]
		names[i] = c.Name
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+target); err != nil {
		return state.DataResult{}, err
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE "+target+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return state.DataResult{}, err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+target+" ("+state.QuoteList(names, quoteIdent)+") VALUES ("+marks+")")
	if err != nil {
		return state.DataResult{}, err
	}
	defer stmt.Close()
	var n int64
	for job.Rows != nil {
		row, err := job.Rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return state.DataResult{}, err
		}
		if err := state.RowWidth(n+1, row, len(names)); err != nil {
			return state.DataResult{}, err
		}
		for i, c := range job.Columns {
			if t, ok := row[i].(string); ok && c.Type == state.ColumnDatetime && len(t) > 10 && t[10] == 'T' {
				// datetime()'s own form, which :since and :until are bound
				// in, so a loaded timestamp compares with them as text.
				row[i] = t[:10] + " " + t[11:]
			}
		}
		if _, err := stmt.ExecContext(ctx, row...); err != nil {
			return state.DataResult{}, fmt.Errorf("row %d: %w", n+1, err)
		}
		n++
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO "data_loads" ("target", "version", "rows", "loaded_at") VALUES (?, ?, ?, ?)
		ON CONFLICT ("target") DO UPDATE SET "version" = excluded."version", "rows" = excluded."rows", "loaded_at" = excluded."loaded_at"`,
		target, job.Version, n, micros(at))
	return state.DataResult{Rows: n, LoadedAt: fromMicros(micros(at))}, err
}

// ReadData implements state.DataStore, on the read-only pool.
func (s *Store) ReadData(ctx context.Context, query string, w state.Window, fn func(row []any) error) error {
	q, args := bind(query, w)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}
