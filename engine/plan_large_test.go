package engine

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// minutesSpec is one model on a 1-minute grid from 2000-01-01 whose
// chunking ends `end` later: a backlog of that many windows (issue 21).
func minutesSpec(end time.Time) string {
	return `models:
  - name: big.minutes
    pipeline: big
    chunking: {interval: 1m, start: "2000-01-01T00:00:00Z", end: "` + state.FormatTime(end) + `"}
    run: {command: ["true"]}
`
}

var m0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// minute is the window of minute k of minutesSpec's grid.
func minute(k int) state.Window {
	return state.Window{Since: m0.Add(time.Duration(k) * time.Minute), Until: m0.Add(time.Duration(k+1) * time.Minute)}
}

func minutesWorld(t *testing.T, s state.Store, n int) *Engine {
	t.Helper()
	e := New(s, mustParse(t, minutesSpec(m0.Add(time.Duration(n)*time.Minute))), Options{Actor: "tester", Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return e
}

// TestPlanOverAMillionMinutesKeepsRuns: a plan over a backlog of a million
// windows keeps its windows as a few runs — one per stretch between the
// units that exist — not a value per window, and still counts and spans
// them as the lists did.
func TestPlanOverAMillionMinutesKeepsRuns(t *testing.T) {
	const n = 1_000_000
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := minutesWorld(t, s, n)
		_, mp := mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != n || mp.Create.Runs() != 1 || mp.Run.Len() != n || mp.Run.Runs() != 1 {
			t.Fatalf("empty store: create %d in %d runs, run %d in %d runs; want %d in 1 each",
				mp.Create.Len(), mp.Create.Runs(), mp.Run.Len(), mp.Run.Runs(), n)
		}

		// Minute 10 applied, minute 500,000 failed: three stretches to
		// create, the failed unit reset and run between two of them.
		ctx := t.Context()
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "big.minutes", Windows: []state.Window{minute(10), minute(500_000)}, Now: m0}); err != nil {
			t.Fatal(err)
		}
		for k, st := range map[int]state.UnitStatus{10: state.Applied, 500_000: state.Failed} {
			if _, err := s.SetStatus(ctx, state.StatusChange{Model: "big.minutes", Window: minute(k), From: []state.UnitStatus{state.Pending}, To: st, Now: m0}); err != nil {
				t.Fatal(err)
			}
		}
		_, mp = mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != n-2 || mp.Create.Runs() != 3 {
			t.Errorf("create %d in %d runs, want %d in 3", mp.Create.Len(), mp.Create.Runs(), n-2)
		}
		if r := mp.Reset.List(); len(r) != 1 || !r[0].Equal(minute(500_000)) {
			t.Errorf("Reset %s, want minute 500000 (%s)", fmtWindows(r), minute(500_000))
		}
		if mp.Run.Len() != n-1 || mp.Run.Runs() != 2 {
			t.Errorf("run %d in %d runs, want %d in 2", mp.Run.Len(), mp.Run.Runs(), n-1)
		}
		wantSpans := []state.Window{{Since: m0, Until: minute(10).Since}, {Since: minute(11).Since, Until: minute(n - 1).Until}}
		if got := mp.Run.Spans(); !windowsEqual(got, wantSpans) {
			t.Errorf("run spans %s, want %s", fmtWindows(got), fmtWindows(wantSpans))
		}

		_, mp = mustPlan(t, e, RunRequest{Mode: spec.Torch})
		if mp.Delete == nil || mp.Delete.Count != 2 || mp.Create.Len() != n || mp.Create.Runs() != 1 || mp.Run.Runs() != 1 {
			t.Errorf("torch: delete %+v, create %d in %d runs, run in %d runs", mp.Delete, mp.Create.Len(), mp.Create.Runs(), mp.Run.Runs())
		}
	})
}

// TestApplyPlanPrefillsPastOneBatch: a prefill larger than one batch
// creates every window once, and the plan made over the result runs them
// all — read back from the store as one run.
func TestApplyPlanPrefillsPastOneBatch(t *testing.T) {
	n := 2*prefillBatch + 7
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := minutesWorld(t, s, n)
		p, mp := mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != n {
			t.Fatalf("create %d, want %d", mp.Create.Len(), n)
		}
		if err := e.ApplyPlan(t.Context(), p, 0); err != nil {
			t.Fatalf("ApplyPlan: %v", err)
		}
		st, err := s.Stats(t.Context(), "", "big.minutes")
		if err != nil {
			t.Fatal(err)
		}
		if st.Counts[state.Pending] != n {
			t.Errorf("pending units after the prefill: %+v, want %d", st.Counts, n)
		}
		_, mp = mustPlan(t, e, RunRequest{Mode: spec.Discover})
		if mp.Create.Len() != 0 || mp.Run.Len() != n || mp.Run.Runs() != 1 {
			t.Errorf("after the prefill: create %d, run %d in %d runs; want 0, %d in 1", mp.Create.Len(), mp.Run.Len(), mp.Run.Runs(), n)
		}
	})
}
