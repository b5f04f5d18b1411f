package spec

import (
	"strings"
	"testing"
)

// definitionsOf parses src and returns each model's stored-form definition.
func definitionsOf(t *testing.T, src string) map[string]ModelDefinition {
	t.Helper()
	out := map[string]ModelDefinition{}
	for _, m := range parseOK(t, src).Models {
		out[m.Name] = DefinitionOf(m)
	}
	return out
}

func changesText(cs []FieldChange) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

// The diff names exactly what a fingerprint covers, short: a command's
// argument, the one word of a long query that changed, the run kind, a
// source added; a comment or a timeout is no change at all.
func TestDiffDefinitions(t *testing.T) {
	base := definitionsOf(t, fpSpec)
	cases := []struct {
		what, old, neu, model, want, summary string
	}{
		{"a comment and a timeout", "-- orders per day", "-- per calendar day", "core.daily", "", ""},
		{"the command", `["./load.sh", "--full"]`, `["./load.sh", "--incremental"]`, "raw.orders",
			"run.command: ./load.sh --full → ./load.sh --incremental", "run.command"},
		{"one word of the query", "note <> 'a  b'", "note <> 'a  c'", "core.daily",
			"run.query: …AND note <> 'a  b' GROUP BY 1 → …AND note <> 'a  c' GROUP BY 1", "run.query"},
		{"the write", "write: {mode: recreate_partition, column: day}", "write: {mode: upsert, keys: [day]}", "core.daily",
			"run.write: recreate_partition column day → upsert keys day", "run.write"},
		{"the grain", "interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command", "interval: 2h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command",
			"raw.orders", "chunking.interval: 1h → 2h", "chunking.interval"},
		{"a hardcoded row", "rate: 1}", "rate: 2}", "core.daily", "source ref.fx", "source ref.fx"},
		{"the run kind", `run: {sql: ["DELETE FROM {{ this }} WHERE ts >= :since", "INSERT INTO {{ this }} SELECT 1"]}`,
			`run: {command: ["./flex.sh"]}`, "core.flex",
			"run: sql → command; run.command: - → ./flex.sh; run.sql[1]: DELETE FROM {{ this }} WHERE ts >= :since → -; run.sql[2]: INSERT INTO {{ this }} SELECT 1 → -",
			"run sql → command"},
	}
	for _, c := range cases {
		got := DiffDefinitions(base[c.model], definitionsOf(t, edit(t, c.old, c.neu))[c.model])
		text := changesText(got)
		if c.what == "a hardcoded row" {
			// The source's content hash changes: named, its text cut short.
			if len(got) != 1 || got[0].Field != "source ref.fx" || !strings.Contains(got[0].Old, "…") {
				t.Errorf("%s: %q", c.what, text)
			}
		} else if text != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.what, text, c.want)
		}
		if s := Summary(got); s != c.summary {
			t.Errorf("%s: summary %q, want %q", c.what, s, c.summary)
		}
	}
}
