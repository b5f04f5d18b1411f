package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// Bench runs the store benchmarks the README's performance section quotes:
//
//   - Prefill100k: one Prefill of 100,000 hourly windows into a fresh model,
//     the design point of a long history at a fine grain.
//   - ScanUnits1M: a streamed ScanUnits over a model of 1,000,000 units
//     (prefilled once, outside the timing), what the units view and the
//     status command read.
//   - FingerprintCounts1000x1000: FingerprintCounts over 1,000 models of
//     1,000 applied units each, what status's OUTDATED column reads (ms/read).
//   - Summaries1000x1000: Summaries over the same store, what status and
//     the Pipelines view read for counts, coverage and newest (ms/read).
//
// The first two report rows/s. open returns a fresh, empty, migrated store and closes
// it with tb.Cleanup.
func Bench(b *testing.B, open func(tb testing.TB) state.Store) {
	b.Run("Prefill100k", func(b *testing.B) { benchPrefill(b, open, 100_000) })
	// The testing package calls a benchmark function again with a larger
	// b.N; the million-unit store is built once, on the parent benchmark so
	// that it outlives those calls.
	var big state.Store
	b.Run("ScanUnits1M", func(sub *testing.B) {
		const n = 1_000_000
		if big == nil {
			big = prefilledStore(b, open, n)
		}
		benchScan(sub, big, n)
	})
	var wide state.Store
	b.Run("FingerprintCounts1000x1000", func(sub *testing.B) {
		if wide == nil {
			wide = appliedModelsStore(b, open, 1000, 1000)
		}
		benchFingerprintCounts(sub, wide, 1000*1000)
	})
	b.Run("Summaries1000x1000", func(sub *testing.B) {
		if wide == nil {
			wide = appliedModelsStore(b, open, 1000, 1000)
		}
		benchSummaries(sub, wide, 1000, 1000*1000)
	})
	var backlog state.Store
	var names []string
	claim := func(name string, models func() []string) {
		b.Run(name, func(sub *testing.B) {
			if backlog == nil {
				backlog, names = pendingModelsStore(b, open, 1000, 1000)
			}
			benchClaimWide(sub, backlog, models())
		})
	}
	claim("Claim1000x1000/models=all", func() []string { return nil })
	claim("Claim1000x1000/models=1000", func() []string { return names })
}

// appliedModelsStore opens a store with models models of perModel applied
// hourly units each: the shape behind 'bollhav status' at production scale.
// Each model's first tenth is claimed and applied under a fingerprint in one
// CompleteBatch, the rest marked applied (unknown), so every model has two
// counts, as a model with outdated windows does; claiming a million units
// one batch at a time would take minutes.
func appliedModelsStore(b *testing.B, open func(tb testing.TB) state.Store, models, perModel int) state.Store {
	s := open(b)
	recs := make([]state.ModelRecord, models)
	for i := range recs {
		recs[i] = fixModel(fmt.Sprintf("m%04d", i))
	}
	register(b, s, "", recs...)
	ws := hourly(0, perModel)
	for _, r := range recs {
		prefill(b, s, "", r.Name, ws, clock(1))
		cs := claim(b, s, "", r.Name, max(1, perModel/10), clock(1))
		items := make([]state.Completion, len(cs))
		for i, c := range cs {
			items[i] = state.Completion{Claim: c, Outcome: state.Outcome{Status: state.Applied, At: clock(2), Fingerprint: "00000000000000f1"}}
		}
		errs, err := s.CompleteBatch(b.Context(), items)
		if err = errors.Join(append(errs, err)...); err != nil {
			b.Fatal(err)
		}
		markApplied(b, s, "", r.Name, state.Window{}, clock(2))
	}
	return s
}

func benchSummaries(b *testing.B, s state.Store, models, units int) {
	b.ResetTimer()
	for range b.N {
		sums, err := s.Summaries(b.Context(), "", "")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, sum := range sums {
			n += sum.Counts[state.Applied]
		}
		if len(sums) != models || n != units {
			b.Fatalf("Summaries read %d models, %d applied units; want %d, %d", len(sums), n, models, units)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/read")
}

func benchFingerprintCounts(b *testing.B, s state.Store, want int) {
	b.ResetTimer()
	for range b.N {
		counts, err := s.FingerprintCounts(b.Context(), "", "")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, c := range counts {
			n += c.Count
		}
		if n != want {
			b.Fatalf("FingerprintCounts counted %d applied units, want %d", n, want)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/read")
}

func benchPrefill(b *testing.B, open func(tb testing.TB) state.Store, n int) {
	ws := hourly(0, n)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s := open(b)
		register(b, s, "", fixModel("a"))
		b.StartTimer()
		got, err := s.Prefill(b.Context(), state.PrefillRequest{Model: "a", Windows: ws, Now: clock(1)})
		b.StopTimer()
		if err != nil || got != n {
			b.Fatalf("Prefill = %d, %v; want %d", got, err, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// prefilledStore opens a store with one model of n pending hourly units,
// prefilled in batches of the design point.
func prefilledStore(b *testing.B, open func(tb testing.TB) state.Store, n int) state.Store {
	s := open(b)
	register(b, s, "", fixModel("a"))
	const batch = 100_000
	for from := 0; from < n; from += batch {
		prefill(b, s, "", "a", hourly(from, min(from+batch, n)), clock(1))
	}
	return s
}

func benchScan(b *testing.B, s state.Store, n int) {
	b.ResetTimer()
	for range b.N {
		rows := 0
		err := s.ScanUnits(b.Context(), state.UnitQuery{Model: "a"}, func(state.Unit) error { rows++; return nil })
		if err != nil || rows != n {
			b.Fatalf("ScanUnits read %d rows, %v; want %d", rows, err, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
