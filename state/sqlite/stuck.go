package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/bollhav/bollhav/state"
)

var _ state.StuckReader = (*Store)(nil)

// windowReaders is how many connections of the read pool (readers)
// OutstandingWindows reads on at once: two, as a machine this runs on
// has at least, which leaves the pool's other two to a report's other
// reads and the UI's change feed.
const windowReaders = 2

// OutstandingWindows implements state.StuckReader from the covering index
// units_sweep_outstanding (migration 0008): no row of the table is read.
// A statement a model (an embedded database's round trip is a call), on
// windowReaders connections at once: a read of SQLite is CPU in this
// process, and the windows behind a large queue are many (at 10M units
// 1.36M of them: 1.16 s on one connection, 0.63 s on two, 0.57 s on
// four, here on two cores). Each reader takes a model's windows whole
// before handing them over, so fn is called on the caller's goroutine
// alone, a model's windows together and in order. An error of fn stops
// the readers and is returned.
func (s *Store) OutstandingWindows(ctx context.Context, env string, models []string, fn func(model string, since, until int64) error) error {
	if len(models) < 2 {
		for _, model := range models {
			if err := s.outstandingWindows(ctx, env, model, fn); err != nil {
				return err
			}
		}
		return nil
	}
	type read struct {
		model string
		w     []int64 // since, until, since, until…
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	g, ctx := errgroup.WithContext(ctx)
	reads := make(chan read, windowReaders)
	// A model's buffer goes back to the readers once handed over: a few
	// buffers the size of the largest model, not a garbage of every
	// model's windows (60 MB a Blocked view load at 10M units).
	free := make(chan []int64, 2*windowReaders+1)
	var next atomic.Int64
	for range min(windowReaders, len(models)) {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(models) {
					return nil
				}
				r := read{model: models[i]}
				select {
				case r.w = <-free:
				default:
				}
				err := s.outstandingWindows(ctx, env, r.model, func(_ string, since, until int64) error {
					r.w = append(r.w, since, until)
					return nil
				})
				if err != nil {
					return err
				}
				select {
				case reads <- r:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		})
	}
	done := make(chan error, 1)
	go func() {
		done <- g.Wait()
		close(reads)
	}()
	var err error
	for r := range reads {
		for i := 0; err == nil && i < len(r.w); i += 2 {
			err = fn(r.model, r.w[i], r.w[i+1])
		}
		if err != nil {
			stop() // the readers stop; reads is drained until they have
		}
		select {
		case free <- r.w[:0]:
		default:
		}
	}
	if readErr := <-done; err == nil {
		err = readErr
	}
	return err
}

func (s *Store) outstandingWindows(ctx context.Context, env, model string, fn func(model string, since, until int64) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT u."since", u."until"
		FROM "models" m JOIN "units" u INDEXED BY "units_sweep_outstanding" ON u."model_id" = m."id"
		WHERE m."env" = ? AND m."name" = ? AND u."status" <> 'applied'
		ORDER BY u."since", u."until"`, env, model)
	if err != nil {
		return fmt.Errorf("sqlite: outstanding windows of %s: %w", model, err)
	}
	defer rows.Close()
	var since, until int64
	for rows.Next() {
		if err := rows.Scan(&since, &until); err != nil {
			return fmt.Errorf("sqlite: outstanding windows of %s: %w", model, err)
		}
		if since == zeroMicros && until == zeroMicros {
			since, until = 0, 0
		}
		if err := fn(model, since, until); err != nil {
			return err
		}
	}
	return rows.Err()
}

// StuckPage implements state.StuckReader: a seek of units_stuck past the
// last window, in its order. The zero window of a timeless model's
// existence row is the smallest key, and its model's only unit.
func (s *Store) StuckPage(ctx context.Context, q state.StuckPageQuery) ([]state.Unit, error) {
	m, err := lookup(ctx, s.r, q.Env, q.Model)
	if err != nil {
		return nil, err
	}
	list, done, err := state.CheckStuckPage(q)
	if err != nil || done {
		return nil, err
	}
	args := []any{m.id}
	after := ""
	if q.After != nil {
		args = append(args, micros(q.After.Since), micros(q.After.Until))
		after = ` AND ("since", "until") > (?, ?)`
	}
	args = append(args, q.Limit)
	rows, err := s.r.QueryContext(ctx, `SELECT `+unitColumns+` FROM "units" INDEXED BY "units_stuck"
		WHERE "model_id" = ? AND "status" IN ('blocked', 'failed') AND "status" IN (`+list+`)`+after+`
		ORDER BY "since", "until" LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stuck page of %s: %w", q.Model, err)
	}
	defer rows.Close()
	var out []state.Unit
	for rows.Next() {
		u, err := scanUnit(rows, m)
		if err != nil {
			return nil, fmt.Errorf("sqlite: stuck page of %s: %w", q.Model, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// StuckGroups implements state.StuckReader: walks of the partial index
// units_stuck_groups (migration 0015), which holds the stuck units in
// group order with every column the read takes, joined to the models of
// env. The statement reads both stuck statuses, the index's own condition
// word for word (SQLite reads a partial index only for a WHERE that holds
// its terms); any further term on the status makes SQLite sort every unit
// for the GROUP BY instead of counting each group as the walk passes it,
// so the statuses asked for are kept here. A range of model ids, the
// index's first column, keeps the walk in order, so the env's models are
// cut into windowReaders ranges walked at once, as OutstandingWindows
// reads (at 10M units 0.46 s on one connection, 0.25 s on two).
func (s *Store) StuckGroups(ctx context.Context, env string, statuses []state.UnitStatus) ([]state.StuckGroup, error) {
	if err := state.CheckStuckStatuses(statuses); err != nil {
		return nil, err
	}
	models, err := s.envModels(ctx, env)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(models))
	ids := make([]int64, 0, len(models))
	for _, m := range models {
		names[m.id] = m.name
		ids = append(ids, m.id)
	}
	slices.Sort(ids)
	ranges := min(windowReaders, len(ids))
	parts := make([][]state.StuckGroup, ranges)
	g, ctx := errgroup.WithContext(ctx)
	for i := range ranges {
		from, to := ids[i*len(ids)/ranges], ids[len(ids)-1]+1
		if i+1 < ranges {
			to = ids[(i+1)*len(ids)/ranges]
		}
		g.Go(func() (err error) {
			parts[i], err = s.stuckGroupsIn(ctx, env, from, to, names, statuses)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("sqlite: stuck groups of %q: %w", env, err)
	}
	out := slices.Concat(parts...)
	state.SortStuckGroups(out)
	return out, nil
}

// stuckGroupsIn is StuckGroups of the models whose ids are in [from, to).
func (s *Store) stuckGroupsIn(ctx context.Context, env string, from, to int64, names map[int64]string, statuses []state.UnitStatus) ([]state.StuckGroup, error) {
	rows, err := s.r.QueryContext(ctx, `
		SELECT u."model_id", u."status", u."blocked_reason", count(*), min(u."since"), max(u."until"), min(u."updated_at")
		FROM "units" u INDEXED BY "units_stuck_groups" CROSS JOIN "models" m ON m."id" = u."model_id"
		WHERE m."env" = ? AND u."status" IN ('blocked', 'failed') AND u."model_id" >= ? AND u."model_id" < ?
		GROUP BY u."model_id", u."status", u."blocked_reason"`, env, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []state.StuckGroup
	for rows.Next() {
		var (
			g            state.StuckGroup
			id           int64
			status       string
			since, until int64
			changed      int64
		)
		if err := rows.Scan(&id, &status, &g.Reason, &g.Units, &since, &until, &changed); err != nil {
			return nil, err
		}
		name, ok := names[id]
		if !ok || !slices.Contains(statuses, state.UnitStatus(status)) {
			continue // registered after the model list was read, or not asked for
		}
		g.Model, g.Status, g.Span, g.Changed = name, state.UnitStatus(status), window(since, until), fromMicros(changed)
		out = append(out, g)
	}
	return out, rows.Err()
}

// FailingUnits implements state.StuckReader: a scan of the partial index
// units_failing (migration 0014) for env's models, its condition repeated
// word for word, as SQLite reads a partial index only for a WHERE holding
// its terms.
func (s *Store) FailingUnits(ctx context.Context, env string, fn func(state.Unit) error) error {
	return s.eachEnvUnit(ctx, env, "failing units of", `SELECT u."model_id", `+prefixedUnitColumns+`
		FROM "models" m JOIN "units" u INDEXED BY "units_failing" ON u."model_id" = m."id"
		WHERE m."env" = ? AND (u."status" = 'failed' OR (u."status" = 'pending' AND u."not_before" IS NOT NULL))
		ORDER BY u."model_id", u."since", u."until"`, []any{env}, fn)
}
