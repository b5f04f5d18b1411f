package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// pendingModelsStore opens a store with models models of perModel pending
// hourly units each: the backlog a worker over the whole platform claims
// from.
func pendingModelsStore(b *testing.B, open func(tb testing.TB) state.Store, models, perModel int) (state.Store, []string) {
	s := open(b)
	recs := make([]state.ModelRecord, models)
	names := make([]string, models)
	for i := range recs {
		recs[i] = fixModel(fmt.Sprintf("m%04d", i))
		names[i] = recs[i].Name
	}
	register(b, s, "", recs...)
	ws := hourly(0, perModel)
	for _, r := range recs {
		prefill(b, s, "", r.Name, ws, clock(1))
	}
	return s, names
}

// benchClaimWide times one claim of up to 16 units by a worker that names
// models (a list longer than the per-model read takes), or none (every
// model). Each claim takes the oldest pending windows across the platform;
// the claimed units stay running, so each iteration claims the next ones.
func benchClaimWide(b *testing.B, s state.Store, models []string) {
	now := clock(2)
	b.ResetTimer()
	for range b.N {
		cs, err := s.Claim(b.Context(), state.ClaimRequest{Models: models, Worker: "bench", Lease: time.Hour, Limit: 16, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		if len(cs) != 16 {
			b.Fatalf("claimed %d units, want 16", len(cs))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/claim")
}
