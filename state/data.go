package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// DataJobKind is what a DataJob does in the data database.
type DataJobKind int

// The jobs of the sql, query and view executors, and table loads
// (hardcoded constants and file sources).
const (
	// DataStatements runs the statements of a sql model in order.
	DataStatements DataJobKind = iota + 1
	// DataQuery writes the rows of a SELECT into the target with a write mode.
	DataQuery
	// DataView creates or replaces the target as a view of the query.
	DataView
	// DataTable replaces the target's rows with Columns and Rows.
	DataTable
)

// WriteMode is how a query's rows land in its target.
type WriteMode string

// The write modes of a query's write block.
const (
	WriteAppend            WriteMode = "append"
	WriteUpsert            WriteMode = "upsert"
	WriteRecreatePartition WriteMode = "recreate_partition"
)

// ColumnType is a loaded column's type; each backend maps it to its own.
type ColumnType int

// The column types a table load knows.
const (
	ColumnText ColumnType = iota
	ColumnInt
	ColumnFloat
	ColumnBool
	ColumnDate
	ColumnDatetime
)

// DataColumn is one column of a table load.
type DataColumn struct {
	Name string
	Type ColumnType
}

// RowSource yields a table load's rows one at a time, so a large file loads
// in bounded memory. Next returns io.EOF after the last row.
type RowSource interface {
	Next() ([]any, error)
}

// SliceRows is a RowSource over rows already in memory: a hardcoded
// source's, or a test's.
func SliceRows(rows [][]any) RowSource { return &sliceRows{rows: rows} }

type sliceRows struct {
	rows [][]any
	i    int
}

func (r *sliceRows) Next() ([]any, error) {
	if r.i >= len(r.rows) {
		return nil, io.EOF
	}
	r.i++
	return r.rows[r.i-1], nil
}

// DataJob is one piece of model work in the data database, described rather
// than written as SQL: the backend owns the dialect, the quoting and the
// transaction. Templates are already rendered; :since and :until remain as
// named parameters, which the backend binds to Window (NULL for a zero
// Window, a timeless unit).
type DataJob struct {
	Kind DataJobKind
	// Target is the table or view written, as unquoted parts
	// (schema, table); the backend quotes it for its dialect.
	Target     []string
	Statements []string
	Query      string
	Write      WriteMode
	// Keys are the upsert keys; Column is recreate_partition's column.
	Keys   []string
	Column string
	Window Window
	// Columns and Rows are a DataTable's content. Version, when set, makes
	// the load conditional: a target last loaded with the same Version is
	// left alone (a hardcoded constant re-applied only when its content
	// hash changes).
	Columns []DataColumn
	Rows    RowSource
	Version string
	// Fingerprint is recorded on the claim RunData is given, when the job
	// applies its unit: the definition it was built under.
	Fingerprint string
}

// DataResult is what a DataJob came to.
type DataResult struct {
	// Rows is the number of rows written: the insert of a query write, the
	// last statement's count for a sql model, the rows of a table load.
	Rows int64
	// Skipped is a conditional table load whose Version was already loaded.
	Skipped bool
	// LoadedAt is, for a table load, when the target's content was loaded:
	// the caller's at of this load, or of the earlier one a Skipped load
	// left in place.
	LoadedAt time.Time
}

var dataKinds = map[DataJobKind]string{DataStatements: "sql", DataQuery: "query", DataView: "view", DataTable: "table load"}

// Check refuses, before anything is written, a job no backend can run:
// an unknown kind or write mode, a missing target, query or column, upsert
// keys or the partition column a write mode needs. at is the caller's clock
// of RunData: a table load records it as the time it was loaded, so it must
// be set. The errors wrap ErrDataJob.
func (j DataJob) Check(at time.Time) error {
	kind, ok := dataKinds[j.Kind]
	if !ok {
		return fmt.Errorf("%w: unknown kind %d", ErrDataJob, j.Kind)
	}
	if j.Kind != DataStatements && len(j.Target) == 0 {
		return fmt.Errorf("%w: a %s job needs a target table", ErrDataJob, kind)
	}
	switch j.Kind {
	case DataQuery, DataView:
		if strings.TrimSpace(j.Query) == "" {
			return fmt.Errorf("%w: a %s job needs a query", ErrDataJob, kind)
		}
	case DataTable:
		if len(j.Columns) == 0 {
			return fmt.Errorf("%w: a table load needs at least one column", ErrDataJob)
		}
		if at.IsZero() {
			return fmt.Errorf("%w: a table load records when it was loaded; pass the caller's clock, not the zero time", ErrDataJob)
		}
	}
	if j.Kind != DataQuery {
		return nil
	}
	switch j.Write {
	case WriteAppend:
	case WriteUpsert:
		if len(j.Keys) == 0 {
			return fmt.Errorf("%w: write mode upsert needs keys", ErrDataJob)
		}
	case WriteRecreatePartition:
		if j.Column == "" && !j.Window.IsZero() {
			return fmt.Errorf("%w: write mode recreate_partition needs the column its window partitions", ErrDataJob)
		}
	default:
		return fmt.Errorf("%w: unknown write mode %q; use append, upsert or recreate_partition", ErrDataJob, j.Write)
	}
	return nil
}

// UpsertAction is what an upsert does on a key conflict, the words after
// ON CONFLICT (keys) DO, alike in both backends but for how they quote a
// name: every column of the query that is not a key, in the query's
// order, set to the row that conflicted (excluded's); NOTHING when every
// column is a key.
func UpsertAction(cols, keys []string, quote func(string) string) string {
	var sets []string
	for _, c := range cols {
		if !slices.Contains(keys, c) {
			sets = append(sets, quote(c)+" = excluded."+quote(c))
		}
	}
	if len(sets) == 0 {
		return "NOTHING"
	}
	return "UPDATE SET " + strings.Join(sets, ", ")
}

// QuoteList quotes each name with quote and joins them with ", ": a column
// list of a backend's SQL.
func QuoteList(names []string, quote func(string) string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// StatementFailed wraps the error of the i-th (from 0) statement of a sql
// job with its position, which is what lets an author find it in the model.
func StatementFailed(i int, err error) error { return fmt.Errorf("statement %d: %w", i+1, err) }

// UnitSavepoint is the savepoint both backends set before a sql model's
// statements and release after them. A statement that ends the
// transaction (COMMIT, END, ROLLBACK) ends the savepoint with it, so the
// release fails, and the unit fails with TransactionEnded instead of being
// recorded applied next to data that committed on its own.
const UnitSavepoint = "bollhav_unit"

// TransactionEnded is the error of a sql model whose statements ended the
// unit's transaction early; err is the backend's answer to the release.
func TransactionEnded(err error) error {
	return fmt.Errorf("a statement ended the unit's transaction (COMMIT, END or ROLLBACK among them): the unit is not recorded applied; remove the statement, since bollhav commits each unit's data with its state (%w)", err)
}

// RowWidth refuses the n-th row (from 1) of a table load when it does not
// have one value per column.
func RowWidth(n int64, row []any, columns int) error {
	if len(row) == columns {
		return nil
	}
	return fmt.Errorf("row %d has %d values for %d columns", n, len(row), columns)
}

// DataStore is a Store whose database also holds model data. Running a
// unit's job and recording its outcome in one transaction is what makes the
// sql, query and view executors exactly-once: either the data and the
// applied state commit together, or neither does.
type DataStore interface {
	// QuoteTable renders the table parts (schema, table) as the dialect's
	// identifier: "warehouse"."orders" in PostgreSQL; in SQLite, which has
	// no schemas, the one identifier "warehouse.orders".
	QuoteTable(parts ...string) (string, error)
	// RunData runs job in one transaction. at is the caller's clock: when
	// claim is not nil the unit is recorded applied at at, with the rows
	// written, in that same transaction and under the claim's fence
	// (ErrLeaseLost, and nothing written, when another worker owns the unit
	// now); a table load is recorded as loaded at at. A job job.Check
	// refuses is refused before anything runs.
	RunData(ctx context.Context, job DataJob, claim *Claim, at time.Time) (DataResult, error)
	// ReadData runs a SELECT with :since and :until bound to w and calls fn
	// with each row, so a user (or a test) can look at a model's data
	// through the same connection and dialect the executors write with.
	ReadData(ctx context.Context, query string, w Window, fn func(row []any) error) error
}

// ErrDataJob marks a job the backend refused before running anything: an
// unknown kind, a missing target, a target inside the store's own schema.
var ErrDataJob = errors.New("invalid data job")
