package graph

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// A heap hands its items back smallest first, however they were pushed,
// reset and interleaved with pops.
func TestHeapPopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for round := range 200 {
		h := NewHeap(cmp.Compare[int])
		var want []int
		start := make([]int, r.IntN(20))
		for i := range start {
			start[i] = r.IntN(50)
		}
		h.Reset(start...)
		want = append(want, start...)
		var got []int
		for range 100 {
			if h.Len() > 0 && r.IntN(3) == 0 {
				slices.Sort(want)
				if h.Peek() != want[0] {
					t.Fatalf("round %d: Peek = %d, want %d", round, h.Peek(), want[0])
				}
				got = append(got, h.Pop())
				want = want[1:]
				continue
			}
			x := r.IntN(50)
			h.Push(x)
			want = append(want, x)
		}
		for h.Len() > 0 {
			got = append(got, h.Pop())
		}
		if !slices.IsSortedFunc(got[len(got)-len(want):], cmp.Compare[int]) || h.Len() != 0 {
			t.Fatalf("round %d: the heap's last items came out as %v", round, got)
		}
	}
}
