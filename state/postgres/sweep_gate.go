package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

var _ state.GateSweepReader = (*Store)(nil)

// sweepOutstandingSQL reads the units that are not applied ($2 NULL: of
// every model) from their partial index (migration 0009), an index-only
// scan in window order.
const sweepOutstandingSQL = `
	SELECT model, since, until, status FROM {schema}.units
	WHERE env = $1 AND status <> 'applied' AND ($2::text[] IS NULL OR model = ANY($2::text[]))
	ORDER BY model, since, until`

// sweepAppliedSQL reads the applied rows of the models in $2, model by
// model in the array's order (the ordinality names the model) and each in
// window order: one index-only range scan of their partial index per
// model, so the history of models no gate reads is never touched. OFFSET 0
// keeps the planner from flattening the per-model scan into one scan of
// every applied row and a sort.
const sweepAppliedSQL = `
	SELECT m.i, u.since, u.until, u.applied_at
	FROM unnest($2::text[]) WITH ORDINALITY AS m(name, i)
	CROSS JOIN LATERAL (
	    SELECT since, until, applied_at FROM {schema}.units
	    WHERE env = $1 AND model = m.name AND status = 'applied'
	    ORDER BY since, until OFFSET 0) u`

// sweepCoverageSQL reads the coverage of the models in $2 whose gates need
// nothing more (state.NeedCoverage) from the kept islands (table coverage,
// migration 0010) instead of their applied rows — a few islands where the
// history has hundreds of thousands of rows — with a timeless model's
// applied existence row, which has no island. Islands are disjoint and do
// not touch, as ReduceSweep merges them, so until orders them as since.
const sweepCoverageSQL = `
	SELECT model, since, until, NULL::timestamptz FROM {schema}.coverage
	WHERE env = $1 AND model = ANY($2::text[])
	UNION ALL
	SELECT model, NULL, NULL, applied_at FROM {schema}.units
	WHERE env = $1 AND model = ANY($2::text[]) AND status = 'applied' AND since IS NULL
	ORDER BY 1, 3 NULLS FIRST`

// SweepGate reads the units q selects in three statements — the units that
// are not applied, then the applied rows gates read — and reduces each
// model's applied rows (state.ReduceSweep) as they arrive. Rows are
// decoded straight off pgx's read buffer, as SweepUnits decodes them. Both
// statements read one snapshot (a read-only REPEATABLE READ transaction):
// a unit completed or reset between them would otherwise be counted twice
// or not at all.
func (s *Store) SweepGate(ctx context.Context, env string, q state.SweepQuery, fn func(model string, units []state.SweepUnit) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, s.snapshotOptions(), func(tx pgx.Tx) error {
		return s.sweepGate(ctx, tx, env, q, fn)
	})
}

func (s *Store) sweepGate(ctx context.Context, tx pgx.Tx, env string, q state.SweepQuery, fn func(model string, units []state.SweepUnit) error) error {
	outstanding, err := s.sweepOutstanding(ctx, tx, env, q.Outstanding)
	if err != nil {
		return err
	}
	var applied, covered []string
	for name, need := range q.Applied {
		switch {
		case need == state.NeedCoverage:
			covered = append(covered, name)
		case need > state.NeedNone:
			applied = append(applied, name)
		}
	}
	if err := s.sweepCoverage(ctx, tx, env, covered, outstanding, fn); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, s.sql(sweepAppliedSQL), pgx.QueryResultFormats{pgx.BinaryFormatCode}, env, applied)
	if err != nil {
		return err
	}
	defer rows.Close()
	cur := -1
	var units []state.SweepUnit
	flush := func() error {
		if cur < 0 {
			return nil
		}
		name := applied[cur]
		us := mergeSweepUnits(state.ReduceSweep(units, false, q.Applied[name]), outstanding[name])
		delete(outstanding, name)
		units = nil
		if len(us) == 0 {
			return nil
		}
		return fn(name, us)
	}
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 4 || len(raw[0]) != 8 {
			return errors.New("sweep gate: unexpected columns")
		}
		i := int(int64(binary.BigEndian.Uint64(raw[0]))) - 1 // ordinality counts from 1
		if i < 0 || i >= len(applied) {
			return fmt.Errorf("sweep gate: model %d out of range", i)
		}
		if i != cur {
			if err := flush(); err != nil {
				return err
			}
			cur = i
		}
		u := state.SweepUnit{Status: state.CodeApplied}
		if raw[1] != nil {
			if u.Since, err = sweepMicros(raw[1]); err != nil {
				return err
			}
			if u.Until, err = sweepMicros(raw[2]); err != nil {
				return err
			}
		}
		if u.AppliedAt, err = sweepMicros(raw[3]); err != nil {
			return err
		}
		units = append(units, u)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	for name, us := range outstanding {
		if err := fn(name, us); err != nil {
			return err
		}
	}
	return nil
}

// sweepCoverage hands fn each of covered's models with its kept islands
// (AppliedAt 0, as NeedCoverage reduces them) and its outstanding units,
// taking those out of outstanding.
func (s *Store) sweepCoverage(ctx context.Context, tx pgx.Tx, env string, covered []string, outstanding map[string][]state.SweepUnit,
	fn func(model string, units []state.SweepUnit) error) error {
	if len(covered) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, s.sql(sweepCoverageSQL), pgx.QueryResultFormats{pgx.BinaryFormatCode}, env, covered)
	if err != nil {
		return err
	}
	islands := map[string][]state.SweepUnit{}
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 4 {
			rows.Close()
			return errors.New("sweep gate: unexpected columns")
		}
		u := state.SweepUnit{Status: state.CodeApplied}
		if raw[1] != nil {
			if u.Since, err = sweepMicros(raw[1]); err == nil {
				u.Until, err = sweepMicros(raw[2])
			}
		} else {
			u.AppliedAt, err = sweepMicros(raw[3])
		}
		if err != nil {
			rows.Close()
			return err
		}
		islands[string(raw[0])] = append(islands[string(raw[0])], u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range covered {
		us := mergeSweepUnits(islands[name], outstanding[name])
		delete(outstanding, name)
		if len(us) == 0 {
			continue
		}
		if err := fn(name, us); err != nil {
			return err
		}
	}
	return nil
}

// sweepOutstanding reads the units that are not applied of the models
// judged (nil: every model), by model in window order.
func (s *Store) sweepOutstanding(ctx context.Context, tx pgx.Tx, env string, judged []string) (map[string][]state.SweepUnit, error) {
	var names []string // nil: every model
	if judged != nil {
		names = append([]string{}, judged...)
	}
	rows, err := tx.Query(ctx, s.sql(sweepOutstandingSQL), pgx.QueryResultFormats{pgx.BinaryFormatCode}, env, names)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]state.SweepUnit{}
	var (
		model string
		units []state.SweepUnit
	)
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 4 {
			return nil, errors.New("sweep gate: unexpected columns")
		}
		if units == nil || string(raw[0]) != model {
			if units != nil {
				out[model] = units
			}
			model, units = string(raw[0]), out[string(raw[0])]
		}
		u := state.SweepUnit{Status: state.CodeOf(raw[3])}
		if raw[1] != nil {
			if u.Since, err = sweepMicros(raw[1]); err != nil {
				return nil, err
			}
			if u.Until, err = sweepMicros(raw[2]); err != nil {
				return nil, err
			}
		}
		units = append(units, u)
	}
	if units != nil {
		out[model] = units
	}
	return out, rows.Err()
}

// mergeSweepUnits merges two lists in window order into one.
func mergeSweepUnits(a, b []state.SweepUnit) []state.SweepUnit {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]state.SweepUnit, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j].Since < a[i].Since || b[j].Since == a[i].Since && b[j].Until < a[i].Until {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	return append(append(out, a[i:]...), b[j:]...)
}
