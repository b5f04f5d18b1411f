package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// openTemp opens a store in a file of its own under tb's temp dir.
func openTemp(tb testing.TB) *Store {
	tb.Helper()
	s, err := Open(tb.Context(), filepath.Join(tb.TempDir(), "state.db"))
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// reopen opens a second Store on s's file, the way a second process would.
func reopen(t *testing.T, s state.Store) state.Store {
	t.Helper()
	r, err := Open(t.Context(), s.(*Store).Path())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestConformance(t *testing.T) {
	opts := []storetest.Option{storetest.WithReopen(reopen)}
	if raceEnabled {
		// SQLite has no parameter limit on the one-statement prefill, so a
		// smaller large prefill loses nothing but minutes of CI time.
		opts = append(opts, storetest.WithLargePrefill(20_000))
	}
	storetest.Run(t, func(t *testing.T) state.Store { return openTemp(t) }, opts...)
}

// TestStateMachine runs random sequences of claims, completions, lease
// expiries, crashes, bulldozer, torch and marks against a fresh store per
// check and an in-memory model (storetest.RunStateMachine). A failing
// sequence is shrunk into testdata/rapid/TestStateMachine/, and every file
// there is replayed on each run.
func TestStateMachine(t *testing.T) {
	checks := 100
	if raceEnabled {
		checks = 40 // about a second each under -race; -rapid.checks raises it
	}
	storetest.RunStateMachine(t, func(t *testing.T) state.Store { return openTemp(t) }, checks)
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(tb testing.TB) state.Store { return openTemp(tb) })
}
