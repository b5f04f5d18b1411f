package state

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The property tests check IntervalSet against a brute-force model: one bool
// per minute over three days that include Stockholm's spring-forward night.
const bitmapMinutes = 3 * 24 * 60

var bitmapBase = utc("2026-03-28T00:00:00Z")

type bitmap []bool

func newBitmap() bitmap { return make(bitmap, bitmapMinutes) }

// all is the window the bitmap spans.
func (b bitmap) all() Window { return minuteWindow(0, len(b)) }

func minuteAt(i int) time.Time { return bitmapBase.Add(time.Duration(i) * time.Minute) }

// minuteWindow is [minute a, minute b).
func minuteWindow(a, b int) Window { return Window{Since: minuteAt(a), Until: minuteAt(b)} }

// randomWindow is a non-empty minute window inside the bitmap, short or long.
func randomWindow(r *rand.Rand) Window {
	a := r.IntN(bitmapMinutes)
	n := 1 + r.IntN(60)
	if r.IntN(3) == 0 {
		n = 1 + r.IntN(bitmapMinutes)
	}
	return minuteWindow(a, min(a+n, bitmapMinutes))
}

func toBitmap(s IntervalSet) bitmap {
	b := newBitmap()
	for _, w := range s.Windows() {
		b.fill(w, true)
	}
	return b
}

func (b bitmap) fill(w Window, v bool) {
	for i, end := b.index(w.Since), b.index(w.Until); i < end; i++ {
		b[i] = v
	}
}

func (b bitmap) index(t time.Time) int {
	return max(0, min(len(b), int(t.Sub(bitmapBase)/time.Minute)))
}

// runs lists the maximal runs of v inside w, the brute-force Windows/Gaps.
func (b bitmap) runs(w Window, v bool) []Window {
	var out []Window
	start := -1
	lo, hi := b.index(w.Since), b.index(w.Until)
	for i := lo; i <= hi; i++ {
		on := i < hi && b[i] == v
		switch {
		case on && start < 0:
			start = i
		case !on && start >= 0:
			out = append(out, minuteWindow(start, i))
			start = -1
		}
	}
	return out
}

// checkSet fails unless s is normalized and holds exactly the minutes of b;
// what and args name the operation, formatted only on failure.
func checkSet(t *testing.T, s IntervalSet, b bitmap, what string, args ...any) {
	t.Helper()
	if err := normalizedError(s); err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
	if want := b.runs(b.all(), true); !windowsEqual(s.Windows(), want) {
		t.Fatalf("%s = %v\nwant %v", fmt.Sprintf(what, args...), s, NewIntervalSet(want...))
	}
}

func normalizedError(s IntervalSet) error {
	ws := s.Windows()
	if s.Len() != len(ws) || s.Empty() != (len(ws) == 0) {
		return fmt.Errorf("Len %d / Empty %v disagree with %d windows", s.Len(), s.Empty(), len(ws))
	}
	for i, w := range ws {
		if w.Empty() || w.Since.Location() != time.UTC || w.Until.Location() != time.UTC {
			return fmt.Errorf("window %d %v is empty or not UTC", i, w)
		}
		if i > 0 && !ws[i-1].Until.Before(w.Since) {
			return fmt.Errorf("windows %v and %v overlap, touch or are out of order", ws[i-1], w)
		}
	}
	return nil
}

func randomSet(r *rand.Rand) (IntervalSet, bitmap) {
	b := newBitmap()
	ws := make([]Window, r.IntN(8))
	for i := range ws {
		ws[i] = randomWindow(r)
		b.fill(ws[i], true)
	}
	return NewIntervalSet(ws...), b
}

func TestIntervalSetAgainstBitmap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 3000; n++ {
		a, ab := randomSet(r)
		checkSet(t, a, ab, "NewIntervalSet")
		o, ob := randomSet(r)
		w := randomWindow(r)

		added := a.Add(w)
		bb := toBitmap(a)
		bb.fill(w, true)
		checkSet(t, added, bb, "%v.Add(%v)", a, w)

		union := newBitmap()
		for i := range union {
			union[i] = ab[i] || ob[i]
		}
		checkSet(t, a.Union(o), union, "%v.Union(%v)", a, o)

		diff := newBitmap()
		for i := range diff {
			diff[i] = ab[i] && !ob[i]
		}
		checkSet(t, a.Subtract(o), diff, "%v.Subtract(%v)", a, o)

		bb = toBitmap(a)
		bb.fill(w, false)
		checkSet(t, a.SubtractWindow(w), bb, "%v.SubtractWindow(%v)", a, w)

		inter := newBitmap()
		for i, end := ab.index(w.Since), ab.index(w.Until); i < end; i++ {
			inter[i] = ab[i]
		}
		checkSet(t, a.Intersect(w), inter, "%v.Intersect(%v)", a, w)

		gaps := ab.runs(w, false)
		if got := a.Gaps(w); !windowsEqual(got, gaps) {
			t.Fatalf("%v.Gaps(%v) = %v, want %v", a, w, got, gaps)
		}
		if got := a.Covers(w); got != (len(gaps) == 0) {
			t.Fatalf("%v.Covers(%v) = %v, want %v", a, w, got, len(gaps) == 0)
		}
		checkSet(t, a, ab, "receiver after operations") // value semantics
	}
}

// gridBoundaries lists the grid's boundaries within the bitmap by a linear
// walk over WindowAt, the brute-force view of where SliceByChunk must cut.
func gridBoundaries(g Grid) map[int]bool {
	cuts := map[int]bool{}
	k := 0
	for g.WindowAt(k).Since.After(bitmapBase) {
		k--
	}
	for ; !g.WindowAt(k).Since.After(minuteAt(bitmapMinutes)); k++ {
		if since := g.WindowAt(k).Since; !since.Before(bitmapBase) {
			cuts[int(since.Sub(bitmapBase)/time.Minute)] = true
		}
	}
	return cuts
}

func TestSliceByChunkAgainstBitmap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	zones := []*time.Location{time.UTC, mustLoad(t, "Europe/Stockholm"), mustLoad(t, "America/New_York"), mustLoad(t, "Asia/Kolkata")}
	ivs := []string{"1m", "15m", "45m", "1h", "6h", "1d", "2d"}
	for n := 0; n < 1000; n++ {
		start := minuteAt(r.IntN(bitmapMinutes)).Add(time.Duration(r.IntN(30)-15) * 24 * time.Hour)
		g, err := NewGrid(start, MustInterval(ivs[r.IntN(len(ivs))]), zones[r.IntN(len(zones))])
		if err != nil {
			t.Fatal(err)
		}
		cuts := gridBoundaries(g)
		s, b := randomSet(r)
		w := randomWindow(r)
		gaps := s.Gaps(w)
		var want []Window
		for _, gap := range b.runs(w, false) {
			lo, hi := b.index(gap.Since), b.index(gap.Until)
			from := lo
			for i := lo + 1; i < hi; i++ {
				if cuts[i] {
					want = append(want, minuteWindow(from, i))
					from = i
				}
			}
			want = append(want, minuteWindow(from, hi))
		}
		if got := SliceByChunk(gaps, g); !windowsEqual(got, want) {
			t.Fatalf("SliceByChunk(%v, %v) = %v\nwant %v", gaps, g, got, want)
		}
	}
}
