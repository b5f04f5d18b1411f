package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// designSpec is the design's example spec file, plus the model its after
// edge names.
const designSpec = `models:
  - name: raw.orders                 # schema.table: the target
    pipeline: ingest
    temporality: temporal            # temporal (default) | timeless
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: fix}
    run: {command: ["./load_orders.sh"]}
  - name: warehouse.daily_orders
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    state: true                      # default true; false = no state tracking
    upstream:
      - name: raw.orders             # no type key: a model source
        contract: encapsulate        # exists | exact | encapsulate | through | whole (any case)
        freshness: {within: 24h, scope: latest}
      - name: ref.countries
        hardcoded: {rows: [{id: 1, code: SE}]}
      - name: dropzone.orders
        file: {path: dropzone/orders.csv, separator: ","}
    run:
      query: SELECT date_trunc('day', ts) AS day, count(*) AS n FROM {{ ref "raw.orders" }} WHERE ts >= :since AND ts < :until GROUP BY 1
      write: {mode: recreate_partition, column: day}
    after: [{task: warehouse.customers, on: success}]
    run_condition: all
  - name: warehouse.customers
    pipeline: core
    temporality: timeless
    run: {sql: "CREATE TABLE IF NOT EXISTS {{ this }} (id int)"}
`

func parseOK(t *testing.T, src string) *Spec {
	t.Helper()
	sp, err := Parse("bollhav.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse:\n%v", err)
	}
	return sp
}

func TestParseDesignExample(t *testing.T) {
	sp := parseOK(t, designSpec)
	if sp.Path != "bollhav.yaml" || len(sp.Models) != 3 {
		t.Fatalf("spec = %s with %d models", sp.Path, len(sp.Models))
	}
	raw := sp.Model("raw.orders")
	if raw.Schema != "raw" || raw.Table != "orders" || raw.Pipeline != "ingest" || raw.Temporality != Temporal || !raw.State {
		t.Errorf("raw.orders = %+v", raw)
	}
	if c := raw.Chunking; c.Interval != state.MustInterval("1h") || !c.Start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || c.Flexibility != Fix || c.Location != time.UTC || c.End != nil {
		t.Errorf("raw.orders chunking = %+v", c)
	}
	if raw.Run.Kind != RunCommand || strings.Join(raw.Run.Command, " ") != "./load_orders.sh" {
		t.Errorf("raw.orders run = %+v", raw.Run)
	}
	if raw.Pos != (Position{File: "bollhav.yaml", Line: 2, Column: 5}) {
		t.Errorf("raw.orders pos = %v", raw.Pos)
	}

	daily := sp.Model("warehouse.daily_orders")
	if len(daily.Upstream) != 3 {
		t.Fatalf("upstream = %+v", daily.Upstream)
	}
	up := daily.Upstream[0]
	if up.Name != "raw.orders" || up.Kind != KindModel || up.Model == nil || up.Contract != Encapsulate ||
		up.Freshness == nil || up.Freshness.Within != 24*time.Hour || up.Freshness.Scope != Latest {
		t.Errorf("raw.orders source = %+v", up)
	}
	if up.Pos != (Position{File: "bollhav.yaml", Line: 12, Column: 9}) {
		t.Errorf("source pos = %v", up.Pos)
	}
	hc := daily.Upstream[1]
	if hc.Kind != KindHardcoded || hc.Gated() || len(hc.Hardcoded.Rows) != 1 || hc.Hardcoded.Rows[0]["id"] != int64(1) || hc.Hardcoded.Rows[0]["code"] != "SE" {
		t.Errorf("ref.countries = %+v %+v", hc, hc.Hardcoded)
	}
	file := daily.Upstream[2]
	if file.Kind != KindFile || file.File.Path != "dropzone/orders.csv" || file.File.Separator != "," {
		t.Errorf("dropzone.orders = %+v", file.File)
	}
	if r := daily.Run; r.Kind != RunQuery || !strings.HasPrefix(r.Query, "SELECT date_trunc") || r.Write == nil ||
		r.Write.Mode != RecreatePartition || r.Write.Column != "day" || r.Pos.Line != 19 {
		t.Errorf("daily run = %+v", r)
	}
	if len(daily.After) != 1 || daily.After[0].Task != "warehouse.customers" || daily.After[0].On != graph.Success {
		t.Errorf("after = %+v", daily.After)
	}
	if daily.RunCondition != graph.All {
		t.Errorf("run_condition = %v", daily.RunCondition)
	}
	cust := sp.Model("warehouse.customers")
	if cust.Temporality != Timeless || cust.Chunking != nil || cust.Run.Kind != RunSQL || len(cust.Run.SQL) != 1 {
		t.Errorf("warehouse.customers = %+v", cust)
	}
	if sp.Model("warehouse.nowhere") != nil {
		t.Error("Model found a model that is not there")
	}
}

func TestParseDefaults(t *testing.T) {
	m := parseOK(t, "models:\n  - name: a.b\n    chunking: {interval: 15m, start: 2026-01-01}\n").Models[0]
	if m.Pipeline != DefaultPipeline || m.Temporality != Temporal || !m.State || m.RunCondition != graph.All ||
		m.Run.Kind != RunNone || m.Connection != nil || len(m.After) != 0 {
		t.Errorf("defaults = %+v", m)
	}
	if m.Chunking.Flexibility != Fix || m.Chunking.Location != time.UTC {
		t.Errorf("chunking defaults = %+v", m.Chunking)
	}
}

func TestParseEverything(t *testing.T) {
	sp := parseOK(t, `models:
  - name: warehouse.events
    pipeline: core
    chunking:
      interval: 1d
      start: 2026-03-01
      end: "2026-04-01"
      flexibility: FLEX
      timezone: Europe/Stockholm
    upstream:
      - name: lake.raw.events
        contract: Through
        deactivate_for_dev: true
        freshness: {within: 2d, scope: ALL}
        model:
          schema: raw_v2
          catalog: lake_db
          dsn_env_var: LAKE_DSN
          read_query: SELECT * FROM events WHERE ts >= :since
          partitioned_by: event_date
          infer_schema_length: 1000
          extra: {batch: 500, tags: [a, b], nested: {x: 1.5}, none: null}
      - name: dropzone.events
        file:
          path: dropzone/events.csv
          encoding: latin-1
          separator: "\t"
          infer_schema_length: 0
          remove_top_rows: 2
          archive_folder: dropzone/done
          dateformat: "%d/%m/%Y"
          file_ending: tsv
      - name: crm.contacts
        api: {base_url: "https://crm.example.com/api", extra: {page_size: 100}}
      - name: ref.flags
        hardcoded: {sql: "SELECT * FROM (VALUES (1, true)) AS t(id, active)", extra: {owner: ops}}
    run:
      query: SELECT 1
      write: {mode: upsert, keys: [event_id, event_date]}
      timeout: 90m
    after:
      - {task: warehouse.other, on: FAILURE}
      - {task: warehouse.third, on: has_data}
    run_condition: 2
    connection: {dsn_env_var: WAREHOUSE_DSN}
  - name: warehouse.other
    temporality: timeless
    state: false
    run:
      sql:
        - DELETE FROM {{ this }}
        - |
          INSERT INTO {{ this }} SELECT 1
  - name: warehouse.third
    temporality: TIMELESS
    run_condition: any
    run: {query: "SELECT 1 AS x"}
`)
	m := sp.Model("warehouse.events")
	stockholm, _ := time.LoadLocation("Europe/Stockholm")
	c := m.Chunking
	// A date without a zone is local midnight in the model's zone.
	if !c.Start.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, stockholm)) || c.End == nil || !c.End.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, stockholm)) ||
		c.Flexibility != Flex || c.Location.String() != "Europe/Stockholm" || c.Interval != state.MustInterval("1d") {
		t.Errorf("chunking = %+v (start %s)", c, c.Start)
	}
	if !m.Flexible() {
		t.Error("Flexible = false")
	}
	src := m.Upstream[0]
	sm := src.Model
	if src.Contract != Through || !src.DeactivateForDev || src.Freshness.Within != 48*time.Hour || src.Freshness.Scope != All ||
		sm.Schema != "raw_v2" || sm.Catalog != "lake_db" || sm.DSNEnvVar != "LAKE_DSN" || !strings.HasPrefix(sm.ReadQuery, "SELECT *") ||
		sm.PartitionedBy != "event_date" || sm.InferSchemaLength == nil || *sm.InferSchemaLength != 1000 {
		t.Errorf("model source = %+v %+v", src, sm)
	}
	if sm.Extra["batch"] != int64(500) || len(sm.Extra["tags"].([]any)) != 2 || sm.Extra["nested"].(map[string]any)["x"] != 1.5 || sm.Extra["none"] != nil {
		t.Errorf("extra = %#v", sm.Extra)
	}
	f := m.Upstream[1].File
	if f.Path != "dropzone/events.csv" || f.Encoding != "latin-1" || f.Separator != "\t" || f.InferSchemaLength == nil || *f.InferSchemaLength != 0 ||
		f.RemoveTopRows != 2 || f.ArchiveFolder != "dropzone/done" || f.DateFormat != "%d/%m/%Y" || f.FileEnding != "tsv" {
		t.Errorf("file = %+v", f)
	}
	if a := m.Upstream[2].API; a.BaseURL != "https://crm.example.com/api" || a.Extra["page_size"] != int64(100) {
		t.Errorf("api = %+v", a)
	}
	if h := m.Upstream[3].Hardcoded; !strings.HasPrefix(h.SQL, "SELECT * FROM (VALUES") || h.Rows != nil || h.Extra["owner"] != "ops" {
		t.Errorf("hardcoded = %+v", h)
	}
	if r := m.Run; r.Kind != RunQuery || r.Write.Mode != Upsert || strings.Join(r.Write.Keys, ",") != "event_id,event_date" || r.Timeout != 90*time.Minute {
		t.Errorf("run = %+v %+v", r, r.Write)
	}
	if len(m.After) != 2 || m.After[0].On != graph.Failure || m.After[1].On != graph.HasData {
		t.Errorf("after = %+v", m.After)
	}
	if m.RunCondition != graph.N || m.RunConditionCount != 2 || m.Connection.DSNEnvVar != "WAREHOUSE_DSN" {
		t.Errorf("run_condition = %v %d, connection = %+v", m.RunCondition, m.RunConditionCount, m.Connection)
	}
	other := sp.Model("warehouse.other")
	if other.State || other.Run.Kind != RunSQL || len(other.Run.SQL) != 2 || other.Run.SQL[1] != "INSERT INTO {{ this }} SELECT 1\n" {
		t.Errorf("other = %+v", other.Run)
	}
	third := sp.Model("warehouse.third")
	if third.Run.Kind != RunView || third.Run.Query != "SELECT 1 AS x" || third.RunCondition != graph.Any {
		t.Errorf("third = %+v", third)
	}
}

func TestParseZonedStartKeepsItsInstant(t *testing.T) {
	m := parseOK(t, "models:\n  - name: a.b\n    chunking: {interval: 1d, start: \"2026-01-01T00:00:00Z\", timezone: Europe/Stockholm}\n").Models[0]
	if !m.Chunking.Start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("start = %s, want the instant written", m.Chunking.Start)
	}
}

func TestParseAnchorsAndMergeKeys(t *testing.T) {
	sp := parseOK(t, `models:
  - name: raw.a
    chunking: &hourly {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: &load {command: [./load.sh]}
  - name: raw.b
    chunking:
      <<: *hourly
      flexibility: flex
    run: *load
`)
	b := sp.Model("raw.b")
	if b.Chunking.Interval != state.MustInterval("1h") || b.Chunking.Flexibility != Flex || b.Run.Kind != RunCommand {
		t.Errorf("raw.b = %+v %+v", b.Chunking, b.Run)
	}
	// An explicit key wins over a merged one, without a duplicate-key error.
	sp = parseOK(t, "models:\n  - name: a.b\n    <<: {temporality: timeless, pipeline: merged}\n    pipeline: own\n")
	if m := sp.Models[0]; m.Pipeline != "own" || m.Temporality != Timeless {
		t.Errorf("merged model = %+v", m)
	}
}

func TestParseYAMLProblems(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"malformed", "models:\n  - name: a.b\n   bad: [\n", "bollhav.yaml:3:4: invalid YAML: "},
		{"tab indentation", "models:\n\t- name: a.b\n", "bollhav.yaml:2:1: invalid YAML: "},
		{"unterminated quote", "models:\n  - name: \"a.b\n", "bollhav.yaml:2:11: invalid YAML: "},
		{"empty", "", "bollhav.yaml:1:1: spec is empty: want a top-level models: list"},
		{"only a comment", "# nothing yet\n", "bollhav.yaml:1:1: spec is empty"},
		{"not a mapping", "- a\n- b\n", "bollhav.yaml:1:1: the spec must be a mapping (key: value), got a list"},
		{"models not a list", "models: {a: 1}\n", "bollhav.yaml:1:9: models must be a list, got a mapping"},
		{"no models key", "{}\n", "bollhav.yaml:1:1: spec has no models: list"},
		{"second document", "models: []\n---\nmodels: []\n", "bollhav.yaml:3:1: a spec is one YAML document"},
		{"tag", "models:\n  - name: !!str a.b\n", "bollhav.yaml:2:11: YAML tags such as !!str are not supported"},
		{"undefined alias", "models:\n  - name: *nope\n", "bollhav.yaml:2:11: alias *nope names no anchor defined before it"},
		{"complex key", "models:\n  - ? name\n    : a.b\n", "bollhav.yaml:2:5: complex keys (? key) are not supported"},
		{"model not a mapping", "models:\n  - raw.orders\n", "bollhav.yaml:2:5: a model must be a mapping (key: value), got a string"},
		{"escape sequence in the file", "models:\n  - name: a.b\n    temporality: \x1b[2J\n", "bollhav.yaml:3:18: model a.b: unknown temporality \"\\x1b[2J\""},
		{"nested too deep", "models: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n", "bollhav.yaml:1:72: YAML nested more than 64 levels deep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := specErrs(t, []byte(c.src))
			for _, e := range errs {
				if strings.HasPrefix(e.Error(), c.want) {
					return
				}
			}
			t.Errorf("no error starting %q in:\n%v", c.want, errs)
		})
	}
}

func TestParseYAMLDirective(t *testing.T) {
	sp := parseOK(t, "%YAML 1.2\n---\nmodels:\n  - name: a.b\n    temporality: timeless\n")
	if len(sp.Models) != 1 {
		t.Errorf("models = %d", len(sp.Models))
	}
}

func TestParseErrorsNeverCarryControlCharacters(t *testing.T) {
	for _, src := range []string{
		"models:\n  - name: a.b\n\x1b[31m: x\n",
		"models:\n  - name: *\x1b[2J\n",
		"models:\n  - name: \"a\x07.b\"\n",
		"mod\x1bels: []\n",
	} {
		_, err := Parse("bollhav.yaml", []byte(src))
		if err == nil {
			t.Errorf("%q loaded", src)
			continue
		}
		for _, r := range err.Error() {
			if r < ' ' && r != '\n' || r == 0x7f {
				t.Errorf("%q: error carries control character %U: %q", src, r, err.Error())
				break
			}
		}
	}
}

func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n  - name: a.b\n    temporality: timeless\n    upstream:\n      - name: r.s\n        model:\n          extra:\n")
	b.WriteString("            l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 12; i++ {
		b.WriteString("            l" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [" + strings.Repeat("*a"+strconv.Itoa(i-1)+", ", 9) + "*a" + strconv.Itoa(i-1) + "]\n")
	}
	// Expanded, this is 10^13 nodes: without the limit the parse would not
	// end (the package timeout fails it) long before it could return, so
	// no clock is needed — a timed check would only fail on a busy machine.
	errs := specErrs(t, []byte(b.String()))
	if !strings.Contains(errs.Error(), "expands to more than") {
		t.Errorf("errors = %v", errs)
	}
}

func TestParseRefusesBeforeParsing(t *testing.T) {
	big := make([]byte, MaxSize+1)
	errs := specErrs(t, big)
	if len(errs) != 1 || errs[0].Error() != "bollhav.yaml: spec is larger than 10 MiB; is this the right file?" {
		t.Errorf("oversized: %v", errs)
	}
	errs = specErrs(t, []byte("models:\n  - name: caf\xe9.orders\n"))
	if len(errs) != 1 || errs[0].Error() != "bollhav.yaml:2:14: spec is not valid UTF-8; save it as UTF-8" {
		t.Errorf("latin-1: %v", errs)
	}
	// A UTF-8 byte order mark is not an error.
	if _, err := Parse("bollhav.yaml", []byte("\xef\xbb\xbfmodels: []\n")); err != nil {
		t.Errorf("BOM: %v", err)
	}
}

func TestLoadSpec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bollhav.yaml")
	if err := os.WriteFile(path, []byte(designSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := Load(path)
	if err != nil || sp.Path != path || len(sp.Models) != 3 {
		t.Fatalf("Load = %v, %v", sp, err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("models:\n  - name: nope\n    temporality: timeless\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	var errs Errors
	if !errors.As(err, &errs) || !strings.HasPrefix(err.Error(), bad+":2:11: invalid model name") {
		t.Errorf("Load(bad) = %v", err)
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}

	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, make([]byte, MaxSize+10), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(huge); err == nil || !strings.Contains(err.Error(), "larger than 10 MiB") {
		t.Errorf("Load(huge) = %v", err)
	}
}
