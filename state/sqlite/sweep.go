package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"

	"github.com/bollhav/bollhav/state"
)

var _ state.SweepReader = (*Store)(nil)

// sweepSplit is the fewest rows worth a second reader (a variable so that a
// test can split a small table).
var sweepSplit int64 = 50_000

// SweepUnits reads every unit of env by scanning the units table in rowid
// order: a prefill inserts a model's windows in order and updates keep
// their rowid, so each model's units arrive grouped and nearly sorted, and
// no index is walked with a table lookup per row. Times are already Unix
// microseconds in the file. The driver's cost per row and column dominates,
// so a large table is read as a few rowid ranges at once, one read
// connection and core each, and each model's parts joined in rowid order.
func (s *Store) SweepUnits(ctx context.Context, env string, fn func(model string, units []state.SweepUnit) error) error {
	models, err := s.envModels(ctx, env)
	if err != nil {
		return err
	}
	var lo, hi int64
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(min("id"), 0), coalesce(max("id"), -1) FROM "units"`).Scan(&lo, &hi); err != nil {
		return fmt.Errorf("sqlite: sweep %q: %w", env, err)
	}
	n := int64(min(runtime.GOMAXPROCS(0), 4))
	if hi-lo < sweepSplit {
		n = 1
	}
	parts := make([]map[int64][]state.SweepUnit, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		from := lo + (hi-lo+1)*i/n
		to := lo + (hi-lo+1)*(i+1)/n - 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = s.sweepRange(ctx, env, from, to)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("sqlite: sweep %q: %w", env, err)
		}
	}
	for _, m := range models {
		size := 0
		for _, p := range parts {
			size += len(p[m.id])
		}
		if size == 0 {
			continue
		}
		units := parts[0][m.id]
		if len(units) != size {
			units = make([]state.SweepUnit, 0, size)
			for _, p := range parts {
				units = append(units, p[m.id]...)
			}
		}
		state.SortSweepUnits(units)
		if err := fn(m.name, units); err != nil {
			return err
		}
	}
	return nil
}

// sweepRange reads the units of env whose rowid is in [from, to], by model.
// The unary + keeps the planner off the (model_id, …) indexes, which would
// look every row up in the table again: the rowid range is read in place.
func (s *Store) sweepRange(ctx context.Context, env string, from, to int64) (map[int64][]state.SweepUnit, error) {
	rows, err := s.r.QueryContext(ctx, `
		SELECT "model_id", "since", "until", "status", coalesce("applied_at", 0) FROM "units"
		WHERE "id" BETWEEN ? AND ? AND +"model_id" IN (SELECT "id" FROM "models" WHERE "env" = ?)`, from, to, env)
	if err != nil {
		return nil, err
	}
	var (
		id         int64
		status     sql.RawBytes
		since, til int64
		at         int64
	)
	return sweepByModel(rows, func() (int64, state.SweepUnit, error) {
		if err := rows.Scan(&id, &since, &til, &status, &at); err != nil {
			return 0, state.SweepUnit{}, err
		}
		u := state.SweepUnit{Status: state.CodeOf(status)}
		if since != zeroMicros || til != zeroMicros {
			u.Since, u.Until = since, til
		}
		if u.Status == state.CodeApplied {
			u.AppliedAt = at
		}
		return id, u, nil
	})
}

// sweepByModel reads rows, closing them, into units by model: scan reads
// the current row's model id and unit; each model's units keep the rows'
// order, and the rows of a model need not be adjacent.
func sweepByModel(rows *sql.Rows, scan func() (int64, state.SweepUnit, error)) (map[int64][]state.SweepUnit, error) {
	defer rows.Close()
	byModel := map[int64][]state.SweepUnit{}
	var (
		cur   int64 = -1
		units []state.SweepUnit
	)
	for rows.Next() {
		id, u, err := scan()
		if err != nil {
			return nil, err
		}
		if id != cur {
			if cur >= 0 {
				byModel[cur] = units
			}
			cur, units = id, byModel[id]
		}
		units = append(units, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if cur >= 0 {
		byModel[cur] = units
	}
	return byModel, nil
}
