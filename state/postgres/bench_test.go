package postgres_test

import (
	"testing"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/storetest"
)

// BenchmarkStore runs the shared store benchmarks (a prefill of 100,000
// windows, a streamed scan of 1,000,000 units) against PostgreSQL; the
// README quotes their figures.
func BenchmarkStore(b *testing.B) {
	dsn := pgtest.DSN(b)
	storetest.Bench(b, func(tb testing.TB) state.Store { return openStore(tb, dsn, pgtest.Schema(tb, dsn)) })
}
