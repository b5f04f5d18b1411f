package gate

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// A live index points a model's upstream index at its units again after a
// batch replaced some (respan), merging the coverage only around what
// changed, instead of building the index from every unit again. After any
// run of such changes the index holds what a fresh build from the same
// units holds: the merged coverage and the running extremes of applied_at,
// built before the change or not.
func TestUpstreamIndexRespanEqualsRebuild(t *testing.T) {
	const hour = int64(time.Hour / time.Microsecond)
	r := rand.New(rand.NewPCG(7, 21))
	now := time.Unix(1_800_000_000, 0)
	for round := range 2000 {
		// Windows of one to three hours, touching or with gaps.
		var units []state.SweepUnit
		at := int64(0)
		for range 1 + r.IntN(40) {
			at += int64(r.IntN(2)) * hour
			w := int64(1+r.IntN(3)) * hour
			units = append(units, randomUnit(r, at, at+w))
			at += w
		}
		ix := newUpstreamIndex(upstreamShape{}, units, now)
		if r.IntN(2) == 0 {
			ix.buildPrefix() // the extremes asked for before the change
		}
		// A span of whole units, read back with new statuses and, now
		// and then, cut into other windows (a run re-chunked it).
		lo := r.IntN(len(units))
		hi := lo + 1 + r.IntN(min(4, len(units)-lo))
		s := span{units[lo].Since, units[hi-1].Until}
		var read []state.SweepUnit
		if r.IntN(4) == 0 {
			for a := s.a; a < s.b; a += hour {
				read = append(read, randomUnit(r, a, a+hour))
			}
		} else {
			for _, u := range units[lo:hi] {
				read = append(read, randomUnit(r, u.Since, u.Until))
			}
		}
		var changed []span
		if !sameApplied(units[lo:hi], read) {
			changed = []span{s}
		}
		after := slices.Concat(units[:lo], read, units[hi:])
		if !ix.respan(after, changed, lo, now) {
			t.Fatalf("round %d: respan refused disjoint rows inside the span", round)
		}
		want := newUpstreamIndex(upstreamShape{}, after, now)
		if ix.prefixMax != nil {
			want.buildPrefix()
		}
		for name, pair := range map[string][2][]int64{
			"islands": {ix.islands, want.islands}, "newest": {ix.prefixMax, want.prefixMax}, "oldest": {ix.prefixMin, want.prefixMin},
		} {
			if !slices.Equal(pair[0], pair[1]) {
				t.Fatalf("round %d: after the change of [%d, %d) %s is %v, a rebuild has %v", round, s.a/hour, s.b/hour, name, pair[0], pair[1])
			}
		}
		if !slices.Equal(ix.rows, after) || !ix.disjoint {
			t.Fatalf("round %d: the index reads other rows than the model's units, or takes them for overlapping", round)
		}
		// What the gate asks of the index, against a scan of the units.
		for range 5 {
			a := r.Int64N(at + hour)
			b := a + 1 + r.Int64N(4*hour)
			gotN, gotO, gotOK := ix.span(a, b)
			wantN, wantO, wantOK := scanSpan(after, a, b)
			if gotOK != wantOK || gotOK && (gotN != wantN || gotO != wantO) {
				t.Fatalf("round %d: span(%d, %d) = %d, %d, %v; a scan finds %d, %d, %v", round, a, b, gotN, gotO, gotOK, wantN, wantO, wantOK)
			}
		}
	}
}

// scanSpan is upstreamIndex.span by a scan of every unit.
func scanSpan(units []state.SweepUnit, a, b int64) (newest, oldest int64, ok bool) {
	for _, u := range units {
		if u.Status == state.CodeApplied && u.Since < b && u.Until > a {
			newest, oldest, ok = ext(newest, oldest, ok, u.AppliedAt)
		}
	}
	return newest, oldest, ok
}

// A respan that would leave rows overlapping, or reads a row reaching out
// of its span, is refused and changes nothing: the caller builds anew.
func TestUpstreamIndexRespanRefusesOverlap(t *testing.T) {
	const hour = int64(time.Hour / time.Microsecond)
	now := time.Unix(1_800_000_000, 0)
	units := []state.SweepUnit{appliedRow(0, hour, 5), appliedRow(hour, 2*hour, 6), appliedRow(2*hour, 3*hour, 7)}
	for _, read := range [][]state.SweepUnit{
		{appliedRow(hour, 3*hour, 9)},                               // reaches past the span
		{appliedRow(hour, 2*hour, 9), appliedRow(hour, 2*hour, 10)}, // two rows over one window
	} {
		ix := newUpstreamIndex(upstreamShape{}, units, now)
		before := slices.Clone(ix.islands)
		after := slices.Concat(units[:1], read, units[2:])
		if ix.respan(after, []span{{hour, 2 * hour}}, 1, now) {
			t.Fatalf("respan took %v over [1h, 2h)", read)
		}
		if !slices.Equal(ix.rows, units) || !slices.Equal(ix.islands, before) {
			t.Fatalf("a refused respan changed the index: %v, %v", ix.rows, ix.islands)
		}
	}
}

func appliedRow(a, b, at int64) state.SweepUnit {
	return state.SweepUnit{Since: a, Until: b, AppliedAt: at, Status: state.CodeApplied}
}

// randomUnit is a unit of [a, b): applied at a random time half of the
// time, else pending or failed.
func randomUnit(r *rand.Rand, a, b int64) state.SweepUnit {
	switch r.IntN(4) {
	case 0:
		return state.SweepUnit{Since: a, Until: b, Status: state.CodePending}
	case 1:
		return state.SweepUnit{Since: a, Until: b, Status: state.CodeFailed}
	}
	return appliedRow(a, b, r.Int64N(1000))
}

// overlap finds the units a span meets by binary search; a scan of every
// unit finds the same run, spans inside, across and outside the units.
func TestLiveModelOverlapEqualsAScan(t *testing.T) {
	const hour = int64(time.Hour / time.Microsecond)
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 2000 {
		m := &liveModel{}
		at := int64(0)
		for range r.IntN(30) {
			at += int64(r.IntN(2)) * hour
			m.units = append(m.units, randomUnit(r, at, at+hour))
			at += hour
		}
		a := int64(r.IntN(40)-5) * hour / 2
		s := span{a, a + int64(1+r.IntN(10))*hour/2}
		lo, hi := m.overlap(s)
		wlo, whi := -1, -1
		for k, u := range m.units {
			if u.Until > s.a && u.Since < s.b {
				if wlo < 0 {
					wlo = k
				}
				whi = k + 1
			}
		}
		if wlo < 0 {
			if lo != hi {
				t.Fatalf("round %d: [%d, %d) meets no unit, overlap gave [%d, %d)", round, s.a, s.b, lo, hi)
			}
			continue
		}
		if lo != wlo || hi != whi {
			t.Fatalf("round %d: [%d, %d) meets units [%d, %d), overlap gave [%d, %d)", round, s.a, s.b, wlo, whi, lo, hi)
		}
	}
}
