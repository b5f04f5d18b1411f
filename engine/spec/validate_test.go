package spec

import (
	"errors"
	"strings"
	"testing"
)

// yamlLines joins lines into a spec, so that a test's line numbers are its
// indexes plus one and columns can be counted by eye.
func yamlLines(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// specErrs parses src and returns its Errors, failing when it loads.
func specErrs(t *testing.T, src []byte) Errors {
	t.Helper()
	sp, err := Parse("bollhav.yaml", src)
	if err == nil {
		t.Fatalf("spec loaded (%d models), want an error", len(sp.Models))
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is %T, want Errors: %v", err, err)
	}
	return errs
}

// wantOneError asserts that src fails with exactly one problem, at "line:col",
// whose text after the position starts with msg.
func wantOneError(t *testing.T, src []byte, at, msg string) {
	t.Helper()
	errs := specErrs(t, src)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1:\n%v", len(errs), errs)
	}
	prefix := "bollhav.yaml:" + at + ": " + msg
	if got := errs[0].Error(); !strings.HasPrefix(got, prefix) {
		t.Errorf("error\n  got  %s\n  want %s…", got, prefix)
	}
}

// The positions in these cases are counted by hand: "  - name: x" has its
// key at column 5 and its value at 11; "      - name: x" under upstream has
// them at 9 and 15; "        contract: x" its key at 9 and value at 19.
const (
	lModels = "models:"
	lDaily  = "  - name: warehouse.daily"
	lChunk  = `    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}`
	lUp     = "    upstream:"
)

func TestDefinitionRules(t *testing.T) {
	cases := []struct {
		name string
		src  []byte
		at   string
		msg  string
	}{
		{"contract on a file source", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: dropzone.orders",
			"        file: {path: dropzone/orders.csv}",
			"        contract: whole"),
			"7:9", "model warehouse.daily, source dropzone.orders: contract on a file source: only a model source can gate"},
		{"contract on an api source", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: crm.contacts",
			"        api: {base_url: https://crm.example.com/api}",
			"        contract: ENCAPSULATE"),
			"7:9", "model warehouse.daily, source crm.contacts: contract on an api source"},
		{"contract on a hardcoded source", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: ref.countries",
			"        contract: exists",
			"        hardcoded: {rows: [{id: 1, code: SE}]}"),
			"6:9", "model warehouse.daily, source ref.countries: contract on a hardcoded source"},
		{"freshness without a contract", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        freshness: {within: 24h}"),
			"6:9", "model warehouse.daily, source raw.orders: freshness requires a contract"},
		{"freshness with EXISTS", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: EXISTS",
			"        freshness: {within: 24h, scope: all}"),
			"7:9", "model warehouse.daily, source raw.orders: freshness is not valid with EXISTS"},
		{"require_current without a contract", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        require_current: true"),
			"6:9", "model warehouse.daily, source raw.orders: require_current requires a contract"},
		{"require_current with EXISTS", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: EXISTS",
			"        require_current: true"),
			"7:9", "model warehouse.daily, source raw.orders: require_current is not valid with EXISTS"},
		{"require_current not a boolean", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: WHOLE",
			"        require_current: sometimes"),
			"7:26", "model warehouse.daily, source raw.orders: require_current"},
		{"gated upstream on a model without state", yamlLines(lModels, lDaily, lChunk,
			"    state: false",
			lUp,
			"      - name: raw.orders",
			"        contract: encapsulate"),
			"7:9", "model warehouse.daily, source raw.orders: gated upstream on a model without state"},
		{"hardcoded with rows and sql", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: ref.countries",
			"        hardcoded:",
			"          rows: [{id: 1, code: SE}]",
			"          sql: SELECT 1 AS id"),
			"6:9", "model warehouse.daily, source ref.countries: hardcoded has both rows and sql"},
		{"hardcoded with neither rows nor sql", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: ref.countries",
			"        hardcoded: {extra: {owner: finance}}"),
			"6:9", "model warehouse.daily, source ref.countries: hardcoded needs exactly one of rows or sql, got neither"},
		{"two type keys", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        model: {schema: raw}",
			"        file: {path: orders.csv}"),
			"7:9", "model warehouse.daily, source raw.orders: source has more than one type (model and file)"},
		{"duplicate model name", yamlLines(lModels,
			lDaily,
			"    temporality: timeless",
			lDaily,
			"    temporality: timeless"),
			"4:11", `model warehouse.daily: duplicate model name "warehouse.daily" (first at 2:11)`},
		{"duplicate model name differing in case", yamlLines(lModels,
			lDaily,
			"    temporality: timeless",
			"  - name: Warehouse.Daily",
			"    temporality: timeless"),
			"4:11", `model Warehouse.Daily: duplicate model name "Warehouse.Daily" (first at 2:11, as warehouse.daily; names that differ only in case are one table in SQLite)`},
		{"duplicate source name", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - {name: raw.orders, contract: whole}",
			"      - {name: raw.orders}"),
			"6:16", `model warehouse.daily, source raw.orders: duplicate source name "raw.orders" (first at 5:16)`},
		{"model name injection", yamlLines(lModels,
			`  - name: 'x"; DROP TABLE y; --'`,
			"    temporality: timeless"),
			"2:11", `invalid model name "x\"; DROP TABLE y; --": want schema.table`},
		{"model name injection in the table part", yamlLines(lModels,
			`  - name: 'warehouse.x"; DROP TABLE y; --'`,
			"    temporality: timeless"),
			"2:11", `invalid model name "warehouse.x\"; DROP TABLE y; --": part "x\"; DROP TABLE y; --" is not an identifier`},
		{"model name with three parts", yamlLines(lModels,
			"  - name: db.warehouse.daily",
			"    temporality: timeless"),
			"2:11", `invalid model name "db.warehouse.daily": want schema.table`},
		{"model name part starting with a digit", yamlLines(lModels,
			"  - name: warehouse.1daily",
			"    temporality: timeless"),
			"2:11", `invalid model name "warehouse.1daily": part "1daily" is not an identifier`},
		{"source name injection", yamlLines(lModels, lDaily, lChunk, lUp,
			`      - name: 'raw.orders"; DROP TABLE y; --'`),
			"5:15", `model warehouse.daily: invalid source name "raw.orders\"; DROP TABLE y; --": part "orders\"; DROP TABLE y; --" is not an identifier`},
		{"model source name with four parts", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: a.b.c.d"),
			"5:15", `model warehouse.daily: invalid source name "a.b.c.d": want schema.table or catalog.schema.table`},
		{"model source name with one part", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: orders"),
			"5:15", `model warehouse.daily: invalid source name "orders": want schema.table or catalog.schema.table`},
		{"file source name with a slash", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: dropzone/orders.csv",
			"        file: {path: dropzone/orders.csv}"),
			"5:15", `model warehouse.daily: invalid source name "dropzone/orders.csv": part "dropzone/orders" is not an identifier`},
		{"empty source name", yamlLines(lModels, lDaily, lChunk, lUp,
			`      - name: ""`),
			"5:15", `model warehouse.daily: invalid source name "": want schema.table or catalog.schema.table`},
		{"source without a name", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - contract: whole"),
			"5:9", "model warehouse.daily: source has no name"},
		{"pipeline injection", yamlLines(lModels, lDaily, lChunk,
			`    pipeline: 'core; rm -rf /'`),
			"4:15", `model warehouse.daily: invalid pipeline name "core; rm -rf /": part "core; rm -rf /" is not an identifier`},
		{"upsert key injection", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      query: SELECT 1",
			`      write: {mode: upsert, keys: [id, 'x"; DROP TABLE y; --']}`),
			"6:40", `model warehouse.daily: invalid upsert key "x\"; DROP TABLE y; --": part "x\"; DROP TABLE y; --" is not an identifier`},
		{"partition column injection", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      query: SELECT 1",
			`      write: {mode: recreate_partition, column: "day; DELETE FROM orders"}`),
			"6:49", `model warehouse.daily: invalid column "day; DELETE FROM orders": part "day; DELETE FROM orders" is not an identifier`},
		{"connection dsn_env_var injection", yamlLines(lModels, lDaily, lChunk,
			`    connection: {dsn_env_var: "DSN; rm -rf ~"}`),
			"4:31", `model warehouse.daily: invalid dsn_env_var "DSN; rm -rf ~": want an environment variable name`},
		{"source dsn_env_var injection", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.landing",
			`        model: {dsn_env_var: "$(reboot)"}`),
			"6:30", `model warehouse.daily, source raw.landing: invalid dsn_env_var "$(reboot)": want an environment variable name`},
		{"source schema injection", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.landing",
			`        model: {schema: 'raw"."secrets'}`),
			"6:25", `model warehouse.daily, source raw.landing: invalid schema "raw\".\"secrets": want a single identifier`},
		{"unknown contract", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: sometimes"),
			"6:19", `model warehouse.daily, source raw.orders: unknown contract "sometimes": want exists, exact, encapsulate, through or whole`},
		{"removed WINDOW contract", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: window"),
			"6:19", "model warehouse.daily, source raw.orders: contract WINDOW was removed: use ENCAPSULATE"},
		{"unknown freshness scope", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: whole",
			"        freshness: {within: 1d, scope: newest}"),
			"7:40", `model warehouse.daily, source raw.orders: unknown freshness scope "newest": want latest or all`},
		{"unknown flexibility", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", flexibility: elastic}`),
			"3:64", `model warehouse.daily: unknown flexibility "elastic": want fix or flex`},
		{"unknown temporality", yamlLines(lModels, lDaily, lChunk,
			"    temporality: eternal"),
			"4:18", `model warehouse.daily: unknown temporality "eternal": want temporal or timeless`},
		{"unknown write mode", yamlLines(lModels, lDaily, lChunk,
			"    run: {query: SELECT 1, write: {mode: merge}}"),
			"4:42", `model warehouse.daily: unknown write mode "merge": want append, upsert or recreate_partition`},
		{"unknown after edge type", yamlLines(lModels, lDaily, lChunk,
			"    after: [{task: warehouse.other, on: success_or_failure}]",
			"  - name: warehouse.other",
			"    temporality: timeless"),
			"4:41", `model warehouse.daily: unknown after on "success_or_failure": want success, failure, always or has_data`},
		{"bad interval", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1.5h, start: "2026-01-01"}`),
			"3:26", `model warehouse.daily: invalid interval "1.5h": the count must be a whole number`},
		{"bad freshness duration", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: raw.orders",
			"        contract: whole",
			"        freshness: {within: soon}"),
			"7:29", `model warehouse.daily, source raw.orders: invalid duration "soon"`},
		{"bad run timeout", yamlLines(lModels, lDaily, lChunk,
			`    run: {command: [./load.sh], timeout: "-5m"}`),
			"4:42", `model warehouse.daily: invalid timeout: invalid duration "-5m"`},
		{"bad timezone", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", timezone: Europe/Atlantis}`),
			"3:61", `model warehouse.daily: unknown time zone "Europe/Atlantis"`},
		{"machine-local timezone", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", timezone: Local}`),
			"3:61", `model warehouse.daily: time zone "Local" is not allowed`},
		{"bad start", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: yesterday}`),
			"3:37", `model warehouse.daily: invalid start: invalid time "yesterday"`},
		{"end before start", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", end: "2025-12-01"}`),
			"3:56", "model warehouse.daily: end 2025-12-01T00:00:00Z is not after start 2026-01-01T00:00:00Z"},
		{"end equal to start", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", end: "2026-01-01"}`),
			"3:56", "model warehouse.daily: end 2026-01-01T00:00:00Z is not after start 2026-01-01T00:00:00Z"},
		{"end off the fixed grid", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", end: "2026-02-01T12:00:00Z"}`),
			"3:56", "model warehouse.daily: end 2026-02-01T12:00:00Z is not a window boundary of the 1d grid from 2026-01-01T00:00:00Z (UTC); the nearest are 2026-02-01T00:00:00Z and 2026-02-02T00:00:00Z"},
		{"bad end", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1d, start: "2026-01-01", end: soon}`),
			"3:56", `model warehouse.daily: invalid end: invalid time "soon"`},
		{"temporal model without chunking", yamlLines(lModels, lDaily,
			"    run: {command: [./load.sh]}"),
			"2:5", "model warehouse.daily: temporal model has no chunking"},
		{"chunking without interval", yamlLines(lModels, lDaily,
			`    chunking: {start: "2026-01-01"}`),
			"3:5", "model warehouse.daily: chunking needs an interval"},
		{"chunking without start", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1h}`),
			"3:5", "model warehouse.daily: chunking needs a start"},
		{"chunking on a timeless model", yamlLines(lModels, lDaily,
			"    temporality: timeless",
			lChunk),
			"4:5", "model warehouse.daily: chunking on a timeless model"},
		{"timeless model gating EXACT", yamlLines(lModels, lDaily,
			"    temporality: timeless", lUp,
			"      - name: raw.orders",
			"        contract: exact"),
			"6:19", "model warehouse.daily, source raw.orders: a timeless model cannot gate with EXACT: it has no window to match; use WHOLE (loaded) or EXISTS (registered)"},
		{"timeless model gating ENCAPSULATE", yamlLines(lModels, lDaily,
			"    temporality: timeless", lUp,
			"      - name: raw.orders",
			"        contract: Encapsulate"),
			"6:19", "model warehouse.daily, source raw.orders: a timeless model cannot gate with ENCAPSULATE"},
		{"timeless model gating THROUGH", yamlLines(lModels, lDaily,
			"    temporality: timeless", lUp,
			"      - name: raw.orders",
			"        contract: through"),
			"6:19", "model warehouse.daily, source raw.orders: a timeless model cannot gate with THROUGH"},
		{"source naming its own model", yamlLines(lModels, lDaily, lChunk, lUp,
			"      - name: warehouse.daily",
			"        contract: through"),
			"5:15", "model warehouse.daily, source warehouse.daily: source names its own model"},
		{"after naming an unknown model", yamlLines(lModels, lDaily, lChunk,
			"    after:",
			"      - task: warehouse.nowhere"),
			"5:15", "model warehouse.daily: after names warehouse.nowhere, which is not a model of this spec"},
		{"after naming itself", yamlLines(lModels, lDaily, lChunk,
			"    after:",
			"      - {task: warehouse.daily, on: failure}"),
			"5:16", "model warehouse.daily: after names the model itself"},
		{"after naming a task twice", yamlLines(lModels, lDaily, lChunk,
			"    after:",
			"      - {task: warehouse.other, on: success}",
			"      - {task: warehouse.other, on: failure}",
			"  - name: warehouse.other",
			"    temporality: timeless"),
			"6:16", "model warehouse.daily: after lists warehouse.other twice (first at 5:16)"},
		{"run_condition zero", yamlLines(lModels, lDaily, lChunk,
			"    run_condition: 0"),
			"4:20", "model warehouse.daily: run_condition 0 must be at least 1"},
		{"run_condition negative", yamlLines(lModels, lDaily, lChunk,
			"    run_condition: -2"),
			"4:20", "model warehouse.daily: run_condition -2 must be at least 1"},
		{"run_condition neither all, any nor N", yamlLines(lModels, lDaily, lChunk,
			"    run_condition: most"),
			"4:20", `model warehouse.daily: unknown run_condition "most": want all, any or a whole number N >= 1`},
		{"run_condition fraction", yamlLines(lModels, lDaily, lChunk,
			"    run_condition: 1.5"),
			"4:20", `model warehouse.daily: unknown run_condition "1.5"`},
		{"upsert without keys", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      query: SELECT 1",
			"      write: {mode: upsert}"),
			"6:21", "model warehouse.daily: upsert needs keys"},
		{"recreate_partition without column", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      query: SELECT 1",
			"      write: {mode: recreate_partition}"),
			"6:21", "model warehouse.daily: recreate_partition needs a column"},
		{"run with command and query", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      command: [./load.sh]",
			"      query: SELECT 1",
			"      write: {mode: append}"),
			"6:7", "model warehouse.daily: run has both command and query: a run uses exactly one of command, sql or query"},
		{"run with sql and query", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      sql: DELETE FROM x",
			"      query: SELECT 1",
			"      write: {mode: append}"),
			"6:7", "model warehouse.daily: run has both sql and query"},
		{"temporal query without write", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      query: SELECT 1"),
			"5:7", "model warehouse.daily: a temporal model's query needs a write"},
		{"write without query", yamlLines(lModels, lDaily, lChunk,
			"    run:",
			"      sql: DELETE FROM x",
			"      write: {mode: append}"),
			"6:7", "model warehouse.daily: write applies to a query"},
		{"empty command", yamlLines(lModels, lDaily, lChunk,
			"    run: {command: []}"),
			"4:20", "model warehouse.daily: command is empty"},
		{"command given as a string", yamlLines(lModels, lDaily, lChunk,
			"    run: {command: ./load.sh --full}"),
			"4:20", "model warehouse.daily: command must be a list (an argv)"},
		{"monthly grain starting on the 31st", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1mo, start: "2026-01-31"}`),
			"3:38", "model warehouse.daily: a 1mo grid cannot start on day 31 of the month"},
		{"monthly grain starting on the 29th", yamlLines(lModels, lDaily,
			`    chunking: {interval: 3mo, start: "2026-01-29T00:00:00Z"}`),
			"3:38", "model warehouse.daily: a 3mo grid cannot start on day 29 of the month"},
		{"monthly grain starting after the 28th in its own zone", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1mo, start: "2026-01-28T23:30:00Z", timezone: Europe/Stockholm}`),
			"3:38", "model warehouse.daily: a 1mo grid cannot start on day 29 of the month"},
		{"yearly grain starting on 29 February", yamlLines(lModels, lDaily,
			`    chunking: {interval: 1y, start: "2028-02-29"}`),
			"3:37", "model warehouse.daily: a 1y grid cannot start on 29 February"},
		{"state not a boolean", yamlLines(lModels, lDaily, lChunk,
			"    state: yes"),
			"4:12", `model warehouse.daily: state must be true or false, got "yes"`},
		{"model without a name", yamlLines(lModels,
			"  - temporality: timeless"),
			"2:5", "model has no name: want name: schema.table"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantOneError(t, c.src, c.at, c.msg) })
	}
}

// TestGateTimeRulesLoad checks that what the design makes a gate-time error is
// not refused at load: EXACT on a flexible upstream (Guard A) and a gated
// upstream naming a model no spec registers are the gate's to judge against
// the registry, which may hold models from other specs.
func TestGateTimeRulesLoad(t *testing.T) {
	src := yamlLines(lModels,
		"  - name: raw.events",
		`    chunking: {interval: 1h, start: "2026-01-01", flexibility: flex}`,
		"    run: {command: [./load.sh]}",
		lDaily, lChunk, lUp,
		"      - {name: raw.events, contract: exact}",
		"      - {name: elsewhere.unregistered, contract: encapsulate}",
		"    run: {command: [./daily.sh]}")
	sp, err := Parse("bollhav.yaml", src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	m := sp.Model("warehouse.daily")
	if got := m.UpstreamNames(); strings.Join(got, ",") != "raw.events,elsewhere.unregistered" {
		t.Errorf("UpstreamNames = %v", got)
	}
	if !sp.Model("raw.events").Flexible() {
		t.Error("raw.events should be flexible")
	}
}

func TestUnknownKeysEverywhere(t *testing.T) {
	cases := []struct {
		name string
		src  []byte
		at   string
		msg  string
	}{
		{"top level", yamlLines("model:", "  - name: a.b"), "1:1", `unknown key "model" in the spec (did you mean "models"?)`},
		{"model", yamlLines(lModels, lDaily, lChunk, "    upstreams: []"),
			"4:5", `model warehouse.daily: unknown key "upstreams" in a model (did you mean "upstream"?)`},
		{"source", yamlLines(lModels, lDaily, lChunk, lUp, "      - name: raw.orders", "        contrat: whole"),
			"6:9", `model warehouse.daily, source raw.orders: unknown key "contrat" in a source (did you mean "contract"?)`},
		{"chunking", yamlLines(lModels, lDaily, `    chunking: {interval: 1d, start: "2026-01-01", tz: UTC}`),
			"3:51", `model warehouse.daily: unknown key "tz" in chunking; allowed: interval, start, end, flexibility, timezone`},
		{"freshness", yamlLines(lModels, lDaily, lChunk, lUp, "      - name: raw.orders", "        contract: whole", "        freshness: {within: 1d, max_age: 2d}"),
			"7:33", `model warehouse.daily, source raw.orders: unknown key "max_age" in freshness`},
		{"model type", yamlLines(lModels, lDaily, lChunk, lUp, "      - name: raw.orders", "        model: {table: orders}"),
			"6:17", `model warehouse.daily, source raw.orders: unknown key "table" in model`},
		{"file type", yamlLines(lModels, lDaily, lChunk, lUp, "      - name: dropzone.orders", "        file: {path: a.csv, delimiter: ;}"),
			"6:29", `model warehouse.daily, source dropzone.orders: unknown key "delimiter" in file`},
		{"api type", yamlLines(lModels, lDaily, lChunk, lUp, "      - name: crm.contacts", "        api: {url: https://x.example}"),
			"6:15", `model warehouse.daily, source crm.contacts: unknown key "url" in api`},
		{"hardcoded type", yamlLines(lModels, lDaily, lChunk, lUp, "      - name: ref.c", "        hardcoded: {row: [{a: 1}]}"),
			"6:21", `model warehouse.daily, source ref.c: unknown key "row" in hardcoded (did you mean "rows"?)`},
		{"run", yamlLines(lModels, lDaily, lChunk, "    run: {command: [./x], retries: 3}"),
			"4:27", `model warehouse.daily: unknown key "retries" in run`},
		{"write", yamlLines(lModels, lDaily, lChunk, "    run: {query: SELECT 1, write: {mode: append, batch: 10}}"),
			"4:50", `model warehouse.daily: unknown key "batch" in write`},
		{"after", yamlLines(lModels, lDaily, lChunk, "    after: [{task: warehouse.daily, when: success}]"),
			"4:37", `model warehouse.daily: unknown key "when" in an after entry`},
		{"connection", yamlLines(lModels, lDaily, lChunk, "    connection: {dsn: postgres://x}"),
			"4:18", `model warehouse.daily: unknown key "dsn" in connection`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := specErrs(t, c.src)
			prefix := "bollhav.yaml:" + c.at + ": " + c.msg
			for _, e := range errs {
				if strings.HasPrefix(e.Error(), prefix) {
					return
				}
			}
			t.Errorf("no error starting %q in:\n%v", prefix, errs)
		})
	}
}

// TestMisspeltRequiredKeyIsOneProblem: a required key written with a typo is
// one problem — the unknown key, with its suggestion — not also a second
// one saying the key is missing, which would send the reader looking for
// another mistake. Columns counted by hand as in the cases above.
func TestMisspeltRequiredKeyIsOneProblem(t *testing.T) {
	cases := []struct {
		name string
		src  []byte
		at   string
		msg  string
	}{
		{"models", yamlLines("modles:", "  - name: a.b"), "1:1", `unknown key "modles" in the spec (did you mean "models"?)`},
		{"model name", yamlLines(lModels, "  - nme: warehouse.daily", lChunk, "    run: {command: [./x]}"),
			"2:5", `unknown key "nme" in a model (did you mean "name"?)`},
		{"interval", yamlLines(lModels, lDaily, `    chunking: {intervall: 1d, start: "2026-01-01T00:00:00Z"}`, "    run: {command: [./x]}"),
			"3:16", `model warehouse.daily: unknown key "intervall" in chunking (did you mean "interval"?)`},
		{"start", yamlLines(lModels, lDaily, `    chunking: {interval: 1d, strat: "2026-01-01T00:00:00Z"}`, "    run: {command: [./x]}"),
			"3:30", `model warehouse.daily: unknown key "strat" in chunking (did you mean "start"?)`},
		{"executor", yamlLines(lModels, lDaily, lChunk, "    run: {comand: [./x]}"),
			"4:11", `model warehouse.daily: unknown key "comand" in run (did you mean "command"?)`},
		{"source name", yamlLines(lModels, lDaily, lChunk, lUp, "      - nam: raw.orders", "    run: {command: [./x]}"),
			"5:9", `model warehouse.daily: unknown key "nam" in a source (did you mean "name"?)`},
		{"after task", yamlLines(lModels, lDaily, lChunk, "    after: [{tsk: raw.orders}]", "    run: {command: [./x]}"),
			"4:14", `model warehouse.daily: unknown key "tsk" in an after entry (did you mean "task"?)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantOneError(t, c.src, c.at, c.msg) })
	}
}

func TestDuplicateKeys(t *testing.T) {
	wantOneError(t, yamlLines(lModels, lDaily, lChunk,
		"    pipeline: core",
		"    pipeline: marts"),
		"5:5", `model warehouse.daily: duplicate key "pipeline" in a model (first set at 4:5)`)
	wantOneError(t, yamlLines(lModels, lDaily, lChunk, lUp,
		"      - name: ref.c",
		"        hardcoded: {rows: [{id: 1, id: 2}]}"),
		"6:36", `model warehouse.daily, source ref.c: duplicate key "id" (first set at 6:29)`)
}

func TestSpecErrorsCollectedAndSorted(t *testing.T) {
	errs := specErrs(t, yamlLines(lModels,
		lDaily,
		"    temporality: timeless",
		"    after: [{task: warehouse.nowhere}]", // cross-model: found last
		"    upstream:",
		"      - {name: raw.orders, freshness: {within: 1d}}",
		lDaily, // duplicate name
		"    temporality: sometimes",
		"    colour: blue"))
	var got []string
	for _, e := range errs {
		got = append(got, e.Pos.String())
	}
	want := []string{"bollhav.yaml:4:20", "bollhav.yaml:6:28", "bollhav.yaml:7:11", "bollhav.yaml:8:18", "bollhav.yaml:9:5"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("positions = %v, want %v\n%v", got, want, errs)
	}
	var one *Error
	if !errors.As(error(errs), &one) || one.Pos.Line != 4 {
		t.Errorf("errors.As(*Error) = %v", one)
	}
	if one.Model != "warehouse.daily" || one.Source != "" {
		t.Errorf("context = %q/%q", one.Model, one.Source)
	}
}

func TestSpecErrorFormat(t *testing.T) {
	e := &Error{Pos: Position{File: "bollhav.yaml", Line: 12, Column: 7}, Model: "warehouse.daily_orders", Source: "raw.orders", Msg: "freshness requires a contract"}
	if got, want := e.Error(), "bollhav.yaml:12:7: model warehouse.daily_orders, source raw.orders: freshness requires a contract"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &Error{Pos: Position{File: "bollhav.yaml"}, Msg: "spec is empty"}
	if got, want := e.Error(), "bollhav.yaml: spec is empty"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
