package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/state"
)

var _ state.RegionReader = (*Store)(nil)

// regionChunk is how many regions one statement reads: four parameters
// each, well inside SQLite's limit on them.
const regionChunk = 500

// SweepRegions reads the regions a chunk at a time, each chunk one
// statement: the regions as a VALUES list joined to the models and, per
// region, a bounded range of the (model_id, since) index (a unit
// overlapping a window starts at most the model's longest unit before it).
func (s *Store) SweepRegions(ctx context.Context, env string, regions []state.Region, fn func(i int, units []state.SweepUnit) error) error {
	for lo := 0; lo < len(regions); lo += regionChunk {
		hi := min(lo+regionChunk, len(regions))
		got, err := s.sweepRegions(ctx, env, regions[lo:hi])
		if err != nil {
			return fmt.Errorf("sqlite: sweep regions: %w", err)
		}
		for k, us := range got {
			if err := fn(lo+k, us); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) sweepRegions(ctx context.Context, env string, regions []state.Region) ([][]state.SweepUnit, error) {
	values := make([]string, len(regions))
	args := make([]any, 0, 4*len(regions)+1)
	for i, r := range regions {
		if r.Window.IsZero() {
			return nil, fmt.Errorf("region %d of %s has no window", i, r.Model)
		}
		values[i] = "(?, ?, ?, ?)"
		args = append(args, i, r.Model, micros(r.Window.Since), micros(r.Window.Until))
	}
	args = append(args, env)
	rows, err := s.r.QueryContext(ctx, `
		WITH "r"("i", "model", "since", "until") AS (VALUES `+strings.Join(values, ", ")+`)
		SELECT "r"."i", "u"."since", "u"."until", "u"."status", coalesce("u"."applied_at", 0)
		FROM "r" JOIN "models" "m" ON "m"."env" = ? AND "m"."name" = "r"."model"
		JOIN "units" "u" ON "u"."model_id" = "m"."id" AND "u"."since" > "r"."since" - "m"."max_unit"
		  AND "u"."since" < "r"."until" AND "u"."until" > "r"."since"
		ORDER BY "r"."i", "u"."since", "u"."until"`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([][]state.SweepUnit, len(regions))
	var (
		i                int
		since, until, at int64
		status           sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&i, &since, &until, &status, &at); err != nil {
			return nil, err
		}
		u := state.SweepUnit{Since: since, Until: until, Status: state.CodeOf(status)}
		if u.Status == state.CodeApplied {
			u.AppliedAt = at
		}
		out[i] = append(out[i], u)
	}
	return out, rows.Err()
}
