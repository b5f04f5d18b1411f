package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/bollhav/bollhav/state"
)

// querier is what both a pool and a transaction offer.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// modelRef is what unit queries need to know about a model.
type modelRef struct {
	id       int64
	env      string
	name     string
	flexible bool
	// maxUnit bounds the length of the model's units, in microseconds.
	maxUnit int64
}

// lookup resolves a registered model, or state.ErrNotFound.
func lookup(ctx context.Context, q querier, env, name string) (modelRef, error) {
	m := modelRef{env: env, name: name}
	var flex string
	err := q.QueryRowContext(ctx, `SELECT "id", "flexibility", "max_unit" FROM "models" WHERE "env" = ? AND "name" = ?`, env, name).
		Scan(&m.id, &flex, &m.maxUnit)
	if errors.Is(err, sql.ErrNoRows) {
		return m, state.ModelNotFound(env, name)
	}
	if err != nil {
		return m, fmt.Errorf("sqlite: look up model %s: %w", name, err)
	}
	m.flexible = flex == "flex"
	return m, nil
}

// Register implements state.Store (RegisterSeq).
func (s *Store) Register(ctx context.Context, env string, models []state.ModelRecord, edges []state.EdgeRecord, now time.Time) (state.Registered, error) {
	return s.RegisterSeq(ctx, env, slices.Values(models), edges, now)
}

// RegisterSeq implements state.Store. The transaction is BEGIN IMMEDIATE on
// the one write connection, so it reads each model's registration with no
// other registration in between: what it counts as created or changed is
// what it wrote.
func (s *Store) RegisterSeq(ctx context.Context, env string, models iter.Seq[state.ModelRecord], edges []state.EdgeRecord, now time.Time) (state.Registered, error) {
	var reg state.Registered
	err := s.write(ctx, func(tx *sql.Tx) error {
		reg = state.Registered{TaskIDs: map[string]int{}}
		var next int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max("task_id"), 0) + 1 FROM "models" WHERE "env" = ?`, env).Scan(&next); err != nil {
			return err
		}
		for m := range models {
			if m.Name == "" {
				return errors.New("sqlite: register: a model without a name")
			}
			id, outcome, err := registerModel(ctx, tx, env, m, now, &next)
			if err != nil {
				return fmt.Errorf("sqlite: register %s: %w", m.Name, err)
			}
			reg.TaskIDs[m.Name] = id
			switch outcome {
			case regCreated:
				reg.Created = append(reg.Created, m.Name)
			case regChanged:
				reg.Changed = append(reg.Changed, m.Name)
			}
			if m.Fingerprint != "" {
				if err := keepDefinition(ctx, tx, env, state.DefinitionRecord{Model: m.Name, Fingerprint: m.Fingerprint,
					Definition: definition(m.Definition), FirstSeen: now}); err != nil {
					return fmt.Errorf("sqlite: register %s: keeping its definition: %w", m.Name, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM "edges" WHERE "env" = ? AND "task" = ?`, env, m.Name); err != nil {
				return err
			}
		}
		for _, e := range edges {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO "edges" ("env", "task", "depends_on", "type", "implicit", "cross") VALUES (?, ?, ?, ?, ?, ?)`,
				env, e.Task, e.DependsOn, e.Type, e.Implicit, e.Cross); err != nil {
				return fmt.Errorf("sqlite: register edge %s → %s: %w", e.Task, e.DependsOn, err)
			}
		}
		return nil
	})
	if err != nil {
		return state.Registered{}, err
	}
	return reg, nil
}

// What registerModel did to a registration.
const (
	regUnchanged = iota
	regCreated
	regChanged
)

// registerModel inserts or replaces one model and returns its task id and
// whether it created the row, changed it or left it as it was
// (state.SameRegistration); a new model takes *next. An unchanged content
// hash keeps the registration time, so "registered at" means "defined like
// this since".
func registerModel(ctx context.Context, tx *sql.Tx, env string, m state.ModelRecord, now time.Time, next *int) (int, int, error) {
	var (
		taskID     int
		old        state.ModelRecord
		start, end sql.NullInt64
	)
	err := tx.QueryRowContext(ctx, `SELECT "task_id", "content_hash", "pipeline", "temporality", "flexibility", "interval", "timezone", "start", "end"
		FROM "models" WHERE "env" = ? AND "name" = ?`, env, m.Name).
		Scan(&taskID, &old.ContentHash, &old.Pipeline, &old.Temporality, &old.Flexibility, &old.Interval, &old.Timezone, &start, &end)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		taskID = *next
		*next++
		_, err = tx.ExecContext(ctx, `INSERT INTO "models" ("env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval", "timezone", "start", "end", "definition", "content_hash", "registered_at")
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			env, m.Name, taskID, m.Pipeline, m.Temporality, m.Flexibility, m.Interval, m.Timezone,
			nullMicrosOf(m.Start), nullMicros(m.End), definition(m.Definition), m.ContentHash, micros(now))
		return taskID, regCreated, err
	case err != nil:
		return 0, 0, err
	}
	old.Start, old.End = timeOrZero(start), timePtr(end)
	outcome := regChanged
	if state.SameRegistration(old, m) {
		outcome = regUnchanged
	}
	_, err = tx.ExecContext(ctx, `UPDATE "models" SET "pipeline" = ?, "temporality" = ?, "flexibility" = ?, "interval" = ?, "timezone" = ?,
			"start" = ?, "end" = ?, "definition" = ?, "content_hash" = ?,
			"registered_at" = CASE WHEN "content_hash" = ? THEN "registered_at" ELSE ? END
		WHERE "env" = ? AND "name" = ?`,
		m.Pipeline, m.Temporality, m.Flexibility, m.Interval, m.Timezone,
		nullMicrosOf(m.Start), nullMicros(m.End), definition(m.Definition), m.ContentHash,
		m.ContentHash, micros(now), env, m.Name)
	return taskID, outcome, err
}

// definition stores a nil definition as an empty JSON object, so it always
// reads back as JSON.
func definition(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

const modelColumns = `"env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval", "timezone", "start", "end", "definition", "content_hash", "registered_at"`

func scanModel(sc rowScanner) (state.ModelRecord, error) {
	var m state.ModelRecord
	var start, end sql.NullInt64
	var registered int64
	err := sc.Scan(&m.Env, &m.Name, &m.TaskID, &m.Pipeline, &m.Temporality, &m.Flexibility, &m.Interval, &m.Timezone,
		&start, &end, &m.Definition, &m.ContentHash, &registered)
	m.Start = timeOrZero(start)
	m.End = timePtr(end)
	m.RegisteredAt = fromMicros(registered)
	return m, err
}

// modelHeadColumns are modelColumns with no definition (NULL).
const modelHeadColumns = `"env", "name", "task_id", "pipeline", "temporality", "flexibility", "interval", "timezone", "start", "end", NULL, "content_hash", "registered_at"`

// Models implements state.Store.
func (s *Store) Models(ctx context.Context, env string) ([]state.ModelRecord, error) {
	return queryAll(ctx, s.r, "models", scanModel, `SELECT `+modelColumns+` FROM "models" WHERE "env" = ? ORDER BY "name"`, env)
}

// ModelHeads implements state.Store.
func (s *Store) ModelHeads(ctx context.Context, env string) ([]state.ModelRecord, error) {
	return queryAll(ctx, s.r, "model heads", scanModel, `SELECT `+modelHeadColumns+` FROM "models" WHERE "env" = ? ORDER BY "name"`, env)
}

// Model implements state.Store.
func (s *Store) Model(ctx context.Context, env, name string) (state.ModelRecord, error) {
	m, err := scanModel(s.r.QueryRowContext(ctx, `SELECT `+modelColumns+` FROM "models" WHERE "env" = ? AND "name" = ?`, env, name))
	if errors.Is(err, sql.ErrNoRows) {
		return m, state.ModelNotFound(env, name)
	}
	if err != nil {
		return m, fmt.Errorf("sqlite: model %s: %w", name, err)
	}
	return m, nil
}

// Edges implements state.Store.
func (s *Store) Edges(ctx context.Context, env string) ([]state.EdgeRecord, error) {
	return queryAll(ctx, s.r, "edges", func(sc rowScanner) (state.EdgeRecord, error) {
		var e state.EdgeRecord
		err := sc.Scan(&e.Env, &e.Task, &e.DependsOn, &e.Type, &e.Implicit, &e.Cross)
		return e, err
	}, `SELECT "env", "task", "depends_on", "type", "implicit", "cross" FROM "edges" WHERE "env" = ? ORDER BY "task", "depends_on", "type"`, env)
}
