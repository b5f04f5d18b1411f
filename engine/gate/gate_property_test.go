package gate

import (
	"github.com/bollhav/bollhav/engine/spec"
	"math/rand/v2"
	"testing"
)

// The strength ladder of the contracts: WHOLE ⟹ THROUGH ⟹ ENCAPSULATE ⟹ EXISTS,
// and EXACT ⟹ ENCAPSULATE, for any state of a fixed hourly upstream and any
// downstream window inside its contract range.
func TestGateStrengthLadder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const span = 48 // hours of contract range
	for i := 0; i < 3000; i++ {
		var rows []AppliedRow
		for h := 0; h < span; h++ {
			if r.IntN(10) < 8 {
				rows = append(rows, AppliedRow{Window: hours(h, h+1), AppliedAt: t0})
			}
		}
		up := fixedUp(t0.Add(span*60*60*1e9), rows)
		a := r.IntN(span)
		b := a + 1 + r.IntN(span-a)
		w := hours(a, b)
		sat := map[spec.ContractLevel]bool{}
		for _, level := range []spec.ContractLevel{spec.Exists, spec.Exact, spec.Encapsulate, spec.Through, spec.Whole} {
			v := Evaluate(&w, src(level), up, now)
			if v.Err != nil {
				t.Fatalf("%s: %v", level, v.Err)
			}
			sat[level] = v.Satisfied
		}
		implies := func(x, y spec.ContractLevel) {
			if sat[x] && !sat[y] {
				t.Fatalf("case %d window %s: %s satisfied but %s not", i, w, x, y)
			}
		}
		implies(spec.Whole, spec.Through)
		implies(spec.Through, spec.Encapsulate)
		implies(spec.Encapsulate, spec.Exists)
		implies(spec.Exact, spec.Encapsulate)
		// And the levels are checked against a plain hour-by-hour reading.
		have := map[int]bool{}
		for _, row := range rows {
			have[int(row.Window.Since.Sub(t0).Hours())] = true
		}
		all := func(from, to int) bool {
			for h := from; h < to; h++ {
				if !have[h] {
					return false
				}
			}
			return true
		}
		if sat[spec.Encapsulate] != all(a, b) || sat[spec.Through] != all(0, b) || sat[spec.Whole] != all(0, span) {
			t.Fatalf("case %d window %s: verdicts %v disagree with the hour bitmap", i, w, sat)
		}
		if sat[spec.Exact] != (b == a+1 && have[a]) {
			t.Fatalf("case %d window %s: EXACT %v", i, w, sat[spec.Exact])
		}
	}
}
