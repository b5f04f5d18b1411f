package state

import "context"

// LatestSeq returns the seq of the newest change in s's feed (0 when it is
// empty): where a follower starts to see only what happens from now on, and
// the point an index built from one full read is current as of, when it is
// taken before that read. The Store has no "max seq" read, so it searches
// with one-row reads of Changes — O(log seq) indexed round trips, never a
// scan of the feed.
func LatestSeq(ctx context.Context, s Store) (int64, error) {
	next := func(after int64) (int64, bool, error) {
		cs, err := s.Changes(ctx, after, 1)
		if err != nil || len(cs) == 0 {
			return 0, false, err
		}
		return cs[0].Seq, true, nil
	}
	// lo is a seq known to exist (so lo ≤ newest); hi has nothing after it
	// (so newest ≤ hi).
	lo, ok, err := next(0)
	if err != nil || !ok {
		return 0, err
	}
	hi := int64(0)
	for step := int64(1); ; step *= 2 {
		probe := lo + step
		if probe < lo { // overflow: nothing can follow the largest seq
			hi = 1<<63 - 1
			break
		}
		s, ok, err := next(probe)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = probe
			break
		}
		lo = s
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		s, ok, err := next(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = s
		} else {
			hi = mid
		}
	}
	return lo, nil
}
