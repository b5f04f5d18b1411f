package tui

import (
	"path/filepath"
	"testing"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// tempStore opens a fresh SQLite store in a temporary folder, closed when
// the test ends, and returns the folder too, for an engine's SpecDir: the
// first step of every hand-built world outside newWorld.
func tempStore(t testing.TB) (state.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// parseSpec parses src as a bollhav.yaml, failing the test on an error, so
// that a test's spec constant reads as one line where it is used.
func parseSpec(t testing.TB, src string) *spec.Spec {
	t.Helper()
	sp, err := spec.Parse("bollhav.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}
