package enginetest

import (
	"path/filepath"
	"testing"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// OpenProject opens a project folder (a copy of the demo shop) the way the
// CLI opens it without --dsn: its spec, dir/bollhav.yaml, and the SQLite
// store beside it, dir/.bollhav/state.db, closed when t ends. The CLI's and
// the UI's tests make their engines over what it returns.
func OpenProject(t testing.TB, dir string) (*spec.Spec, state.Store) {
	t.Helper()
	sp, err := spec.Load(filepath.Join(dir, "bollhav.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, ".bollhav", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return sp, s
}
