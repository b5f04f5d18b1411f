package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

var _ state.RegionReader = (*Store)(nil)

// SweepRegions reads every region in one query: the regions go up as three
// arrays, and each is a bounded range of the units' window index (the
// model's longest unit bounds how early an overlapping unit can start),
// decoded off the wire as SweepUnits decodes.
func (s *Store) SweepRegions(ctx context.Context, env string, regions []state.Region, fn func(i int, units []state.SweepUnit) error) error {
	if len(regions) == 0 {
		return nil
	}
	models := make([]string, len(regions))
	sinces, untils := make([]pgtype.Timestamptz, len(regions)), make([]pgtype.Timestamptz, len(regions))
	for i, r := range regions {
		if r.Window.IsZero() {
			return fmt.Errorf("sweep regions: region %d of %s has no window", i, r.Model)
		}
		models[i] = r.Model
		sinces[i], untils[i] = windowBounds(r.Window)
	}
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT r.i, u.since, u.until, u.status, u.applied_at
		FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) WITH ORDINALITY AS r(model, since, until, i)
		JOIN {schema}.models m ON m.env = $1 AND m.name = r.model
		CROSS JOIN LATERAL (
		    SELECT u.since, u.until, u.status, u.applied_at FROM {schema}.units u
		    WHERE u.env = $1 AND u.model = r.model AND u.since < r.until AND u.until > r.since
		      AND u.since >= r.since - m.longest_unit * interval '1 microsecond'
		) u
		ORDER BY r.i, u.since, u.until`),
		pgx.QueryResultFormats{pgx.BinaryFormatCode}, env, models, sinces, untils)
	if err != nil {
		return err
	}
	defer rows.Close()
	got := make([][]state.SweepUnit, len(regions))
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 5 || len(raw[0]) != 8 {
			return errors.New("sweep regions: unexpected columns")
		}
		i := int(int64(binary.BigEndian.Uint64(raw[0]))) - 1 // ordinality counts from 1
		if i < 0 || i >= len(regions) {
			return fmt.Errorf("sweep regions: region %d out of range", i)
		}
		u := state.SweepUnit{Status: state.CodeOf(raw[3])}
		if u.Since, err = sweepMicros(raw[1]); err != nil {
			return err
		}
		if u.Until, err = sweepMicros(raw[2]); err != nil {
			return err
		}
		if raw[4] != nil && u.Status == state.CodeApplied {
			if u.AppliedAt, err = sweepMicros(raw[4]); err != nil {
				return err
			}
		}
		got[i] = append(got[i], u)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i, us := range got {
		if err := fn(i, us); err != nil {
			return err
		}
	}
	return nil
}
