package postgres

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// The kept summary of migration 0010: status_counts and coverage, changed
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

// appliedAtOf is the applied_at a completion gives its unit (zero when the
// outcome does not apply it).
func appliedAtOf(o state.Outcome) time.Time {
	if o.Status != state.Applied {
		return time.Time{}
	}
	return o.At
}

// summaryCTEs appends to a record statement's args the parameters of the
// CTEs that keep the summary in step with chs, and returns those CTEs
// (each starting with a comma) numbered after the args already there.
//
// Counts are added, one row per key in key order: ON CONFLICT may touch a
// row once per statement, and taking the rows' locks in (env, model,
// status) order means two transactions can never deadlock on them. The
// applied row also keeps the model's newest applied_at: a completion
// raises it to its own; any other change into or out of applied (a mark,
// a bulldozer, Delete, Uncover) recounts it from the model's applied units.
//
// Coverage is rebuilt only within the windows of the changes that moved
// applied units, per model: the islands overlapping or touching them lose
// those windows and gain the applied units found there, merged. That reads
// the units the change touched, not the model's history.
//
// The recount, the newest already kept and the rebuild read the
// statement's snapshot, which is right because record takes the model's
// summary lock in an earlier statement (summaryLocks): every transaction
// that moves its applied units holds it until commit, so the snapshot
// (READ COMMITTED, taken after the lock)
// holds every other committed change and this transaction's own.
func summaryCTEs(chs []change, args []any) ([]any, string) {
	sum := map[statusKey]int{}
	newest := map[modelKey]time.Time{}
	recount := map[modelKey]bool{}
	touched := map[modelKey][]state.Window{}
	// grown: every applied change of the model is a completion, so the
	// windows touched are covered now and no unit needs reading.
	grown := map[modelKey]bool{}
	for _, c := range chs {
		k := modelKey{c.env, c.model}
		for _, d := range unitDeltas(c) {
			sum[statusKey{c.env, c.model, d.status}] += d.n
		}
		if !movesApplied(c) {
			continue
		}
		if c.to == state.Applied && !c.appliedAt.IsZero() {
			if c.appliedAt.After(newest[k]) {
				newest[k] = c.appliedAt
			}
		} else {
			recount[k] = true
		}
		if _, seen := grown[k]; !seen {
			grown[k] = true
		}
		grown[k] = grown[k] && !recount[k]
		if !c.window.IsZero() {
			touched[k] = append(touched[k], c.window)
		}
	}
	var sql string
	keys := make([]statusKey, 0, len(sum))
	for k, n := range sum {
		m := modelKey{k.env, k.model}
		if n != 0 || k.status == state.Applied && (recount[m] || !newest[m].IsZero()) {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.SortFunc(keys, func(a, b statusKey) int {
			return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.model, b.model), cmp.Compare(a.status, b.status))
		})
		n := len(keys)
		envs, models, statuses, ns := make([]string, n), make([]string, n), make([]string, n), make([]int64, n)
		ats, recounts := make([]pgtype.Timestamptz, n), make([]bool, n)
		for i, k := range keys {
			m := modelKey{k.env, k.model}
			envs[i], models[i], statuses[i], ns[i] = k.env, k.model, string(k.status), int64(sum[k])
			if k.status == state.Applied {
				ats[i] = pgtype.Timestamptz{Time: newest[m], Valid: !newest[m].IsZero()}
				recounts[i] = recount[m]
			}
		}
		p := len(args)
		args = append(args, envs, models, statuses, ns, ats, recounts)
		sql += fmt.Sprintf(statusCount, p+1, p+2, p+3, p+4, p+5, p+6)
	}
	if len(touched) > 0 {
		var envs, models []string
		var sinces, untils []pgtype.Timestamptz
		var grows []bool
		byModel := func(a, b modelKey) int { return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.model, b.model)) }
		for _, k := range slices.SortedFunc(maps.Keys(touched), byModel) {
			for _, w := range state.NewIntervalSet(touched[k]...).Windows() {
				envs, models = append(envs, k.env), append(models, k.model)
				sinces = append(sinces, pgtype.Timestamptz{Time: w.Since, Valid: true})
				untils = append(untils, pgtype.Timestamptz{Time: w.Until, Valid: true})
				grows = append(grows, grown[k])
			}
		}
		p := len(args)
		args = append(args, envs, models, sinces, untils, grows)
		sql += fmt.Sprintf(coverageRebuild, p+1, p+2, p+3, p+4, p+5)
	}
	return args, sql
}

// movesApplied reports whether c moves units into or out of applied: the
// changes whose summary parts read the statement's snapshot (the newest
// applied_at, the coverage islands) and so need their model's summary
// lock (summaryLocks).
func movesApplied(c change) bool {
	if c.from == state.Applied || c.to == state.Applied {
		return true
	}
	for _, d := range unitDeltas(c) {
		if d.status == state.Applied {
			return true
		}
	}
	return false
}

// summaryLocks are the advisory lock keys of the models whose applied units
// chs move, sorted. record takes them, exclusively, in a statement before
// the one that keeps the summary: that statement's snapshot (READ
// COMMITTED) is then taken after every other transaction that kept the
// same model's summary has committed, so the newest applied_at it reads
// and the islands it rebuilds include theirs. Without them two commits of
// one model would each rebuild its coverage from a snapshot without the
// other's units. Sorted, two commits over the same models take them in
// the same order and cannot deadlock; commits of other models never wait.
func (s *Store) summaryLocks(chs []change) []int64 {
	var keys []int64
	for _, c := range chs {
		if movesApplied(c) {
			keys = append(keys, lockKey("bollhav.summary:"+s.schema+"\x00"+c.env+"\x00"+c.model))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// statusCount is summaryCTEs's counts part: each key's delta added, and on
// the applied row the newest applied_at — recounted, or the greater of the
// kept one and the completions'.
const statusCount = `, status_counted AS (
		    INSERT INTO {schema}.status_counts AS c (env, model, status, units, newest)
		    SELECT t.env, t.model, t.status, t.units, CASE
		        WHEN t.status <> 'applied' THEN NULL
		        WHEN t.recount THEN (SELECT max(u.applied_at) FROM {schema}.units u
		                             WHERE u.env = t.env AND u.model = t.model AND u.status = 'applied')
		        ELSE greatest(t.newest, (SELECT o.newest FROM {schema}.status_counts o
		                                 WHERE o.env = t.env AND o.model = t.model AND o.status = 'applied'))
		        END
		    FROM unnest($%d::text[], $%d::text[], $%d::text[], $%d::bigint[], $%d::timestamptz[], $%d::bool[])
		        AS t (env, model, status, units, newest, recount)
		    ON CONFLICT (env, model, status) DO UPDATE SET units = c.units + excluded.units, newest = excluded.newest
		)`

// coverageRebuild is summaryCTEs's coverage part: touched is each model's
// changed windows as one multirange h; uncovered deletes the islands that
// overlap or touch h (found by the hull, then tested against h); covered
// inserts (those islands - h) + (applied units overlapping h) * h, whose
// union merges every island that now touches another. A model that only
// gained applied units (grown: completions) has h covered, unread.
const coverageRebuild = `, touched AS (
		    SELECT env, model, range_agg(tstzrange(since, until, '[)')) AS h, bool_and(grown) AS grown
		    FROM unnest($%d::text[], $%d::text[], $%d::timestamptz[], $%d::timestamptz[], $%d::bool[])
		        AS t (env, model, since, until, grown)
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
		        + CASE WHEN t.grown THEN t.h
		               ELSE coalesce((SELECT range_agg(u.span) FROM {schema}.units u
		                              WHERE u.env = t.env AND u.model = t.model AND u.status = 'applied'
		                                AND u.since < upper(t.h) AND u.until > lower(t.h)
		                                AND u.since >= lower(t.h) - (SELECT m.longest_unit FROM {schema}.models m
		                                                             WHERE m.env = t.env AND m.name = t.model) * interval '1 microsecond'
		                                AND u.span && t.h), '{}'::tstzmultirange) * t.h END
		    ) AS r
		)`
