package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

var _ state.SweepReader = (*Store)(nil)

// pgEpochMicros is 2000-01-01T00:00:00Z in Unix microseconds: PostgreSQL's
// binary timestamptz counts microseconds from there.
const pgEpochMicros = 946_684_800_000_000

// SweepUnits reads every unit of env in one sequential scan and decodes the
// binary columns straight off pgx's read buffer: no time.Time, no string
// per row (a model's name is allocated once). Rows arrive in heap order,
// which updates scramble, so they are gathered with each row's model, then
// grouped by model into one array and each model's part merge-sorted
// (state.SortSweepUnits) — cheaper than an ORDER BY over the environment,
// which sorts a million rows on disk past work_mem or walks the window
// index with a heap fetch per row. (Reading page ranges over several
// connections at once measured no faster here: the server's scan and the
// decoding already run side by side.)
func (s *Store) SweepUnits(ctx context.Context, env string, fn func(model string, units []state.SweepUnit) error) error {
	p, err := s.scanSweep(ctx, env)
	if err != nil {
		return err
	}
	names, byModel := groupByModel(p)
	for id, units := range byModel {
		state.SortSweepUnits(units)
		if err := fn(names[id], units); err != nil {
			return err
		}
	}
	return nil
}

// sweepScan is what a scan read: rows with the id of their model, ids
// numbered in the order the scan met the models.
type sweepScan struct {
	names []string
	rows  sweepRows
}

// scanSweep reads the units of env.
func (s *Store) scanSweep(ctx context.Context, env string) (*sweepScan, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT model, since, until, status, applied_at FROM {schema}.units WHERE env = $1`),
		pgx.QueryResultFormats{pgx.BinaryFormatCode}, env)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		p    = &sweepScan{}
		ids  = map[string]int32{}
		cur  = int32(-1)
		prev []byte
	)
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 5 {
			return nil, fmt.Errorf("sweep: %d columns, want 5", len(raw))
		}
		if cur < 0 || string(raw[0]) != string(prev) {
			id, ok := ids[string(raw[0])]
			if !ok {
				id = int32(len(p.names))
				p.names = append(p.names, string(raw[0]))
				ids[p.names[id]] = id
			}
			cur, prev = id, append(prev[:0], raw[0]...)
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
		if raw[4] != nil && u.Status == state.CodeApplied {
			if u.AppliedAt, err = sweepMicros(raw[4]); err != nil {
				return nil, err
			}
		}
		p.rows.add(u, cur)
	}
	return p, rows.Err()
}

// sweepChunk is how many rows a chunk of sweepRows holds: chunks never
// move once filled, where one growing slice of a million rows would be
// copied (and its fresh pages faulted in) at every doubling.
const sweepChunk = 1 << 14

// sweepRows gathers rows with their model's id, in arrival order.
type sweepRows struct {
	units [][]state.SweepUnit
	of    [][]int32
	n     int
}

func (r *sweepRows) add(u state.SweepUnit, model int32) {
	if r.n%sweepChunk == 0 {
		r.units = append(r.units, make([]state.SweepUnit, 0, sweepChunk))
		r.of = append(r.of, make([]int32, 0, sweepChunk))
	}
	k := len(r.units) - 1
	r.units[k], r.of[k] = append(r.units[k], u), append(r.of[k], model)
	r.n++
}

// groupByModel places the rows, model by model and in arrival order within
// a model, into one array (a counting sort on the model) and returns each
// model's part of it, capped so that appending to one cannot overwrite the
// next.
func groupByModel(p *sweepScan) ([]string, [][]state.SweepUnit) {
	next := make([]int, len(p.names)+1)
	for _, of := range p.rows.of {
		for _, id := range of {
			next[id+1]++
		}
	}
	for id := range p.names {
		next[id+1] += next[id]
	}
	bounds := append([]int(nil), next...)
	all := make([]state.SweepUnit, p.rows.n)
	for k, units := range p.rows.units {
		for i, u := range units {
			id := p.rows.of[k][i]
			all[next[id]] = u
			next[id]++
		}
	}
	out := make([][]state.SweepUnit, len(p.names))
	for id := range p.names {
		out[id] = all[bounds[id]:bounds[id+1]:bounds[id+1]]
	}
	return p.names, out
}

// sweepMicros decodes a binary timestamptz into Unix microseconds.
func sweepMicros(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, errors.New("sweep: a timestamptz is not 8 bytes")
	}
	v := int64(binary.BigEndian.Uint64(b))
	if v == 1<<63-1 || v == -1<<63 {
		return 0, errors.New("sweep: an infinite timestamp in a unit")
	}
	return v + pgEpochMicros, nil
}
