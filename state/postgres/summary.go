package postgres

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// The kept summary of migration 0009: status_counts and coverage, changed
// by every transition in the statement that appends it to the change feed
// (record), so it costs no round trip and commits with the units.

// statusDelta is n units of a model entering status (negative: leaving it).
type statusDelta struct {
	status state.UnitStatus
	n      int
}

// unitDeltas is what c did to its model's counts by status: its own
// explicit deltas when it has them (Uncover's trimmed and split units,
// which the feed records as removed parts but which stay), otherwise count
// units moved from one status to the other (no from: inserted; no to:
// deleted).
func unitDeltas(c change) []statusDelta {
	if c.units != nil {
		return c.units
	}
	var out []statusDelta
	if c.from != "" {
		out = append(out, statusDelta{c.from, -c.count})
	}
	if c.to != "" {
		out = append(out, statusDelta{c.to, c.count})
	}
	return out
}

type statusKey struct {
	env, model string
	status     state.UnitStatus
}

type modelKey struct{ env, model string }

// summaryCTEs appends to a record statement's args the parameters of the
// CTEs that keep the summary in step with chs, and returns those CTEs
// (each starting with a comma) numbered after the args already there.
//
// Counts are added, one row per key in key order: ON CONFLICT may touch a
// row once per statement, and taking the rows' locks in (env, model,
// status) order means two transactions can never deadlock on them.
//
// Coverage is rebuilt only within the windows of the changes that moved
// applied units, per model: the islands overlapping or touching them lose
// those windows and gain the applied units found there, merged. That reads
// the units the change touched, not the model's history. It reads them in
// the statement's snapshot, which is right because record takes the feed's
// lock in an earlier statement: every transaction that changes units holds
// it until commit, so the snapshot (READ COMMITTED, taken after the lock)
// holds every other committed change and this transaction's own.
func summaryCTEs(chs []change, args []any) ([]any, string) {
	sum := map[statusKey]int{}
	touched := map[modelKey][]state.Window{}
	for _, c := range chs {
		moved := false
		for _, d := range unitDeltas(c) {
			sum[statusKey{c.env, c.model, d.status}] += d.n
			moved = moved || d.status == state.Applied
		}
		if (moved || c.from == state.Applied || c.to == state.Applied) && !c.window.IsZero() {
			k := modelKey{c.env, c.model}
			touched[k] = append(touched[k], c.window)
		}
	}
	var sql string
	keys := make([]statusKey, 0, len(sum))
	for k, n := range sum {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.SortFunc(keys, func(a, b statusKey) int {
			return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.model, b.model), cmp.Compare(a.status, b.status))
		})
		envs, models, statuses, ns := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
		for i, k := range keys {
			envs[i], models[i], statuses[i], ns[i] = k.env, k.model, string(k.status), int64(sum[k])
		}
		n := len(args)
		args = append(args, envs, models, statuses, ns)
		sql += fmt.Sprintf(`, status_counted AS (
		    INSERT INTO {schema}.status_counts AS c (env, model, status, units)
		    SELECT * FROM unnest($%d::text[], $%d::text[], $%d::text[], $%d::bigint[])
		    ON CONFLICT (env, model, status) DO UPDATE SET units = c.units + excluded.units
		)`, n+1, n+2, n+3, n+4)
	}
	if len(touched) > 0 {
		var envs, models []string
		var sinces, untils []pgtype.Timestamptz
		byModel := func(a, b modelKey) int { return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.model, b.model)) }
		for _, k := range slices.SortedFunc(maps.Keys(touched), byModel) {
			for _, w := range state.NewIntervalSet(touched[k]...).Windows() {
				envs, models = append(envs, k.env), append(models, k.model)
				sinces = append(sinces, pgtype.Timestamptz{Time: w.Since, Valid: true})
				untils = append(untils, pgtype.Timestamptz{Time: w.Until, Valid: true})
			}
		}
		n := len(args)
		args = append(args, envs, models, sinces, untils)
		sql += fmt.Sprintf(coverageRebuild, n+1, n+2, n+3, n+4)
	}
	return args, sql
}

// coverageRebuild is summaryCTEs's coverage part: touched is each model's
// changed windows as one multirange h; uncovered deletes the islands that
// overlap or touch h (found by the hull, then tested against h); covered
// inserts (those islands - h) + (applied units overlapping h) * h, whose
// union merges every island that now touches another.
const coverageRebuild = `, touched AS (
		    SELECT env, model, range_agg(tstzrange(since, until, '[)')) AS h
		    FROM unnest($%d::text[], $%d::text[], $%d::timestamptz[], $%d::timestamptz[]) AS t (env, model, since, until)
		    GROUP BY env, model
		), uncovered AS (
		    DELETE FROM {schema}.coverage c USING touched t
		    WHERE c.env = t.env AND c.model = t.model AND c.until >= lower(t.h) AND c.since <= upper(t.h)
		      AND (tstzrange(c.since, c.until, '[)') && t.h OR tstzrange(c.since, c.until, '[)') -|- t.h)
		    RETURNING c.env, c.model, c.since, c.until
		), covered AS (
		    INSERT INTO {schema}.coverage (env, model, since, until)
		    SELECT t.env, t.model, lower(r), upper(r)
		    FROM touched t, unnest(
		        (coalesce((SELECT range_agg(tstzrange(o.since, o.until, '[)')) FROM uncovered o
		                   WHERE o.env = t.env AND o.model = t.model), '{}'::tstzmultirange) - t.h)
		        + (coalesce((SELECT range_agg(u.span) FROM {schema}.units u
		                     WHERE u.env = t.env AND u.model = t.model AND u.status = 'applied'
		                       AND u.span && range_merge(t.h) AND u.span && t.h), '{}'::tstzmultirange) * t.h)
		    ) AS r
		)`
