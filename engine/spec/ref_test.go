package spec

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// refModel mixes every kind of input on one model: two gated upstreams, one
// pinned to prod for dev runs and one following the env, and ungated sources
// of each type.
func refModel(t *testing.T) *Model {
	t.Helper()
	sp, err := Parse("bollhav.yaml", yamlLines(lModels,
		"  - name: marts.customer_orders",
		`    chunking: {interval: 1d, start: "2026-01-01"}`,
		lUp,
		"      - {name: warehouse.orders, contract: encapsulate, deactivate_for_dev: true}",
		"      - {name: warehouse.customers, contract: whole}",
		"      - {name: raw.landing, model: {dsn_env_var: RAW_DSN}}",
		"      - {name: lake.raw.events}",
		"      - {name: crm.accounts, model: {schema: crm_v2, catalog: crm_db}}",
		"      - {name: dropzone.orders, file: {path: dropzone/orders.csv}}",
		"      - {name: crm.contacts, api: {base_url: https://crm.example.com/api}}",
		"      - {name: ref.countries, hardcoded: {rows: [{id: 1, code: SE}]}}",
		"    run: {command: [./build.sh]}"))
	if err != nil {
		t.Fatal(err)
	}
	return sp.Models[0]
}

var (
	envProd = Env{}
	envPR   = Env{Suffix: "pr123"}
)

// TestRefThreeCases walks the design's table for deactivate_for_dev, row by
// row, on one model that mixes both declarations.
func TestRefThreeCases(t *testing.T) {
	m := refModel(t)
	cases := []struct {
		name      string
		source    string
		env       Env
		ref       string
		skipped   bool
		registry  Env
		rationale string
	}{
		{"dev to prod table, assume its state ok", "warehouse.orders", envPR, `"warehouse"."orders"`, true, envProd,
			"deactivate_for_dev in a suffixed run reads prod and skips the gate"},
		{"dev to dev table, check its state", "warehouse.customers", envPR, `"warehouse_pr123"."customers"`, false, envPR,
			"a gated source follows the suffix and gates the dev registration"},
		{"prod to prod table, deactivated source", "warehouse.orders", envProd, `"warehouse"."orders"`, false, envProd,
			"the flag is inert without a suffix: prod reads and gates prod"},
		{"prod to prod table, default source", "warehouse.customers", envProd, `"warehouse"."customers"`, false, envProd,
			"prod reads and gates prod"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, _ := m.source(c.source)
			got, err := m.Ref(c.source, c.env)
			if err != nil || got != c.ref {
				t.Errorf("Ref = %s, %v; want %s (%s)", got, err, c.ref, c.rationale)
			}
			if s := m.GateSkipped(src, c.env); s != c.skipped {
				t.Errorf("GateSkipped = %v, want %v (%s)", s, c.skipped, c.rationale)
			}
			if r := m.RegistrationEnv(src, c.env); r != c.registry {
				t.Errorf("RegistrationEnv = %v, want %v (%s)", r, c.registry, c.rationale)
			}
		})
	}
}

func TestRefUngatedIsLiteral(t *testing.T) {
	m := refModel(t)
	cases := map[string]string{
		"raw.landing":     `"raw"."landing"`,
		"lake.raw.events": `"lake"."raw"."events"`,
		"crm.accounts":    `"crm_db"."crm_v2"."accounts"`, // schema and catalog override the name
	}
	for name, want := range cases {
		for _, env := range []Env{envProd, envPR} {
			if got, err := m.Ref(name, env); err != nil || got != want {
				t.Errorf("Ref(%s, %v) = %s, %v; want %s in every environment", name, env, got, err, want)
			}
		}
	}
}

func TestRefErrors(t *testing.T) {
	m := refModel(t)
	cases := []struct {
		name, want string
		is         error
	}{
		{"warehouse.missing", "not a declared source: list it under upstream", ErrUndeclaredSource},
		{"dropzone.orders", "a file source has no table to select FROM", ErrNotAddressable},
		{"crm.contacts", "an api source has no table to select FROM", ErrNotAddressable},
		{"ref.countries", "hardcoded data has no stable table identifier", ErrNotAddressable},
		{NewUnknownSource("x.y").Name, "the unknown-provenance sentinel", ErrNotAddressable},
	}
	for _, c := range cases {
		_, err := m.Ref(c.name, envPR)
		if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Ref(%s) = %v; want %v saying %q", c.name, err, c.is, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "model marts.customer_orders: ref ") {
			t.Errorf("Ref(%s) error does not name the model: %v", c.name, err)
		}
	}
	// The sentinel on a model that has one is not addressable either.
	sp, err := Parse("bollhav.yaml", yamlLines(lModels, lDaily, "    temporality: timeless"))
	if err != nil {
		t.Fatal(err)
	}
	sentinel := sp.Models[0].Upstream[0].Name
	if _, err := sp.Models[0].Ref(sentinel, envProd); !errors.Is(err, ErrNotAddressable) {
		t.Errorf("Ref(sentinel) = %v, want ErrNotAddressable", err)
	}
}

func TestTarget(t *testing.T) {
	m := refModel(t)
	if got := m.Target(envProd); got != `"marts"."customer_orders"` {
		t.Errorf("Target(envProd) = %s", got)
	}
	if got := m.Target(envPR); got != `"marts_pr123"."customer_orders"` {
		t.Errorf("Target(pr123) = %s", got)
	}
}

func TestQuoteIdent(t *testing.T) {
	cases := map[string]string{
		"orders":               `"orders"`,
		`x"; DROP TABLE y; --`: `"x""; DROP TABLE y; --"`,
		`""`:                   `""""""`,
		"":                     `""`,
		"Mixed Case":           `"Mixed Case"`,
	}
	for in, want := range cases {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseEnv(t *testing.T) {
	for _, ok := range []string{"", "pr123", "dev_alice", "PR_7"} {
		env, err := ParseEnv(ok)
		if err != nil || env.Suffix != ok {
			t.Errorf("ParseEnv(%q) = %v, %v", ok, env, err)
		}
	}
	for _, bad := range []string{`pr1"; DROP SCHEMA warehouse; --`, "envPR-1", "envPR 1", "envPR.1", "ä", strings.Repeat("a", 33)} {
		if _, err := ParseEnv(bad); err == nil {
			t.Errorf("ParseEnv(%q) accepted", bad)
		}
	}
	if (Env{}).Suffixed() || (Env{}).String() != "prod" || !envPR.Suffixed() || envPR.Schema("warehouse") != "warehouse_pr123" {
		t.Error("Env helpers disagree with the suffix")
	}
}

func TestEnvFromOS(t *testing.T) {
	t.Setenv(SchemaSuffixEnvVar, "pr9")
	if env, err := EnvFromOS(); err != nil || env.Suffix != "pr9" {
		t.Errorf("EnvFromOS = %v, %v", env, err)
	}
	t.Setenv(SchemaSuffixEnvVar, "pr9;")
	if _, err := EnvFromOS(); err == nil {
		t.Error("EnvFromOS accepted an invalid suffix")
	}
}

// EnvFromOS reads SCHEMA_SUFFIX from the process environment, for callers
// without a flag that overrides it.
func EnvFromOS() (Env, error) { return ParseEnv(os.Getenv(SchemaSuffixEnvVar)) }
