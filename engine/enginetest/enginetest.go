// Package enginetest gives the engine's tests, and the tests of the gate,
// the executor and the front ends, the state they run on.
//
// The stores: a fresh SQLite file and a fresh PostgreSQL schema (Open,
// Each), so every behaviour is checked against both backends the way
// state/storetest checks the store itself. A machine without PostgreSQL
// runs the SQLite half and skips the other with pgtest's one-line reason
// (or fails under BOLLHAV_REQUIRE_PG=1).
//
// The state factory (factory.go, after River's testfactory): a spec
// registered as the engine's Apply registers it, and units seeded in any
// status, window and applied_at, with runs, task-log entries and tries,
// straight through the Store API, so a test of the gate or the UI needs no
// engine run to get "an hour failed, a day blocked behind it". The named
// fixtures (fixtures.go) are the worlds several packages share; the
// engine's tests check that a real run leaves exactly what each one seeds,
// so the factory cannot drift from the engine.
//
// CopyOfTemplate seeds a folder (the demo shop) once per test binary and
// gives each test a copy of its own.
package enginetest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// The backends, by the name Store.Backend returns.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Backends lists every backend engine tests run on, in the order Each runs
// them.
var Backends = []string{SQLite, Postgres}

// Open opens a fresh, empty, migrated store of the named backend, closed
// (and, for PostgreSQL, its schema dropped) when t ends. A PostgreSQL store
// skips t when no server is reachable, as pgtest.DSN does.
func Open(t testing.TB, backend string) state.Store {
	t.Helper()
	var s state.Store
	var err error
	switch backend {
	case SQLite:
		s, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	case Postgres:
		dsn := pgtest.DSN(t)
		schema := pgtest.Schema(t, dsn) // registered first, so it drops after Close
		s, err = postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	default:
		panic(fmt.Sprintf("enginetest: unknown backend %q", backend))
	}
	if err != nil {
		t.Fatalf("open %s store: %v", backend, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s store: %v", backend, err)
		}
	})
	return s
}

// Each runs fn once per backend, as subtests named "sqlite" and "postgres",
// each with a fresh store of its own. A missing PostgreSQL skips only its
// subtest.
func Each(t *testing.T, fn func(t *testing.T, s state.Store)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(b, func(t *testing.T) {
			fn(t, Open(t, b))
		})
	}
}

// Stores opens a fresh store of every reachable backend, by backend name.
// PostgreSQL is left out (with a log line) when no server is reachable,
// unless BOLLHAV_REQUIRE_PG=1, which fails t instead. Prefer Each, which
// reports the missing backend as a skipped subtest.
func Stores(t *testing.T) map[string]state.Store {
	t.Helper()
	out := map[string]state.Store{SQLite: Open(t, SQLite)}
	probe := &skipRecorder{TB: t}
	dsn := pgtest.DSN(probe)
	if probe.skipped != "" {
		t.Logf("enginetest: no postgres store: %s", probe.skipped)
		return out
	}
	schema := pgtest.Schema(t, dsn)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close postgres store: %v", err)
		}
	})
	out[Postgres] = s
	return out
}

// skipRecorder turns a skip into a note, so Stores can go on without the
// backend pgtest.DSN would have skipped the whole test for.
type skipRecorder struct {
	testing.TB
	skipped string
}

func (r *skipRecorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }
func (r *skipRecorder) Skip(args ...any)                 { r.skipped = fmt.Sprint(args...) }
func (r *skipRecorder) SkipNow()                         { r.skipped = "skipped" }
