package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/bollhav/bollhav/state"
)

var _ state.GateSweepReader = (*Store)(nil)

// SweepGate reads what q selects with three statements at once, each on a
// read connection of its own: the units that are not applied and the
// applied rows read row by row from their partial covering indexes
// (migration 0008), and the islands of the models that need only coverage
// from the coverage table, which the store keeps in step with the applied
// units. The driver's cost is per row and column, so the rows a sweep
// never reads are what it saves. (Merging NeedFreshness runs in SQL with
// window functions measured slower than handing the rows over: about
// 6 µs a row in the engine's sorters.)
func (s *Store) SweepGate(ctx context.Context, env string, q state.SweepQuery, fn func(model string, units []state.SweepUnit) error) error {
	models, err := s.envModels(ctx, env)
	if err != nil {
		return err
	}
	byName := make(map[string]int64, len(models))
	for _, m := range models {
		byName[m.name] = m.id
	}
	ids := func(names []string) string {
		out := []int64{}
		for _, n := range names {
			if id, ok := byName[n]; ok {
				out = append(out, id)
			}
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	var rowNames, covNames []string
	for name, need := range q.Applied {
		switch need {
		case state.NeedCoverage:
			covNames = append(covNames, name)
		case state.NeedFreshness, state.NeedRows:
			rowNames = append(rowNames, name)
		}
	}
	judged := `SELECT "id" FROM "models" WHERE "env" = ?`
	args := []any{env}
	if q.Outstanding != nil {
		judged, args = `SELECT value FROM json_each(?)`, []any{ids(q.Outstanding)}
	}
	reads := []struct {
		query  string
		args   []any
		status bool // the fourth column is the status, not applied_at
	}{
		{`SELECT "model_id", "since", "until", "status" FROM "units" INDEXED BY "units_sweep_outstanding"
		  WHERE "status" <> 'applied' AND "model_id" IN (` + judged + `) ORDER BY "model_id", "since", "until"`, args, true},
		{`SELECT "model_id", "since", "until", "applied_at" FROM "units" INDEXED BY "units_sweep_applied"
		  WHERE "status" = 'applied' AND "model_id" IN (SELECT value FROM json_each(?)) ORDER BY "model_id", "since", "until"`,
			[]any{ids(rowNames)}, false},
		// The coverage's islands, and the existence row of a timeless model.
		{`SELECT "model_id", "since", "until", 0 FROM "coverage" WHERE "model_id" IN (SELECT value FROM json_each(?1))
		  UNION ALL
		  SELECT "model_id", "since", "until", "applied_at" FROM "units" INDEXED BY "units_sweep_applied"
		  WHERE "status" = 'applied' AND "model_id" IN (SELECT value FROM json_each(?1)) AND "since" = ?2 AND "until" = ?2`,
			[]any{ids(covNames), zeroMicros}, false},
	}
	parts := make([]map[int64][]state.SweepUnit, len(reads))
	errs := make([]error, len(reads))
	var wg sync.WaitGroup
	for i, r := range reads {
		wg.Go(func() { parts[i], errs[i] = s.sweepRead(ctx, r.query, r.args, r.status) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("sqlite: sweep %q: %w", env, err)
		}
	}
	for _, m := range models {
		// A model's applied rows come from one read.
		units := append(state.ReduceSweep(parts[1][m.id], false, q.Applied[m.name]), parts[2][m.id]...)
		if out := parts[0][m.id]; len(out) > 0 {
			state.SortSweepUnits(units) // coverage before existence rows: only a timeless model has both kinds
			units = append(units, out...)
			state.SortSweepUnits(units)
		}
		if len(units) == 0 {
			continue
		}
		if err := fn(m.name, units); err != nil {
			return err
		}
	}
	return nil
}

// sweepRead reads rows of model id, since, until and a status or an
// applied_at, by model, each model's in the order the statement gives.
func (s *Store) sweepRead(ctx context.Context, query string, args []any, status bool) (map[int64][]state.SweepUnit, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var (
		id          int64
		since, till int64
		st          sql.RawBytes
		at          int64
		fourth      any = &at
	)
	if status {
		fourth = &st
	}
	return sweepByModel(rows, func() (int64, state.SweepUnit, error) {
		if err := rows.Scan(&id, &since, &till, fourth); err != nil {
			return 0, state.SweepUnit{}, err
		}
		u := state.SweepUnit{Status: state.CodeApplied, AppliedAt: at}
		if status {
			u = state.SweepUnit{Status: state.CodeOf(st)}
		}
		if since != zeroMicros || till != zeroMicros {
			u.Since, u.Until = since, till
		}
		return id, u, nil
	})
}
