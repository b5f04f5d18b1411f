package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// Register records an environment's models and the edges of those models in
// one transaction (RegisterSeq).
func (s *Store) Register(ctx context.Context, env string, models []state.ModelRecord, edges []state.EdgeRecord, now time.Time) (state.Registered, error) {
	return s.RegisterSeq(ctx, env, slices.Values(models), edges, now)
}

// registerBatch is how many models RegisterSeq writes in one statement.
const registerBatch = 1000

// RegisterSeq records an environment's models, as models yields them, and
// the edges of those models in one transaction, the models written
// registerBatch at a time. Registrations of one environment are serialized
// by an advisory lock, so two processes registering new models at once
// cannot hand out the same task id, and what each counts as created or
// changed is what it found under the lock.
func (s *Store) RegisterSeq(ctx context.Context, env string, models iter.Seq[state.ModelRecord], edges []state.EdgeRecord, now time.Time) (state.Registered, error) {
	var reg state.Registered
	err := pgx.BeginTxFunc(ctx, s.pool, s.begin, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.register:"+s.schema+"\x00"+env)); err != nil {
			return err
		}
		reg = state.Registered{TaskIDs: map[string]int{}}
		seen := map[string]bool{}
		batch := make([]state.ModelRecord, 0, registerBatch)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			names := make([]string, len(batch))
			for i, m := range batch {
				names[i] = m.Name
			}
			done, err := s.upsertModels(ctx, tx, env, batch, names, now)
			if err != nil {
				return err
			}
			maps.Copy(reg.TaskIDs, done.TaskIDs)
			reg.Created = append(reg.Created, done.Created...)
			reg.Changed = append(reg.Changed, done.Changed...)
			var defs []state.DefinitionRecord
			for _, m := range batch {
				if m.Fingerprint != "" {
					defs = append(defs, state.DefinitionRecord{Env: env, Model: m.Name, Fingerprint: m.Fingerprint, Definition: m.Definition, FirstSeen: now})
				}
			}
			if err := s.keepDefinitions(ctx, tx, defs); err != nil {
				return fmt.Errorf("register: keeping the definitions: %w", err)
			}
			if _, err := tx.Exec(ctx, s.sql(`DELETE FROM {schema}.edges WHERE env = $1 AND task = ANY($2)`), env, names); err != nil {
				return err
			}
			batch = batch[:0]
			return nil
		}
		for m := range models {
			if seen[m.Name] {
				return fmt.Errorf("register: model %s is named twice", m.Name)
			}
			if len(m.Definition) > 0 && !json.Valid(m.Definition) {
				return fmt.Errorf("register: model %s: the definition is not valid JSON", m.Name)
			}
			seen[m.Name] = true
			if batch = append(batch, m); len(batch) == registerBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		return s.insertEdges(ctx, tx, env, edges)
	})
	if err != nil {
		return state.Registered{}, err
	}
	return reg, nil
}

// upsertModels writes the registrations and returns what it did: an
// existing model keeps its id (and its registration time while its content
// hash is unchanged), and is changed unless state.SameRegistration; new
// ones take the next free ids in the order given.
func (s *Store) upsertModels(ctx context.Context, tx pgx.Tx, env string, models []state.ModelRecord, names []string, now time.Time) (state.Registered, error) {
	rows, err := tx.Query(ctx, s.sql(`
		SELECT name, task_id, content_hash, registered_at, pipeline, temporality, flexibility, grain, timezone, start_at, end_at
		FROM {schema}.models
		WHERE env = $1 AND name = ANY($2)`), env, names)
	if err != nil {
		return state.Registered{}, err
	}
	old := make(map[string]state.ModelRecord)
	var (
		k          state.ModelRecord
		start, end pgtype.Timestamptz
	)
	_, err = pgx.ForEachRow(rows, []any{&k.Name, &k.TaskID, &k.ContentHash, &k.RegisteredAt, &k.Pipeline, &k.Temporality, &k.Flexibility,
		&k.Interval, &k.Timezone, &start, &end}, func() error {
		k.Start, k.End = timeOf(start), timePtrOf(end)
		old[k.Name] = k
		return nil
	})
	if err != nil {
		return state.Registered{}, err
	}
	var next int
	if err := tx.QueryRow(ctx, s.sql(`SELECT coalesce(max(task_id), 0) FROM {schema}.models WHERE env = $1`), env).Scan(&next); err != nil {
		return state.Registered{}, err
	}

	n := len(models)
	var (
		reg                                                  = state.Registered{TaskIDs: make(map[string]int, n)}
		taskIDs                                              = make([]int32, n)
		pipelines, temporalities, flexibilities, grains, tzs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		hashes                                               = make([]string, n)
		defs                                                 = make([]pgtype.Text, n)
		starts, ends, registered                             = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
	)
	for i, m := range models {
		id, regAt := 0, now
		if k, ok := old[m.Name]; ok {
			id = k.TaskID
			if k.ContentHash == m.ContentHash {
				regAt = k.RegisteredAt
			}
			if !state.SameRegistration(k, m) {
				reg.Changed = append(reg.Changed, m.Name)
			}
		} else {
			next++
			id = next
			reg.Created = append(reg.Created, m.Name)
		}
		reg.TaskIDs[m.Name], taskIDs[i] = id, int32(id)
		pipelines[i], temporalities[i], flexibilities[i] = m.Pipeline, m.Temporality, m.Flexibility
		grains[i], tzs[i], hashes[i] = m.Interval, m.Timezone, m.ContentHash
		defs[i] = pgtype.Text{String: string(m.Definition), Valid: len(m.Definition) > 0}
		starts[i], ends[i], registered[i] = nullTime(m.Start), nullTimePtr(m.End), nullTime(regAt)
	}
	_, err = tx.Exec(ctx, s.sql(`
		INSERT INTO {schema}.models AS m (env, name, task_id, pipeline, temporality, flexibility, grain, timezone,
		                                  start_at, end_at, definition, content_hash, registered_at)
		SELECT $1, r.name, r.task_id, r.pipeline, r.temporality, r.flexibility, r.grain, r.timezone,
		       r.start_at, r.end_at, r.definition::json, r.content_hash, r.registered_at
		FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
		            $9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[], $13::timestamptz[])
		     AS r (name, task_id, pipeline, temporality, flexibility, grain, timezone,
		           start_at, end_at, definition, content_hash, registered_at)
		ON CONFLICT (env, name) DO UPDATE SET
		    task_id = excluded.task_id, pipeline = excluded.pipeline, temporality = excluded.temporality,
		    flexibility = excluded.flexibility, grain = excluded.grain, timezone = excluded.timezone,
		    start_at = excluded.start_at, end_at = excluded.end_at, definition = excluded.definition,
		    content_hash = excluded.content_hash, registered_at = excluded.registered_at`),
		env, names, taskIDs, pipelines, temporalities, flexibilities, grains, tzs,
		starts, ends, defs, hashes, registered)
	if err != nil {
		return state.Registered{}, err
	}
	// Units carry their model's flexibility for the exclusion constraint;
	// keep them in step when a registration changes it.
	_, err = tx.Exec(ctx, s.sql(`
		UPDATE {schema}.units u SET flexible = (m.flexibility = 'flex')
		FROM {schema}.models m
		WHERE m.env = $1 AND m.name = ANY($2) AND u.env = m.env AND u.model = m.name
		  AND u.flexible <> (m.flexibility = 'flex')`), env, names)
	if err != nil {
		return state.Registered{}, fmt.Errorf("register: changing a model's flexibility: %w", err)
	}
	return reg, nil
}

// insertEdges adds edges (the edges of the models registered, whose old
// edges are deleted).
func (s *Store) insertEdges(ctx context.Context, tx pgx.Tx, env string, edges []state.EdgeRecord) error {
	if len(edges) == 0 {
		return nil
	}
	n := len(edges)
	tasks, deps, types := make([]string, n), make([]string, n), make([]string, n)
	implicit, cross := make([]bool, n), make([]bool, n)
	for i, e := range edges {
		tasks[i], deps[i], types[i], implicit[i], cross[i] = e.Task, e.DependsOn, e.Type, e.Implicit, e.Cross
	}
	_, err := tx.Exec(ctx, s.sql(`
		INSERT INTO {schema}.edges (env, task, depends_on, type, implicit, cross_pipeline)
		SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[], $6::bool[])
		ON CONFLICT DO NOTHING`), env, tasks, deps, types, implicit, cross)
	return err
}

const modelColumns = `env, name, task_id, pipeline, temporality, flexibility, grain, timezone,
	start_at, end_at, definition, content_hash, registered_at`

func scanModel(row pgx.CollectableRow) (state.ModelRecord, error) {
	var (
		m          state.ModelRecord
		start, end pgtype.Timestamptz
	)
	err := row.Scan(&m.Env, &m.Name, &m.TaskID, &m.Pipeline, &m.Temporality, &m.Flexibility, &m.Interval, &m.Timezone,
		&start, &end, &m.Definition, &m.ContentHash, &m.RegisteredAt)
	m.Start, m.End = timeOf(start), timePtrOf(end)
	m.RegisteredAt = m.RegisteredAt.UTC()
	return m, err
}

// Models lists an environment's registered models by name.
func (s *Store) Models(ctx context.Context, env string) ([]state.ModelRecord, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+modelColumns+` FROM {schema}.models WHERE env = $1 ORDER BY name`), env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanModel)
}

// modelHeadColumns are modelColumns with no definition (NULL).
const modelHeadColumns = `env, name, task_id, pipeline, temporality, flexibility, grain, timezone,
	start_at, end_at, NULL::json, content_hash, registered_at`

// ModelHeads is Models without the definitions.
func (s *Store) ModelHeads(ctx context.Context, env string) ([]state.ModelRecord, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+modelHeadColumns+` FROM {schema}.models WHERE env = $1 ORDER BY name`), env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanModel)
}

// Model returns one registration, or ErrNotFound.
func (s *Store) Model(ctx context.Context, env, name string) (state.ModelRecord, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+modelColumns+` FROM {schema}.models WHERE env = $1 AND name = $2`), env, name)
	if err != nil {
		return state.ModelRecord{}, err
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanModel)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, state.ModelNotFound(env, name)
	}
	return m, err
}

// Edges lists an environment's task edges by task, then depends_on.
func (s *Store) Edges(ctx context.Context, env string) ([]state.EdgeRecord, error) {
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT env, task, depends_on, type, implicit, cross_pipeline FROM {schema}.edges
		WHERE env = $1 ORDER BY task, depends_on, type`), env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.EdgeRecord, error) {
		var e state.EdgeRecord
		err := row.Scan(&e.Env, &e.Task, &e.DependsOn, &e.Type, &e.Implicit, &e.Cross)
		return e, err
	})
}

// modelFlexible looks a registration up for a model-scoped call: ErrNotFound
// when the model is not registered in env, otherwise whether it is flexible.
func (s *Store) modelFlexible(ctx context.Context, q querier, env, model string) (bool, error) {
	var flex string
	err := q.QueryRow(ctx, s.sql(`SELECT flexibility FROM {schema}.models WHERE env = $1 AND name = $2`), env, model).Scan(&flex)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, state.ModelNotFound(env, model)
	}
	return flex == "flex", err
}
