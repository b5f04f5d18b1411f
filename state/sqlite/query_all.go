package sqlite

import (
	"context"
	"fmt"
)

// rowScanner is a row to scan: *sql.Rows, *sql.Row.
type rowScanner interface{ Scan(...any) error }

// queryAll runs a read on q and scans every row it returns with scan, in
// order; no row is an empty slice, not nil, as on PostgreSQL. A failed
// query and a failed scan are both "sqlite: WHAT: …", so each read names
// itself once.
func queryAll[T any](ctx context.Context, q querier, what string, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{} // empty, not nil, as pgx.CollectRows gives PostgreSQL's
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", what, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
