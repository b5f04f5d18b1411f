package engine

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

func mustParse(t *testing.T, yaml string) *spec.Spec { return enginetest.Parse(t, yaml) }

// findings returns the lint findings of rule, as "severity model" strings.
func findings(sp *spec.Spec, rule string) []Finding {
	var out []Finding
	for _, f := range Lint(sp) {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func expectOne(t *testing.T, sp *spec.Spec, rule string, sev Severity, model, contains string) Finding {
	t.Helper()
	fs := findings(sp, rule)
	if len(fs) != 1 {
		t.Fatalf("want one %s finding, got %d: %+v (all: %+v)", rule, len(fs), fs, Lint(sp))
	}
	f := fs[0]
	if f.Severity != sev || f.Model != model || !strings.Contains(f.Message, contains) {
		t.Fatalf("got %+v, want severity %s on %s containing %q", f, sev, model, contains)
	}
	return f
}

func expectNone(t *testing.T, sp *spec.Spec, rule string) {
	t.Helper()
	if fs := findings(sp, rule); len(fs) != 0 {
		t.Fatalf("want no %s finding, got %+v", rule, fs)
	}
}

const hourlyRaw = `
  - name: raw.orders
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
`

func flexModel(run string) string {
	return `models:
  - name: stage.events
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: ` + run + "\n"
}

func TestLintSilentFlexibleRows(t *testing.T) {
	t.Run("flexible + APPEND duplicates on re-cover", func(t *testing.T) {
		sp := mustParse(t, flexModel(`{query: "SELECT * FROM raw.e WHERE ts >= :since AND ts < :until", write: {mode: append}}`))
		expectOne(t, sp, "flex-append", SeverityWarning, "stage.events", "duplicat")
	})
	t.Run("flexible + UPSERT is order-dependent", func(t *testing.T) {
		sp := mustParse(t, flexModel(`{query: "SELECT * FROM raw.e WHERE ts >= :since AND ts < :until", write: {mode: upsert, keys: [id]}}`))
		expectOne(t, sp, "flex-upsert", SeverityWarning, "stage.events", "partition")
	})
	t.Run("flexible + GROUP BY is non-decomposable", func(t *testing.T) {
		sp := mustParse(t, flexModel(`{query: "SELECT day, count(*) FROM raw.e WHERE ts >= :since AND ts < :until GROUP BY day", write: {mode: recreate_partition, column: day}}`))
		expectOne(t, sp, "flex-aggregate", SeverityWarning, "stage.events", "aggregat")
	})
	t.Run("flexible + ROW_NUMBER latest-in-window is non-decomposable", func(t *testing.T) {
		sp := mustParse(t, flexModel(`{query: "SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY id) rn FROM raw.e) x WHERE rn = 1", write: {mode: recreate_partition, column: day}}`))
		expectOne(t, sp, "flex-aggregate", SeverityWarning, "stage.events", "row_number")
	})
	t.Run("flexible + cumulative THROUGH upstream is non-decomposable", func(t *testing.T) {
		sp := mustParse(t, "models:"+hourlyRaw+`
  - {name: stage.running_total, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex},
     upstream: [{name: raw.orders, contract: through}], run: {command: ["true"]}}
`)
		expectOne(t, sp, "flex-through", SeverityWarning, "stage.running_total", "cumulative")
	})
	t.Run("flexible row-preserving filter with recreate_partition is clean", func(t *testing.T) {
		sp := mustParse(t, flexModel(`{query: "SELECT id, ts FROM raw.e WHERE ts >= :since AND ts < :until", write: {mode: recreate_partition, column: ts}}`))
		for _, f := range Lint(sp) {
			t.Errorf("unexpected finding %+v", f)
		}
	})
	t.Run("fixed model + APPEND is not flagged", func(t *testing.T) {
		sp := mustParse(t, `models:
  - {name: stage.events, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {query: "SELECT count(*) FROM raw.e GROUP BY 1", write: {mode: append}}}
`)
		expectNone(t, sp, "flex-append")
		expectNone(t, sp, "flex-aggregate")
	})
}

func downstream(interval, level, extra string) string {
	return `
  - name: mart.daily
    chunking: {interval: ` + interval + `, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: raw.orders
        contract: ` + level + extra + `
    run: {command: ["true"]}
`
}

func TestLintExactGrainMismatch(t *testing.T) {
	t.Run("EXACT daily on an hourly upstream never matches", func(t *testing.T) {
		sp := mustParse(t, "models:"+hourlyRaw+downstream("1d", "exact", ""))
		f := expectOne(t, sp, "exact-grain-mismatch", SeverityError, "mart.daily", "can never match")
		// The finding points at the source entry, "- name: raw.orders" on line 9.
		if f.Pos.Line != 9 {
			t.Errorf("finding at line %d, want 9 (the source)", f.Pos.Line)
		}
	})
	t.Run("EXACT at the same grain is fine", func(t *testing.T) {
		sp := mustParse(t, "models:"+hourlyRaw+downstream("1h", "exact", ""))
		expectNone(t, sp, "exact-grain-mismatch")
	})
	t.Run("EXACT 1d on a 24h UTC grid matches: the windows coincide", func(t *testing.T) {
		sp := mustParse(t, `models:
  - {name: raw.orders, chunking: {interval: 24h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`+downstream("1d", "exact", ""))
		expectNone(t, sp, "exact-grain-mismatch")
	})
	t.Run("EXACT on a flexible upstream is Guard A", func(t *testing.T) {
		sp := mustParse(t, `models:
  - {name: raw.orders, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}, run: {command: ["true"]}}
`+downstream("1h", "exact", ""))
		expectOne(t, sp, "exact-on-flexible", SeverityError, "mart.daily", "ENCAPSULATE")
	})
}

func TestLintWindowLevelOnTimelessUpstream(t *testing.T) {
	for _, level := range []string{"exact", "encapsulate", "through"} {
		t.Run(level, func(t *testing.T) {
			sp := mustParse(t, `models:
  - {name: raw.orders, temporality: timeless, run: {command: ["true"]}}
`+downstream("1d", level, ""))
			expectOne(t, sp, "window-level-on-timeless", SeverityError, "mart.daily", "WHOLE or EXISTS")
		})
	}
	sp := mustParse(t, `models:
  - {name: raw.orders, temporality: timeless, run: {command: ["true"]}}
`+downstream("1d", "whole", ""))
	expectNone(t, sp, "window-level-on-timeless")
}

func TestLintUpstreamStartsLater(t *testing.T) {
	later := `models:
  - {name: raw.orders, chunking: {interval: 1h, start: "2026-02-01T00:00:00Z"}, run: {command: ["true"]}}
`
	for _, level := range []string{"encapsulate", "through", "exact"} {
		t.Run(level+" blocks its first windows forever", func(t *testing.T) {
			sp := mustParse(t, later+downstream("1d", level, ""))
			expectOne(t, sp, "upstream-starts-later", SeverityError, "mart.daily", "2026-02-01T00:00:00Z")
		})
	}
	t.Run("whole is a warning", func(t *testing.T) {
		sp := mustParse(t, later+downstream("1d", "whole", ""))
		expectOne(t, sp, "upstream-starts-later", SeverityWarning, "mart.daily", "WHOLE")
	})
	t.Run("exists never waits", func(t *testing.T) {
		sp := mustParse(t, later+downstream("1d", "exists", ""))
		expectNone(t, sp, "upstream-starts-later")
	})
}

func TestLintFreshnessShorterThanGrain(t *testing.T) {
	sp := mustParse(t, "models:"+hourlyRaw+downstream("1d", "encapsulate", "\n        freshness: {within: 30m, scope: latest}"))
	expectOne(t, sp, "freshness-shorter-than-grain", SeverityWarning, "mart.daily", "30m")
	sp = mustParse(t, "models:"+hourlyRaw+downstream("1d", "encapsulate", "\n        freshness: {within: 2h, scope: latest}"))
	expectNone(t, sp, "freshness-shorter-than-grain")
}

func TestLintRunConditionLargerThanEdges(t *testing.T) {
	sp := mustParse(t, "models:"+hourlyRaw+`
  - {name: mart.x, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run_condition: 2, run: {command: ["true"]}}
`)
	expectOne(t, sp, "n-exceeds-edges", SeverityError, "mart.x", "(1)")
}

func TestLintFailureOnlyEdgesUnderAll(t *testing.T) {
	base := `models:
  - name: a.load
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: b.load
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
`
	alert := `  - name: ops.alert
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    after: [{task: a.load, on: failure}, {task: b.load, on: failure}]
    run: {command: ["true"]}
`
	t.Run("independent upstreams can both fail: a warning", func(t *testing.T) {
		sp := mustParse(t, base+alert)
		expectOne(t, sp, "failure-only-all", SeverityWarning, "ops.alert", "a.load, b.load")
	})
	t.Run("b needs a's success: both can never fail", func(t *testing.T) {
		sp := mustParse(t, strings.Replace(base, "  - name: b.load\n", "  - name: b.load\n    after: [{task: a.load, on: success}]\n", 1)+alert)
		expectOne(t, sp, "failure-only-all", SeverityError, "ops.alert", "b.load needs a.load to succeed")
	})
	t.Run("ANY with FAILURE edges is fine", func(t *testing.T) {
		sp := mustParse(t, base+strings.Replace(alert, "    run: {", "    run_condition: any\n    run: {", 1))
		expectNone(t, sp, "failure-only-all")
	})
}

func TestLintCycles(t *testing.T) {
	t.Run("task cycle through after edges", func(t *testing.T) {
		sp := mustParse(t, `models:
  - {name: a.x, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: b.y}], run: {command: ["true"]}}
  - {name: b.y, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, after: [{task: a.x}], run: {command: ["true"]}}
`)
		f := expectOne(t, sp, "task-cycle", SeverityError, "a.x", "a.x → b.y → a.x")
		if f.Pos.Line != 2 {
			t.Errorf("the cycle points at line %d, want 2 (model a.x)", f.Pos.Line)
		}
	})
	t.Run("models reading each other", func(t *testing.T) {
		sp := mustParse(t, `models:
  - {name: a.x, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: b.y}], run: {command: ["true"]}}
  - {name: b.y, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: a.x}], run: {command: ["true"]}}
`)
		fs := findings(sp, "lineage-cycle")
		if len(fs) != 1 || fs[0].Severity != SeverityError {
			t.Fatalf("want one lineage-cycle error, got %+v", fs)
		}
	})
}

func TestLintUpstreamNotInSpec(t *testing.T) {
	sp := mustParse(t, "models:"+downstream("1d", "encapsulate", ""))
	expectOne(t, sp, "upstream-not-in-spec", SeverityWarning, "mart.daily", "registered")
}

// TestLintHasDataOntoModelsThatReportNoRows: a HAS_DATA edge holds only when
// its upstream reported a positive row count, so an upstream that cannot
// report one skips its dependent on every run without a word.
func TestLintHasDataOntoModelsThatReportNoRows(t *testing.T) {
	const base = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["./load.sh"]}
  - name: core.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run:
      query: SELECT 1 AS id
      write: {mode: append}
  - name: report.latest
    pipeline: shop
    temporality: timeless
    run:
      query: SELECT 1 AS id
`
	dependent := func(on string) string {
		return base + `  - name: mart.export
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    after: [{task: ` + on + `, on: has_data}]
    run: {command: ["true"]}
`
	}
	t.Run("onto a view is an error", func(t *testing.T) {
		f := expectOne(t, mustParse(t, dependent("report.latest")), "has-data-unreported", SeverityError, "mart.export", "a view writes no rows")
		if f.Pos.Line != 20 {
			t.Errorf("finding at line %d, want the after: entry's line 20", f.Pos.Line)
		}
	})
	t.Run("onto a command is a warning that names rows_written", func(t *testing.T) {
		expectOne(t, mustParse(t, dependent("raw.orders")), "has-data-unreported", SeverityWarning, "mart.export", "rows_written=N")
	})
	t.Run("onto a query with a write is fine", func(t *testing.T) {
		expectNone(t, mustParse(t, dependent("core.orders")), "has-data-unreported")
	})
	t.Run("a success edge onto a view is fine", func(t *testing.T) {
		sp := mustParse(t, strings.Replace(dependent("report.latest"), "on: has_data", "on: success", 1))
		expectNone(t, sp, "has-data-unreported")
	})
}

// TestLintCycleAcrossPipelines: after: edges across pipelines can close a
// loop that no single pipeline shows; a run of both could never order
// them, so lint calls it an error, naming the models, and apply and run
// refuse the spec before touching the store.
func TestLintCycleAcrossPipelines(t *testing.T) {
	sp := mustParse(t, `models:
  - {name: x.a, pipeline: x, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     after: [{task: y.b, on: success}], run: {command: ["true"]}}
  - {name: y.b, pipeline: y, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     after: [{task: x.a, on: success}], run: {command: ["true"]}}
`)
	expectOne(t, sp, "task-cycle", SeverityError, "x.a", "x.a → y.b → x.a")
	for _, allow := range []bool{false, true} {
		if err := RefuseLintErrors(sp, allow); err == nil || !strings.Contains(err.Error(), "across pipelines") || !strings.Contains(err.Error(), "cannot be scheduled") {
			t.Errorf("RefuseLintErrors(allow contract errors %v) = %v, want the cycle refused", allow, err)
		}
	}
}

// TestAContractLintErrorRefusesApplyUnlessAllowed: a daily model with
// EXACT on an hourly one can never match (exact-grain-mismatch, an error):
// apply refuses it before the store is touched, naming the rule, unless
// the operator allows lint errors knowingly; a warning never refuses.
func TestAContractLintErrorRefusesApplyUnlessAllowed(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		sp := mustParse(t, `models:
  - {name: raw.h, pipeline: p, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.d, pipeline: p, chunking: {interval: 1d, start: "2026-01-01T00:30:00Z"}, upstream: [{name: raw.h, contract: exact}], run: {command: ["true"]}}
`)
		expectOne(t, sp, "exact-grain-mismatch", SeverityError, "mart.d", "can never match")
		_, err := New(s, sp, Options{Actor: "test"}).Apply(t.Context())
		if err == nil || !strings.Contains(err.Error(), "exact-grain-mismatch") || !strings.Contains(err.Error(), "--allow-lint-errors") {
			t.Fatalf("apply = %v, want the contract error refused, naming the rule and the way past it", err)
		}
		if recs, err := s.Models(t.Context(), ""); err != nil || len(recs) != 0 {
			t.Fatalf("the refused apply registered %d models (%v)", len(recs), err)
		}
		if _, err := New(s, sp, Options{Actor: "test", AllowLintErrors: true}).Apply(t.Context()); err != nil {
			t.Fatalf("apply with lint errors allowed: %v", err)
		}
		if recs, err := s.Models(t.Context(), ""); err != nil || len(recs) != 2 {
			t.Errorf("the allowed apply registered %d models (%v), want 2", len(recs), err)
		}
	})
}

// TestShopExampleLintsClean: examples/shop/bollhav.yaml, the spec users
// copy from, has no lint error (spec's TestShopExample pins what it
// declares).
func TestShopExampleLintsClean(t *testing.T) {
	sp, err := spec.Load("../examples/shop/bollhav.yaml")
	if err != nil {
		t.Fatalf("the shop example does not load:\n%v", err)
	}
	var errs []string
	for _, f := range Lint(sp) {
		if f.Severity == SeverityError {
			errs = append(errs, f.Message)
		}
	}
	if len(errs) > 0 {
		t.Errorf("lint errors in the example: %v", errs)
	}
}

// DDL in a model's per-unit sql: is a warning: every unit runs it, several
// at once, and concurrent CREATE TABLE IF NOT EXISTS fails in PostgreSQL.
// Rows-only statements, and DDL-looking words inside a string, are not.
func TestLintUnitDDL(t *testing.T) {
	model := func(sql string) string {
		return `models:
  - name: raw.orders
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    connection: {dsn_env_var: WH}
    run: {sql: [` + sql + `]}
`
	}
	t.Run("CREATE TABLE IF NOT EXISTS", func(t *testing.T) {
		sp := mustParse(t, model(`"CREATE TABLE IF NOT EXISTS {{ this }} (n int)", "INSERT INTO {{ this }} VALUES (1)"`))
		expectOne(t, sp, "unit-ddl", SeverityWarning, "raw.orders", "pg_type_typname_nsp_index")
	})
	t.Run("create unique index, lower case", func(t *testing.T) {
		sp := mustParse(t, model(`"create unique index if not exists i ON {{ this }} (n)"`))
		expectOne(t, sp, "unit-ddl", SeverityWarning, "raw.orders", "create unique index")
	})
	t.Run("rows only", func(t *testing.T) {
		sp := mustParse(t, model(`"DELETE FROM {{ this }} WHERE since >= :since", "INSERT INTO {{ this }} SELECT 'created table' AS note"`))
		expectNone(t, sp, "unit-ddl")
	})
}

// Lint runs the models' rules on every core (in runs of lintRunModels or
// more); what it finds, and in which order, is what one pass over the
// models finds: no run is lost. 1,200 models, every second of the
// downstream ones starting before its upstream (an error, each at its own
// position), linted in four runs and in one.
func TestLintOnEveryCoreFindsWhatOnePassFinds(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n")
	for i := range 600 {
		fmt.Fprintf(&b, "  - {name: raw.r%04d, chunking: {interval: 1h, start: \"2026-02-01T00:00:00Z\"}, run: {command: [\"true\"]}}\n", i)
		start := "2026-01-01T00:00:00Z"
		if i%2 == 1 {
			start = "2026-03-01T00:00:00Z"
		}
		fmt.Fprintf(&b, "  - {name: mart.m%04d, chunking: {interval: 1d, start: %q}, upstream: [{name: raw.r%04d, contract: encapsulate}], run: {command: [\"true\"]}}\n", i, start, i)
	}
	sp := mustParse(t, b.String())
	was := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(was)
	parallel := Lint(sp)
	runtime.GOMAXPROCS(1)
	if one := Lint(sp); !slices.Equal(parallel, one) {
		t.Fatalf("four runs found %d findings, one pass %d, or in another order", len(parallel), len(one))
	}
	if n := len(findings(sp, "upstream-starts-later")); n != 300 {
		t.Errorf("%d upstream-starts-later findings, want 300 (every second model)", n)
	}
	for i := 1; i < len(parallel); i++ {
		if parallel[i].Pos.Line < parallel[i-1].Pos.Line {
			t.Fatalf("finding %d (line %d) after line %d: not in the spec's order", i, parallel[i].Pos.Line, parallel[i-1].Pos.Line)
		}
	}
}
