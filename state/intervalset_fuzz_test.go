package state

import (
	"encoding/binary"
	"testing"
)

// FuzzIntervalSet decodes the input as a program of set operations, five
// bytes each (op, since, length), runs it on an IntervalSet and on a minute
// bitmap of one day, and fails on the first disagreement. The bitmap is kept
// short so that each program runs in microseconds.
func FuzzIntervalSet(f *testing.F) {
	f.Add([]byte{0, 0, 10, 0, 20, 0, 0, 30, 0, 20, 1, 0, 15, 0, 5, 5, 0, 0, 0, 60})
	f.Add([]byte{0, 0, 0, 0, 10, 0, 0, 10, 0, 10, 2, 0, 40, 0, 1, 3, 0, 5, 1, 0, 4, 0, 3, 0, 9})
	f.Add([]byte{0, 16, 0, 255, 255, 1, 16, 100, 0, 1, 5, 0, 0, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s IntervalSet
		const size = 24 * 60
		b := make(bitmap, size)
		for ops := 0; len(data) >= 5 && ops < 32; ops++ {
			op := data[0] % 6
			a := int(binary.BigEndian.Uint16(data[1:3])) % size
			n := 1 + int(binary.BigEndian.Uint16(data[3:5]))%size
			w := minuteWindow(a, min(a+n, size))
			data = data[5:]
			switch op {
			case 0:
				s = s.Add(w)
				b.fill(w, true)
			case 1:
				s = s.SubtractWindow(w)
				b.fill(w, false)
			case 2:
				s = s.Union(NewIntervalSet(w))
				b.fill(w, true)
			case 3:
				// Subtract a two-window set: w and its mirror image.
				m := minuteWindow(size-b.index(w.Until), size-b.index(w.Since))
				s = s.Subtract(NewIntervalSet(w, m))
				b.fill(w, false)
				b.fill(m, false)
			case 4:
				s = s.Intersect(w)
				for i := range b {
					b[i] = b[i] && i >= a && i < a+n
				}
			case 5:
				gaps := b.runs(w, false)
				if got := s.Gaps(w); !windowsEqual(got, gaps) {
					t.Fatalf("%v.Gaps(%v) = %v, want %v", s, w, got, gaps)
				}
				if got := s.Covers(w); got != (len(gaps) == 0) {
					t.Fatalf("%v.Covers(%v) = %v", s, w, got)
				}
			}
			if err := normalizedError(s); err != nil {
				t.Fatalf("op %d: %v", op, err)
			}
		}
		checkSet(t, s, b, "after the program")
	})
}
