package state

import "slices"

// DeltaKeys lists the keys of one transaction's count deltas whose net
// change is not zero, sorted by cmp: the order the backends write their
// kept counts in (PostgreSQL locks the count rows in it, so two commits
// never deadlock on them), with nothing written for a change that
// cancelled out.
func DeltaKeys[K comparable](d map[K]int, cmp func(a, b K) int) []K {
	keys := make([]K, 0, len(d))
	for k, n := range d {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, cmp)
	return keys
}
