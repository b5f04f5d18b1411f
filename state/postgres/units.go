package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// Prefill inserts a pending unit for every window the model has no unit of
// yet, in one statement: the windows travel as two timestamptz arrays that
// unnest pairs up again, so 100,000 windows are one round trip, not 100,000.
func (s *Store) Prefill(ctx context.Context, req state.PrefillRequest) (int, error) {
	env, model, windows, now := req.Env, req.Model, req.Windows, req.Now
	since, until := make([]pgtype.Timestamptz, len(windows)), make([]pgtype.Timestamptz, len(windows))
	var longest int64 // microseconds, rounded up
	for i, w := range windows {
		if err := state.CheckWindow("prefill "+model, w); err != nil {
			return 0, err
		}
		since[i], until[i] = windowBounds(w)
		if !w.IsZero() {
			longest = max(longest, (w.Duration() + time.Microsecond - 1).Microseconds())
		}
	}
	var created int
	err := s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		// Looking the model up raises its longest_unit in the same
		// statement, before any longer unit exists.
		var flex string
		err := tx.QueryRow(ctx, s.sql(`
			UPDATE {schema}.models SET longest_unit = greatest(longest_unit, $3)
			WHERE env = $1 AND name = $2 RETURNING flexibility`), env, model, longest).Scan(&flex)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, state.ModelNotFound(env, model)
		}
		if err != nil {
			return nil, err
		}
		var lo, hi pgtype.Timestamptz
		err = tx.QueryRow(ctx, s.sql(`
			WITH created AS (
			    INSERT INTO {schema}.units AS u (env, model, flexible, since, until, status, updated_at)
			    SELECT $1, $2, $3, w.since, w.until, 'pending', $6
			    FROM unnest($4::timestamptz[], $5::timestamptz[]) AS w (since, until)
			    ON CONFLICT DO NOTHING
			    RETURNING u.since, u.until
			)
			SELECT count(*), min(since), max(until) FROM created`),
			env, model, flex == "flex", since, until, now).Scan(&created, &lo, &hi)
		if err != nil || created == 0 {
			return nil, err
		}
		return []change{{env: env, model: model, window: windowOf(lo, hi), to: state.Pending, count: created, at: now}}, nil
	})
	if err != nil {
		return 0, err
	}
	return created, nil
}

// ScanUnits streams the units matching q by model, then window. Rows are
// decoded as they arrive off the connection, so memory stays flat however
// many there are; fn runs while the query holds a pool connection.
func (s *Store) ScanUnits(ctx context.Context, q state.UnitQuery, fn func(state.Unit) error) error {
	var where filter
	from := `{schema}.units u`
	where.add("u.env = $%d", q.Env)
	switch {
	case q.Model != "":
		// Whether the model is registered is asked only when no unit
		// comes back (registered): a unit proves it.
		model := where.add("u.model = $%d", q.Model)
		if !q.Window.IsZero() {
			where.addOverlap("u", q.Window, fmt.Sprintf(`SELECT longest_unit FROM {schema}.models WHERE env = $1 AND name = $%d`, model))
		}
	case !q.Window.IsZero():
		// One window across every model: a bounded range per model, each
		// with its own longest unit, instead of one scan of the whole
		// environment.
		from = `{schema}.models m CROSS JOIN LATERAL (
			SELECT * FROM {schema}.units u WHERE u.env = m.env AND u.model = m.name) u`
		where.conds[0] = "m.env = $1"
		where.addOverlap("u", q.Window, "m.longest_unit")
	}
	if len(q.Statuses) > 0 {
		where.add("u.status = ANY($%d)", statusStrings(q.Statuses))
	}
	found, err := s.eachUnit(ctx, `SELECT `+unitColumns+` FROM `+from+` WHERE `+where.sql()+`
		ORDER BY u.model, u.since, u.until`, where.args, fn)
	if err != nil || found || q.Model == "" {
		return err
	}
	return s.registered(ctx, q.Env, q.Model)
}

// eachUnit runs query (with {schema}), whose rows are unitColumns, and
// calls fn with each unit; found says whether a row came. Stopping early
// cancels the query instead of draining the rest of a million rows off
// the wire.
func (s *Store) eachUnit(ctx context.Context, query string, args []any, fn func(state.Unit) error) (found bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, s.sql(query), args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	sc := newUnitScanner()
	for rows.Next() {
		found = true
		u, err := sc.scan(rows)
		if err != nil {
			return found, err
		}
		if err := fn(u); err != nil {
			cancel()
			return found, err
		}
	}
	return found, rows.Err()
}

// registered is nil when model is registered in env, else ErrNotFound. A
// read of one model's units asks it only when it found none: units are
// created only for a registered model, and models are never deleted, so a
// unit proves the registration and a read that finds one saves the round
// trip (a trace of 500 blocked units makes thousands of such reads).
func (s *Store) registered(ctx context.Context, env, model string) error {
	key := env + "\x00" + model
	if _, ok := s.known.Load(key); ok {
		return nil
	}
	if _, err := s.modelFlexible(ctx, s.pool, env, model); err != nil {
		return err
	}
	s.known.Store(key, true)
	return nil
}

// FingerprintCounts reads env's applied units by model and fingerprint
// from applied_counts (migration 0006), which every transition keeps in
// step: a few rows per model whatever the number of applied units.
func (s *Store) FingerprintCounts(ctx context.Context, env, model string) ([]state.FingerprintCount, error) {
	q := `SELECT model, fingerprint, units FROM {schema}.applied_counts
		WHERE env = $1 AND units > 0 ORDER BY model, fingerprint`
	args := []any{env}
	if model != "" {
		q = `SELECT model, fingerprint, units FROM {schema}.applied_counts
		WHERE env = $1 AND model = $2 AND units > 0 ORDER BY model, fingerprint`
		args = append(args, model)
	}
	rows, err := s.pool.Query(ctx, s.sql(q), args...)
	if err != nil {
		return nil, err
	}
	var (
		out []state.FingerprintCount
		c   state.FingerprintCount
	)
	_, err = pgx.ForEachRow(rows, []any{&c.Model, &c.Fingerprint, &c.Count}, func() error {
		out = append(out, c)
		return nil
	})
	return out, err
}

// Stats counts a model's units by status, every status present, and finds
// the newest applied_at, in one aggregate on the server.
func (s *Store) Stats(ctx context.Context, env, model string) (state.UnitStats, error) {
	if _, err := s.modelFlexible(ctx, s.pool, env, model); err != nil {
		return state.UnitStats{}, err
	}
	st := state.UnitStats{Counts: make(map[state.UnitStatus]int, len(state.Statuses))}
	for _, status := range state.Statuses {
		st.Counts[status] = 0
	}
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT status, count(*), max(applied_at) FROM {schema}.units
		WHERE env = $1 AND model = $2 GROUP BY status`), env, model)
	if err != nil {
		return st, err
	}
	var (
		status string
		n      int
		last   pgtype.Timestamptz
	)
	_, err = pgx.ForEachRow(rows, []any{&status, &n, &last}, func() error {
		st.Counts[state.UnitStatus(status)] = n
		if status == string(state.Applied) {
			st.LastAppliedAt = timePtrOf(last)
		}
		return nil
	})
	return st, err
}

// Applied returns the model's applied rows overlapping w, by window: a
// range scan of units_sweep_applied from longest_unit before w, rather than
// a scan of the model's history.
func (s *Store) Applied(ctx context.Context, env, model string, w state.Window) ([]state.AppliedRow, error) {
	query, args := `
		SELECT since, until, applied_at, fingerprint FROM {schema}.units
		WHERE env = $1 AND model = $2 AND status = 'applied'
		ORDER BY since, until`, []any{env, model}
	if !w.IsZero() {
		query = `
		SELECT since, until, applied_at, fingerprint FROM {schema}.units
		WHERE env = $1 AND model = $2 AND status = 'applied' AND ` + appliedOverlap + `
		ORDER BY since, until`
		args = append(args, w.Since, w.Until)
	}
	// Binary rows decoded in place: a time.Time per bound, no pgtype value
	// or closure per row, so reading a long history costs its transfer.
	rows, err := s.pool.Query(ctx, s.sql(query), append([]any{pgx.QueryResultFormats{pgx.BinaryFormatCode}}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []state.AppliedRow
	seen := map[string]string{} // a model's few fingerprints, allocated once each
	for rows.Next() {
		raw := rows.RawValues()
		var a state.AppliedRow
		if raw[0] != nil {
			since, err := sweepMicros(raw[0])
			if err != nil {
				return nil, err
			}
			until, err := sweepMicros(raw[1])
			if err != nil {
				return nil, err
			}
			a.Window = state.Window{Since: time.UnixMicro(since).UTC(), Until: time.UnixMicro(until).UTC()}
		}
		at, err := sweepMicros(raw[2])
		if err != nil {
			return nil, err
		}
		a.AppliedAt = time.UnixMicro(at).UTC()
		if fp, ok := seen[string(raw[3])]; ok {
			a.Fingerprint = fp
		} else {
			a.Fingerprint = string(raw[3])
			seen[a.Fingerprint] = a.Fingerprint
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil || len(out) > 0 {
		return out, err
	}
	return nil, s.registered(ctx, env, model)
}

// appliedOverlap is "the unit overlaps [$3, $4)" for a model's applied
// units ($1 env, $2 model) as a range scan of units_sweep_applied (env,
// model, since, until): no unit starts more than the model's longest_unit
// before a window it overlaps.
const appliedOverlap = `since < $4 AND until > $3
		    AND since >= $3 - (SELECT longest_unit FROM {schema}.models WHERE env = $1 AND name = $2) * interval '1 microsecond'`

// Coverage is the union of the model's applied windows within w, computed
// by the server: range_agg merges the applied spans into a multirange, which
// is clipped to w and returned one island per row.
func (s *Store) Coverage(ctx context.Context, env, model string, w state.Window) (state.IntervalSet, error) {
	query, args := `
		SELECT lower(r), upper(r) FROM unnest((
		    SELECT range_agg(span) FROM {schema}.units
		    WHERE env = $1 AND model = $2 AND status = 'applied' AND span IS NOT NULL
		)) AS r`, []any{env, model}
	if !w.IsZero() {
		query = `
		SELECT lower(r), upper(r) FROM unnest((
		    SELECT range_agg(span) FROM {schema}.units
		    WHERE env = $1 AND model = $2 AND status = 'applied' AND ` + appliedOverlap + `
		) * tstzmultirange(tstzrange($3, $4, '[)'))) AS r`
		args = append(args, w.Since, w.Until)
	}
	rows, err := s.pool.Query(ctx, s.sql(query), args...)
	if err != nil {
		return state.IntervalSet{}, err
	}
	islands, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Window, error) {
		var since, until pgtype.Timestamptz
		err := row.Scan(&since, &until)
		return windowOf(since, until), err
	})
	if err == nil && len(islands) == 0 {
		err = s.registered(ctx, env, model)
	}
	return state.NewIntervalSet(islands...), err
}

// filter builds a WHERE clause whose conditions depend on the call. Each
// variant is its own statement, so PostgreSQL plans it with the indexes that
// fit instead of one generic plan full of "$3 IS NULL OR …".
type filter struct {
	conds []string
	args  []any
}

// add appends a condition with one parameter, written as $%d, and returns
// the parameter's number.
func (f *filter) add(cond string, arg any) int {
	f.args = append(f.args, arg)
	f.conds = append(f.conds, fmt.Sprintf(cond, len(f.args)))
	return len(f.args)
}

// addOverlap keeps units (alias a) overlapping w. longest is a subquery for
// the longest unit of the models concerned, in microseconds: no unit
// overlapping w starts before w.Since minus that, so the btree on since is
// read over a bounded range instead of from the start of history.
func (f *filter) addOverlap(a string, w state.Window, longest string) {
	f.args = append(f.args, w.Since, w.Until)
	s, e := len(f.args)-1, len(f.args)
	f.conds = append(f.conds, fmt.Sprintf(
		"%[1]s.since < $%[3]d AND %[1]s.until > $%[2]d AND %[1]s.since >= $%[2]d - (%[4]s) * interval '1 microsecond'",
		a, s, e, longest))
}

// addInside keeps units covered by w, as a range of since the btree reads
// directly.
func (f *filter) addInside(a string, w state.Window) {
	f.args = append(f.args, w.Since, w.Until)
	s, e := len(f.args)-1, len(f.args)
	f.conds = append(f.conds, fmt.Sprintf("%[1]s.since >= $%[2]d AND %[1]s.since < $%[3]d AND %[1]s.until <= $%[3]d", a, s, e))
}

func (f *filter) sql() string { return strings.Join(f.conds, " AND ") }
