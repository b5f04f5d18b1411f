package postgres

import (
	"cmp"
	"slices"
)

// appliedDelta is what a change does to the applied_counts table: n units
// of the change's model (negative: units that left applied or were
// removed) under fingerprint ("" unknown).
type appliedDelta struct {
	fingerprint string
	n           int
}

type countKey struct{ env, model, fingerprint string }

// countsInsert adds the deltas countDeltas gives ($10…$13) to
// applied_counts. record runs it in the statement that appends to the
// change feed, after the feed's lock: every transaction that changes counts
// holds that one lock first and commits right after, so count rows are
// never waited on and a hot model's row cannot deadlock two transactions;
// and it costs no round trip of its own.
const countsInsert = `INSERT INTO {schema}.applied_counts AS c (env, model, fingerprint, units)
		    SELECT * FROM unnest($10::text[], $11::text[], $12::text[], $13::bigint[])
		    ON CONFLICT (env, model, fingerprint) DO UPDATE SET units = c.units + excluded.units`

// countDeltas sums the applied deltas of chs by (env, model, fingerprint),
// drops those that cancel out, and returns them as countsInsert's four
// arrays, in key order (one row per key: ON CONFLICT may touch a row only
// once per statement).
func countDeltas(chs []change) []any {
	sum := map[countKey]int{}
	for _, c := range chs {
		for _, d := range c.applied {
			sum[countKey{c.env, c.model, d.fingerprint}] += d.n
		}
	}
	keys := make([]countKey, 0, len(sum))
	for k, n := range sum {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b countKey) int {
		return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.model, b.model), cmp.Compare(a.fingerprint, b.fingerprint))
	})
	envs, models, fps, ns := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		envs[i], models[i], fps[i], ns[i] = k.env, k.model, k.fingerprint, int64(sum[k])
	}
	return []any{envs, models, fps, ns}
}
