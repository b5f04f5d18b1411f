package postgres_test

import (
	"testing"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestConformance runs the suite both backends pass; every subtest works in
// a schema of its own, dropped when it ends.
func TestConformance(t *testing.T) {
	dsn := pgtest.DSN(t)
	storetest.Run(t,
		func(t *testing.T) state.Store { return openStore(t, dsn, pgtest.Schema(t, dsn)) },
		storetest.WithReopen(func(t *testing.T, s state.Store) state.Store {
			return openStore(t, dsn, s.(*postgres.Store).Schema())
		}),
	)
}

// TestStateMachine runs random sequences of claims, completions, lease
// expiries, crashes, bulldozer, torch and marks against a store in a fresh
// schema per check and an in-memory model (storetest.RunStateMachine); fewer
// checks than SQLite, as each one creates and migrates a schema. A failing
// sequence is shrunk into testdata/rapid/TestStateMachine/, and every file
// there is replayed on each run.
func TestStateMachine(t *testing.T) {
	dsn := pgtest.DSN(t)
	storetest.RunStateMachine(t, func(t *testing.T) state.Store { return openStore(t, dsn, pgtest.Schema(t, dsn)) }, 50)
}

// openStore opens a store in schema and closes it when tb ends.
func openStore(tb testing.TB, dsn, schema string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(tb.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		tb.Fatalf("Open(schema %s): %v", schema, err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
