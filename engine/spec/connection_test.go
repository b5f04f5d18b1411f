package spec

import (
	"strings"
	"testing"
)

// connectionSpec is a store-side raw table, a warehouse rollup reading
// another warehouse model, and a model with its own connection; %s is where
// each test puts its variation.
const connectionSpec = `defaults:
  connection: {dsn_env_var: WH_DSN}
models:
  - name: wh.daily
    temporality: timeless
    run: {query: "SELECT 1 AS n"}
  - name: wh.rollup
    temporality: timeless
    upstream:
      - {name: wh.daily, contract: exists}
    run: {query: 'SELECT n FROM {{ ref "wh.daily" }}'}
%s`

func TestDefaultConnectionAppliesToModelsWithoutTheirOwn(t *testing.T) {
	sp := parseOK(t, strings.Replace(connectionSpec, "%s", `  - name: other.own
    temporality: timeless
    connection: {dsn_env_var: OTHER_DSN}
    run: {query: "SELECT 2 AS n"}
`, 1))
	for name, want := range map[string]string{"wh.daily": "WH_DSN", "wh.rollup": "WH_DSN", "other.own": "OTHER_DSN"} {
		if c := sp.Model(name).Connection; c == nil || c.DSNEnvVar != want {
			t.Errorf("%s connection = %+v, want %s", name, c, want)
		}
	}
	if sp.Defaults.Connection == nil || sp.Defaults.Connection.DSNEnvVar != "WH_DSN" {
		t.Errorf("defaults = %+v", sp.Defaults)
	}
}

func TestRefToAModelOnAnotherConnectionIsASpecError(t *testing.T) {
	// other.reader runs on OTHER_DSN and refs wh.daily, which lives on
	// WH_DSN: line 16 is its upstream entry.
	_, err := Parse("s.yaml", []byte(strings.Replace(connectionSpec, "%s", `  - name: other.reader
    temporality: timeless
    connection: {dsn_env_var: OTHER_DSN}
    upstream:
      - {name: wh.daily, contract: exists}
    run: {query: 'SELECT n FROM {{ ref "wh.daily" }}'}
`, 1)))
	if err == nil {
		t.Fatal("a ref across connections loaded")
	}
	msg := err.Error()
	for _, want := range []string{"s.yaml:16:9:", "model other.reader", `{{ ref "wh.daily" }} reads wh.daily on $WH_DSN`, "this model runs on $OTHER_DSN"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

func TestRefFromTheStoreToAWarehouseModelIsASpecError(t *testing.T) {
	// Without defaults:, store.reader lives in the state store's database.
	src := `models:
  - name: wh.daily
    temporality: timeless
    connection: {dsn_env_var: WH_DSN}
    run: {query: "SELECT 1 AS n"}
  - name: store.reader
    temporality: timeless
    upstream: [{name: wh.daily}]
    run: {query: 'SELECT n FROM {{ ref "wh.daily" }}'}
`
	_, err := Parse("s.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:8:16:") || !strings.Contains(err.Error(), "this model runs on the state store's database") {
		t.Fatalf("err = %v", err)
	}
}

func TestSourceWithItsOwnDSNIsReadOnlyOnTheSameConnection(t *testing.T) {
	src := func(env string) string {
		return `defaults:
  connection: {dsn_env_var: WH_DSN}
models:
  - name: wh.copy
    temporality: timeless
    upstream:
      - name: crm.accounts
        model: {dsn_env_var: ` + env + `}
    run: {query: 'SELECT * FROM {{ ref "crm.accounts" }}'}
`
	}
	parseOK(t, src("WH_DSN"))
	_, err := Parse("s.yaml", []byte(src("CRM_DSN")))
	if err == nil || !strings.Contains(err.Error(), "$CRM_DSN (its dsn_env_var)") {
		t.Fatalf("err = %v", err)
	}
}

func TestAGatedUpstreamNotReadByTheQueryMayLiveElsewhere(t *testing.T) {
	// Gates are judged in the state store: only what the SQL reads must be
	// on the model's database.
	parseOK(t, `models:
  - name: raw.orders
    temporality: timeless
    run: {command: ["true"]}
  - name: wh.daily
    temporality: timeless
    connection: {dsn_env_var: WH_DSN}
    upstream: [{name: raw.orders, contract: exists}]
    run: {query: "SELECT 1 AS n"}
`)
}
