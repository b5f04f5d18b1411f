package storetest

import (
	"regexp"
	"testing"

	"github.com/bollhav/bollhav/state"
)

var migrationTests = []test{
	{"SchemaVersion", testSchemaVersion},
	{"ReopenIsIdempotent", testReopenIsIdempotent},
	{"Identity", testIdentity},
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

// testIdentity: a store has an identity from its creation, a version 4
// UUID in its text form; it is the same for every handle and after every
// reopen (another process), and two stores never share one.
func testIdentity(t *testing.T, s state.Store, c *config) {
	id, err := s.Identity(t.Context())
	must(t, "Identity", err)
	if !uuidV4.MatchString(id) {
		t.Fatalf("Identity = %q, want a version 4 UUID", id)
	}
	again, err := s.Identity(t.Context())
	must(t, "Identity again", err)
	eq(t, "Identity read twice", again, id)
	other, err := c.open(t).Identity(t.Context())
	must(t, "another store's Identity", err)
	if other == id {
		t.Errorf("two stores share the identity %s", id)
	}
	if c.reopen == nil {
		return
	}
	for range 2 {
		got, err := c.reopen(t, s).Identity(t.Context())
		must(t, "Identity after reopen", err)
		eq(t, "Identity after reopen", got, id)
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
