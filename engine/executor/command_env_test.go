package executor

import (
	"encoding/json"
	"github.com/bollhav/bollhav/engine/spec"
	"reflect"
	"strings"
	"testing"
)

// commandModel is a temporal command model named name running argv.
func commandModel(name string, argv ...string) *spec.Model {
	schema, table, _ := strings.Cut(name, ".")
	return &spec.Model{Name: name, Schema: schema, Table: table, State: true, Run: spec.Run{Kind: spec.RunCommand, Command: argv}}
}

// shopSources declares one source of every kind and gating case.
func shopSources() []spec.Source {
	fifty, hundred := 50, 100
	return []spec.Source{
		{Name: "raw.orders", Kind: spec.KindModel, Model: &spec.SourceModel{}, Contract: spec.Encapsulate},
		{Name: "crm.customers", Kind: spec.KindModel, Contract: spec.Exact, DeactivateForDev: true},
		{Name: "ext.fx_rates", Kind: spec.KindModel, Model: &spec.SourceModel{Schema: "finance", Catalog: "lake", DSNEnvVar: "FX_DSN",
			ReadQuery: "SELECT * FROM fx WHERE a < 1 & b", InferSchemaLength: &hundred, Extra: map[string]any{"region": "eu"}}},
		{Name: "dropzone.orders", Kind: spec.KindFile, File: &spec.SourceFile{Path: "dropzone/orders.csv", Encoding: "latin1", Separator: ";",
			InferSchemaLength: &fifty, RemoveTopRows: 2, ArchiveFolder: "archive", DateFormat: "%d/%m/%Y", FileEnding: "csv"}},
		{Name: "api.weather", Kind: spec.KindAPI, API: &spec.SourceAPI{BaseURL: "https://api.example.com/v1", Extra: map[string]any{"key_env": "WEATHER_KEY"}}},
		{Name: "ref.countries", Kind: spec.KindHardcoded, Hardcoded: &spec.SourceHardcoded{Rows: []map[string]any{{"id": 1, "code": "SE"}}}},
	}
}

// checkShopSourcesJSON checks BOLLHAV_SOURCES for shopSources in env pr123.
func checkShopSourcesJSON(t *testing.T, got string) {
	t.Helper()
	hash := shopSources()[5].Hardcoded.ContentHash()
	want := `[
	 {"name": "raw.orders", "kind": "model", "contract": "ENCAPSULATE", "ref": "\"raw_pr123\".\"orders\"", "model": {}},
	 {"name": "crm.customers", "kind": "model", "contract": "EXACT", "ref": "\"crm\".\"customers\"", "model": {}},
	 {"name": "ext.fx_rates", "kind": "model", "ref": "\"lake\".\"finance\".\"fx_rates\"",
	  "model": {"schema": "finance", "catalog": "lake", "dsn_env_var": "FX_DSN", "read_query": "SELECT * FROM fx WHERE a < 1 & b",
	            "infer_schema_length": 100, "extra": {"region": "eu"}}},
	 {"name": "dropzone.orders", "kind": "file",
	  "file": {"path": "dropzone/orders.csv", "encoding": "latin1", "separator": ";", "infer_schema_length": 50,
	           "remove_top_rows": 2, "archive_folder": "archive", "dateformat": "%d/%m/%Y", "file_ending": "csv"}},
	 {"name": "api.weather", "kind": "api", "api": {"base_url": "https://api.example.com/v1", "extra": {"key_env": "WEATHER_KEY"}}},
	 {"name": "ref.countries", "kind": "hardcoded", "hardcoded": {"rows": [{"id": 1, "code": "SE"}], "content_hash": "` + hash + `"}}
	]`
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("BOLLHAV_SOURCES is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("BOLLHAV_SOURCES =\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, `\u003c`) || strings.Contains(got, `\u0026`) {
		t.Errorf("BOLLHAV_SOURCES escapes < or &: %s", got)
	}
	if strings.ContainsRune(got, '\n') {
		t.Errorf("BOLLHAV_SOURCES spans lines: %q", got)
	}
}

func TestSourcesJSONInProd(t *testing.T) {
	m := commandModel("warehouse.daily")
	m.Upstream = append(shopSources(), spec.NewUnknownSource(m.Name))
	got, err := sourcesJSON(m, spec.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var srcs []map[string]any
	if err := json.Unmarshal([]byte(got), &srcs); err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 6 {
		t.Fatalf("got %d sources, want 6 (the sentinel left out): %s", len(srcs), got)
	}
	if ref := srcs[0]["ref"]; ref != `"raw"."orders"` {
		t.Errorf("gated ref in prod = %v, want \"raw\".\"orders\"", ref)
	}
	for _, s := range srcs[3:] {
		if _, ok := s["ref"]; ok {
			t.Errorf("%v source %v has a ref", s["kind"], s["name"])
		}
	}
}

func TestCommandEnvReplacesInheritedUnitVariables(t *testing.T) {
	u := UnitRun{Model: commandModel("raw.orders"), RunID: 3}
	env, err := commandEnv([]string{"BOLLHAV_RUN_ID=1", "BOLLHAV_DSN=sqlite:x.db", "HOME=/h"}, u)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(env, "\n")
	if strings.Contains(joined, "BOLLHAV_RUN_ID=1") || !strings.Contains(joined, "BOLLHAV_RUN_ID=3") {
		t.Errorf("inherited BOLLHAV_RUN_ID not replaced: %v", env)
	}
	for _, keep := range []string{"BOLLHAV_DSN=sqlite:x.db", "HOME=/h"} {
		if !strings.Contains(joined, keep) {
			t.Errorf("%s not passed on: %v", keep, env)
		}
	}
	u.StateMode = "nuke"
	if _, err := commandEnv(nil, u); err == nil || !strings.Contains(err.Error(), "nuke") {
		t.Errorf("unknown state mode: err = %v", err)
	}
}
