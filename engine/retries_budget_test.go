package engine

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestRetryBudgetStartsAfreshAfterAnEnd: a long-lived worker's budget is
// per unit until the unit ends. Once a failure is final (or the unit
// succeeds), the count is dropped, so an operator who re-pends the unit
// gives it a whole budget again rather than the tries left over.
func TestRetryBudgetStartsAfreshAfterAnEnd(t *testing.T) {
	m := &spec.Model{Name: "raw.orders", Retry: spec.Retry{Attempts: 2, Delay: time.Minute, MaxDelay: time.Hour}}
	c := state.Claim{Unit: state.Unit{ID: 7}}
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	failed := func() unitVerdict {
		return unitVerdict{out: state.Outcome{Status: state.Failed, Error: "exit status 1", At: now}}
	}
	r := newRetries()
	outcomes := func(vs ...unitVerdict) []string {
		var out []string
		for _, v := range vs {
			got := r.apply(m, c, v, now)
			out = append(out, string(got.out.Status))
		}
		return out
	}
	// Try 1 retries, try 2 is final; re-pended, the unit again gets a
	// retry first; after a success, too.
	got := outcomes(failed(), failed(), failed(), failed(),
		unitVerdict{out: state.Outcome{Status: state.Applied, At: now}}, failed())
	want := []string{"pending", "failed", "pending", "failed", "applied", "pending"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("outcome %d: %s, want %s (all %v)", i+1, got[i], want[i], got)
		}
	}
	if n := len(r.tries); n != 1 {
		t.Errorf("%d units counted, want only the one waiting for its retry", n)
	}
}
