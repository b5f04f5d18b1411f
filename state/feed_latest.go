package state

import "context"

// LatestSeq returns the seq of the newest change in s's feed (0 when it is
// empty): where a follower starts to see only what happens from now on, and
// the point an index built from one full read is current as of, when it is
// taken before that read — every change up to it has committed (or rolled
// back) by the time it returns, also on a store whose transactions commit
// in another order than their seqs (PostgreSQL).
func LatestSeq(ctx context.Context, s Store) (int64, error) {
	return s.LatestSeq(ctx)
}
