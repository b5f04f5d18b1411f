package postgres

import (
	"cmp"

	"github.com/bollhav/bollhav/state"
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
// change feed, the last of its transaction, so it costs no round trip of its
// own and a count row is held only from there to the commit. Commits that
// touch the same models' counts do wait on each other for those rows (a hot
// model's count row is a point of serialisation), but they lock them in key
// order (countDeltas), so two of them can never deadlock
// (TestConcurrentAppliedCountsNeverDeadlock).
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
	keys := state.DeltaKeys(sum, func(a, b countKey) int {
		return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.model, b.model), cmp.Compare(a.fingerprint, b.fingerprint))
	})
	envs, models, fps, ns := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		envs[i], models[i], fps[i], ns[i] = k.env, k.model, k.fingerprint, int64(sum[k])
	}
	return []any{envs, models, fps, ns}
}
