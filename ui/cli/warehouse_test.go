package cli

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// whCLISpec keeps one hourly query model's data in the warehouse
// $BOLLHAV_CLI_WH names, its state in the embedded store beside the spec.
const whCLISpec = `defaults:
  connection: {dsn_env_var: BOLLHAV_CLI_WH}
models:
  - {name: wh.hourly, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {query: "SELECT :since AS ts, 1 AS n", write: {mode: recreate_partition, column: ts}}}
`

var whCLIWindow = []string{"--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T03:00:00Z"}

// whCLIWorld writes the spec into a folder of its own and points the store
// at the default beside it.
func whCLIWorld(t *testing.T) string {
	t.Helper()
	t.Setenv("BOLLHAV_DSN", "")
	return writeSpec(t, whCLISpec)
}

// TestWarehousePasswordNeverShown: the warehouse's DSN carries a sentinel
// password and names a database that does not exist, or a port nobody
// listens on. run fails the units with a one-line error naming the
// problem; the password appears in no output of run, units, status or why,
// and nowhere in the store's files.
func TestWarehousePasswordNeverShown(t *testing.T) {
	const secret = "S3ntinel-WH-7d1e"
	srv, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ dsn, want string }{
		"database that does not exist": {"postgres://" + srv.User.Username() + ":" + secret + "@" + srv.Host + "/bollhav_no_such_db?sslmode=disable", `bollhav_no_such_db\" does not exist on the server at`},
		"unreachable":                  {"postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=2", "cannot reach the server at 127.0.0.1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := whCLIWorld(t)
			t.Setenv("BOLLHAV_CLI_WH", tc.dsn)
			var all strings.Builder
			code, out, errOut := run(t, append([]string{"run", "--spec", spec, "wh.hourly"}, whCLIWindow...)...)
			all.WriteString(out + errOut)
			if code == 0 {
				t.Fatalf("run succeeded on a warehouse it cannot use:\n%s%s", out, errOut)
			}
			_, units, _ := run(t, "units", "--spec", spec, "wh.hourly", "-o", "json")
			all.WriteString(units)
			if !strings.Contains(units, tc.want) || !strings.Contains(units, `"status":"failed"`) {
				t.Errorf("units do not fail with %q:\n%s", tc.want, units)
			}
			for _, args := range [][]string{{"status", "-o", "json"}, {"status"}, {"why", "wh.hourly", "--at", "2026-01-01T00:30:00Z"}} {
				_, o, e := run(t, append(args, "--spec", spec)...)
				all.WriteString(o + e)
			}
			if strings.Contains(all.String(), secret) {
				t.Errorf("the password reached the output:\n%s", all.String())
			}
			files, _ := filepath.Glob(filepath.Join(filepath.Dir(spec), ".bollhav", "*"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if strings.Contains(string(b), secret) {
					t.Errorf("the password is in the store's file %s", f)
				}
			}
		})
	}
}

// TestWarehouseRunAndWhereItsDataLives: run writes the three hours into the
// warehouse; status and why say where the data lives — the variable, the
// driver, host and database — and never the user.
func TestWarehouseRunAndWhereItsDataLives(t *testing.T) {
	u, _ := url.Parse(enginetest.Database(t, "bollhav_cliwh_"))
	db := strings.TrimPrefix(u.Path, "/")
	spec := whCLIWorld(t)
	t.Setenv("BOLLHAV_CLI_WH", u.String())

	code, out, errOut := run(t, append([]string{"run", "--spec", spec, "wh.hourly"}, whCLIWindow...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	var n int
	if err := pgtest.QueryRow(u.String(), `SELECT count(*) FROM wh.hourly`, nil, &n); err != nil || n != 3 {
		t.Fatalf("the warehouse holds %d rows (%v), want 3", n, err)
	}
	where := "$BOLLHAV_CLI_WH (postgres " + u.Host + "/" + db + ")"
	_, status, _ := run(t, "status", "--spec", spec)
	if !strings.Contains(status, "data in "+where+": wh.hourly") {
		t.Errorf("status does not say where the data lives (%s):\n%s", where, status)
	}
	_, why, _ := run(t, "why", "wh.hourly", "--at", "2026-01-01T00:30:00Z", "--spec", spec)
	if !strings.Contains(why, "  data in "+where+"\n") {
		t.Errorf("why does not say where the data lives:\n%s", why)
	}
	_, js, _ := run(t, "status", "-o", "json", "--spec", spec)
	var doc struct {
		Models []struct {
			Data map[string]*string `json:"data"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Models) != 1 {
		t.Fatalf("status -o json: %v\n%s", err, js)
	}
	d := doc.Models[0].Data
	for k, want := range map[string]string{"connection": "BOLLHAV_CLI_WH", "driver": "postgres", "host": u.Host, "database": db} {
		if d[k] == nil || *d[k] != want {
			t.Errorf("data.%s = %v, want %s", k, d[k], want)
		}
	}
	if user := u.User.Username(); strings.Contains(status+why+js, user+"@") {
		t.Errorf("the user %q is shown", user)
	}
}

// TestShopExampleRunsEndToEnd runs examples/shop — its loader scripts with
// psql included — against a warehouse database of its own, with the state
// in the embedded store, over two Stockholm days, as the README shows. The
// numbers are worked out from the scripts: an order every 20 minutes (72 a
// day) of 100 + (epoch/1200 mod 900) SEK, a click every 5 minutes, two to
// a session (144 sessions a day), VAT 25 %.
func TestShopExampleRunsEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("the shop's loader scripts need psql")
	}
	warehouse := enginetest.Database(t, "bollhav_shop_")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/shop")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BOLLHAV_DSN", "")
	t.Setenv("SHOP_WAREHOUSE_DSN", warehouse)
	spec := filepath.Join(dir, "bollhav.yaml")
	args := []string{"--spec", spec, "run", "--since", "2026-01-01T00:00:00+01:00", "--until", "2026-01-03T00:00:00+01:00"}
	for round := range 2 { // the second is a bulldozer rerun: nothing doubles
		if code, out, errOut := run(t, args...); code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", round+1, code, out, errOut)
		}
	}
	for query, want := range map[string]string{
		`SELECT string_agg(day || ' ' || orders || ' ' || gross, ', ' ORDER BY day) FROM warehouse.orders_daily`:               "2026-01-01 72 30276, 2026-01-02 72 35460",
		`SELECT string_agg(day || ' ' || net_revenue::numeric(12,1), ', ' ORDER BY day) FROM warehouse.revenue_daily`:          "2026-01-01 24220.8, 2026-01-02 28368.0",
		`SELECT string_agg(day || ' ' || revenue_to_date::numeric(12,1), ', ' ORDER BY day) FROM warehouse.revenue_cumulative`: "2026-01-01 24220.8, 2026-01-02 52588.8",
		`SELECT string_agg(day || ' ' || sessions, ', ' ORDER BY day) FROM warehouse.sessions_daily`:                           "2026-01-01 144, 2026-01-02 144",
		`SELECT count(*) || ' ' || count(DISTINCT order_id) FROM raw.orders`:                                                   "144 144",
		`SELECT value FROM ref.shop_config WHERE key = 'vat_rate'`:                                                             "0.25",
	} {
		var got string
		if err := pgtest.QueryRow(warehouse, query, nil, &got); err != nil || got != want {
			t.Errorf("%s\n got %q (%v)\nwant %q", query, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".bollhav", "state.db")); err != nil {
		t.Errorf("the state is not in the embedded store beside the spec: %v", err)
	}
}
