package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

var _ state.GateSweepReader = (*Store)(nil)

// sweepGateSQL selects what a gate sweep reads, in the order of the window
// key, which units_sweep carries with status and applied_at (migration 0009): an index-only
// scan, filtered on the server, that hands each model's rows over together
// and in window order, so nothing is grouped or sorted here. $3 is NULL to
// judge every model.
const sweepGateSQL = `
	SELECT model, since, until, status, applied_at FROM {schema}.units
	WHERE env = $1
	  AND (status = 'applied' AND model = ANY($2::text[])
	       OR status <> 'applied' AND ($3::text[] IS NULL OR model = ANY($3::text[])))
	ORDER BY env, model, since, until`

// SweepGate reads the units q selects in one statement and reduces each
// model's applied rows (state.ReduceSweep) as they arrive.
func (s *Store) SweepGate(ctx context.Context, env string, q state.SweepQuery, fn func(model string, units []state.SweepUnit) error) error {
	var applied []string
	for name, need := range q.Applied {
		if need > state.NeedNone {
			applied = append(applied, name)
		}
	}
	var judged []string // nil: every model
	if q.Outstanding != nil {
		judged = append([]string{}, q.Outstanding...)
	}
	rows, err := s.pool.Query(ctx, s.sql(sweepGateSQL), pgx.QueryResultFormats{pgx.BinaryFormatCode}, env, applied, judged)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		model string
		units []state.SweepUnit
	)
	flush := func() error {
		if len(units) == 0 {
			return nil
		}
		us := state.ReduceSweep(units, true, q.Applied[model])
		units = nil
		if len(us) == 0 {
			return nil
		}
		return fn(model, us)
	}
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 5 {
			return errors.New("sweep gate: unexpected columns")
		}
		if string(raw[0]) != model || units == nil {
			if err := flush(); err != nil {
				return err
			}
			model = string(raw[0])
		}
		u := state.SweepUnit{Status: state.CodeOf(raw[3])}
		if raw[1] != nil {
			if u.Since, err = sweepMicros(raw[1]); err != nil {
				return err
			}
			if u.Until, err = sweepMicros(raw[2]); err != nil {
				return err
			}
		}
		if raw[4] != nil && u.Status == state.CodeApplied {
			if u.AppliedAt, err = sweepMicros(raw[4]); err != nil {
				return err
			}
		}
		units = append(units, u)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}
