package storetest

import (
	"testing"

	"github.com/bollhav/bollhav/state"
)

var migrationTests = []test{
	{"SchemaVersion", testSchemaVersion},
	{"ReopenIsIdempotent", testReopenIsIdempotent},
}

// testSchemaVersion: a fresh store is migrated to a real version.
func testSchemaVersion(t *testing.T, s state.Store, _ *config) {
	v, err := s.SchemaVersion(t.Context())
	must(t, "SchemaVersion", err)
	if v < 1 {
		t.Errorf("SchemaVersion = %d, want at least 1", v)
	}
	if b := s.Backend(); b != "sqlite" && b != "postgres" {
		t.Errorf("Backend() = %q, want sqlite or postgres", b)
	}
}

// testReopenIsIdempotent: opening a migrated store again (every CLI call
// does) changes neither its version nor its data.
func testReopenIsIdempotent(t *testing.T, s state.Store, c *config) {
	if c.reopen == nil {
		t.Skip("the backend gave no reopen hook")
	}
	modelA(t, s, 2, clock(1))
	want, err := s.SchemaVersion(t.Context())
	must(t, "SchemaVersion", err)
	for i := range 2 {
		r := c.reopen(t, s)
		got, err := r.SchemaVersion(t.Context())
		must(t, "SchemaVersion after reopen", err)
		eq(t, "SchemaVersion after reopen", got, want)
		eq(t, "units after reopen", briefs(scan(t, r, "", "a")), []string{"a [0h,1h) pending", "a [1h,2h) pending"})
		eq(t, "prefill after reopen", prefill(t, r, "", "a", hourly(0, 2+i), clock(2)), i)
	}
}
