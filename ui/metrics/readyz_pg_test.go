package metrics_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/ui/metrics"
)

// withPassword is dsn (a URL) with a password the server does not check
// (the test server trusts local connections), so it can be looked for in
// everything served.
func withPassword(t *testing.T, dsn, pw string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		t.Skipf("BOLLHAV_TEST_DSN is not a URL with a user; cannot add a password to it")
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

// TestReadyzOnPostgres: ready on a reachable store at the schema version
// serve started with; 503 with one line once a newer bollhav migrated the
// store, ready again when it is back; 503 once the store's connections are
// closed. No answer and no metric names the DSN, its host or its password.
func TestReadyzOnPostgres(t *testing.T) {
	ctx := context.Background()
	base := pgtest.DSN(t)
	const pw = "s3cret-readyz-pw"
	dsn := withPassword(t, base, pw)
	schema := pgtest.Schema(t, base)
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := newMonitor(t, metrics.Config{Engine: engine.New(st, nil, engine.Options{})})
	h := m.Handler()
	u, _ := url.Parse(base)
	secret := func(where, s string) {
		t.Helper()
		for _, bad := range []string{pw, dsn, base, u.Host, schema} {
			if strings.Contains(s, bad) {
				t.Errorf("%s names %q:\n%s", where, bad, s)
			}
		}
	}

	if code, body := get(h, "/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q, want 200 ready", code, body)
	}
	if err := pgtest.Exec(base, fmt.Sprintf(`INSERT INTO %q.schema_version (version, name) VALUES ($1, 'from_the_future.sql')`, schema), v+1); err != nil {
		t.Fatal(err)
	}
	code, body := get(h, "/readyz")
	want := fmt.Sprintf("not ready: the postgres state store is at schema version %d, newer than the %d this bollhav knows; upgrade bollhav\n", v+1, v)
	if code != 503 || body != want {
		t.Errorf("/readyz after a newer migration = %d %q, want 503 %q", code, body, want)
	}
	secret("/readyz", body)
	if err := pgtest.Exec(base, fmt.Sprintf(`DELETE FROM %q.schema_version WHERE version = $1`, schema), v+1); err != nil {
		t.Fatal(err)
	}
	if code, body := get(h, "/readyz"); code != 200 {
		t.Errorf("/readyz with the newer migration gone = %d %q, want 200", code, body)
	}

	_, exposition := get(h, "/metrics")
	secret("/metrics", exposition)

	st.Close()
	code, body = get(h, "/readyz")
	if code != 503 || body != "not ready: the postgres state store cannot be read\n" {
		t.Errorf("/readyz with the connections closed = %d %q", code, body)
	}
	secret("/readyz", body)
}
