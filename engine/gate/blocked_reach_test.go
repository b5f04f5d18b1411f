package gate

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestBlockedReachAndWindowIndex checks the reach rules on a store-free lineage and index.
func TestBlockedReachAndWindowIndex(t *testing.T) {
	l := &gatedLineage{
		down: map[string][]gatedEdge{
			"a": {{down: "b", level: spec.Encapsulate}, {down: "c", level: spec.Through}},
			"b": {{down: "d", level: spec.Whole}, {down: "e", level: spec.Exact}},
			"c": {{down: "e", level: spec.Encapsulate}},
		},
		timeless: map[string]bool{"f": true},
	}
	l.down["e"] = []gatedEdge{{down: "f", level: spec.Encapsulate}}
	got := l.downstreamReach("a", reachSame)
	// b same; c from (THROUGH); d all (WHOLE); e from (via c, wider than
	// via b); f all (timeless); a itself left out.
	want := map[string]reachKind{"b": reachSame, "c": reachFrom, "d": reachAll, "e": reachFrom, "f": reachAll}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reach %v, want %v", got, want)
	}
	// A cycle back to a ends (reaches only widen) and leaves a out.
	l.down["c"] = append(l.down["c"], gatedEdge{down: "a", level: spec.Encapsulate})
	if got := l.downstreamReach("a", reachSame); len(got) != 5 || got["b"] != reachFrom {
		t.Errorf("cyclic reach %v", got)
	}

	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	ix := &windowIndex{zero: 1}
	for _, w := range []state.Window{hours(0, 2), hours(1, 3), hours(4, 5), hours(6, 9)} {
		ix.sinces = append(ix.sinces, w.Since.UnixMicro())
		ix.untils = append(ix.untils, w.Until.UnixMicro())
	}
	ix.untils = []int64{h(2).UnixMicro(), h(3).UnixMicro(), h(5).UnixMicro(), h(9).UnixMicro()}
	for _, c := range []struct {
		k    reachKind
		w    state.Window
		want int
	}{
		{reachSame, hours(2, 4), 1},  // [1,3) only: [0,2) ends at 2, [4,5) begins at 4
		{reachSame, hours(0, 10), 4}, // all four
		{reachSame, hours(5, 6), 0},  // between [4,5) and [6,9)
		{reachFrom, hours(3, 4), 2},  // [4,5) and [6,9) end after 3
		{reachFrom, hours(9, 10), 0}, // nothing ends after 9
		{reachAll, hours(9, 10), 5},  // every unit, the zero-window one too
	} {
		if n := ix.count(c.k, c.w); n != c.want {
			t.Errorf("count(%d, %s) = %d, want %d", c.k, c.w, n, c.want)
		}
	}
}
