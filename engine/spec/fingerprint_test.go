package spec

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// fpSpec has one model of each kind a fingerprint reads: a command model
// with a timeout and a retry, a query model with a hardcoded source and a
// gated upstream, and a sql model.
const fpSpec = `models:
  - name: raw.orders
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["./load.sh", "--full"], timeout: 10m}
    retry: {attempts: 3, delay: 30s}
  - name: core.daily
    pipeline: core
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: raw.orders
        contract: encapsulate
        freshness: {within: 24h}
      - name: ref.fx
        hardcoded: {rows: [{cur: SEK, rate: 1}]}
    run:
      query: |
        -- orders per day
        SELECT date(ts) AS day, count(*) AS n
        FROM {{ ref "raw.orders" }}   /* the hourly loads */
        WHERE ts >= :since AND ts < :until AND note <> 'a  b'
        GROUP BY 1
      write: {mode: recreate_partition, column: day}
  - name: core.flex
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {sql: ["DELETE FROM {{ this }} WHERE ts >= :since", "INSERT INTO {{ this }} SELECT 1"]}
`

// fingerprints parses src and returns each model's fingerprint by name.
func fingerprints(t *testing.T, src string) map[string]string {
	t.Helper()
	sp := parseOK(t, src)
	out := map[string]string{}
	for _, m := range sp.Models {
		out[m.Name] = Fingerprint(m)
	}
	return out
}

// edit replaces old (which must occur once) in fpSpec.
func edit(t *testing.T, old, neu string) string {
	t.Helper()
	if strings.Count(fpSpec, old) != 1 {
		t.Fatalf("edit: %q occurs %d times in the spec", old, strings.Count(fpSpec, old))
	}
	return strings.Replace(fpSpec, old, neu, 1)
}

func TestFingerprintKeepsWhatDoesNotChangeOutput(t *testing.T) {
	base := fingerprints(t, fpSpec)
	for name, fp := range base {
		if len(fp) != FingerprintLen || strings.Trim(fp, "0123456789abcdef") != "" {
			t.Fatalf("%s: fingerprint %q is not %d hex digits", name, fp, FingerprintLen)
		}
	}
	cases := []struct{ what, old, neu, model string }{
		{"a timeout", "timeout: 10m", "timeout: 2h", "raw.orders"},
		{"a retry", "attempts: 3", "attempts: 5", "raw.orders"},
		{"the pipeline", "pipeline: ingest", "pipeline: loads", "raw.orders"},
		{"a comment in the query", "-- orders per day", "-- orders per calendar day, see ticket 12", "core.daily"},
		{"a block comment in the query", "/* the hourly loads */", "", "core.daily"},
		{"whitespace outside literals", "SELECT date(ts) AS day, count(*) AS n", "SELECT   date(ts)  AS day,\n          count(*) AS n   ", "core.daily"},
		{"the contract level", "contract: encapsulate", "contract: through", "core.daily"},
		{"freshness", "freshness: {within: 24h}", "freshness: {within: 2h}", "core.daily"},
		{"require_current", "freshness: {within: 24h}", "freshness: {within: 24h}\n        require_current: true", "core.daily"},
		{"a flexible model's chunk size", "interval: 1h, start: \"2026-01-01T00:00:00Z\", flexibility: flex", "interval: 6h, start: \"2026-01-01T00:00:00Z\", flexibility: flex", "core.flex"},
	}
	for _, c := range cases {
		got := fingerprints(t, edit(t, c.old, c.neu))
		if got[c.model] != base[c.model] {
			t.Errorf("changing %s changed %s's fingerprint %s → %s; it does not change the output", c.what, c.model, base[c.model], got[c.model])
		}
	}
}

func TestFingerprintChangesWithWhatChangesOutput(t *testing.T) {
	base := fingerprints(t, fpSpec)
	cases := []struct{ what, old, neu, model string }{
		{"the command", `["./load.sh", "--full"]`, `["./load.sh", "--incremental"]`, "raw.orders"},
		{"the grain", "interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command", "interval: 2h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command", "raw.orders"},
		{"the chunking start", "interval: 1d, start: \"2026-01-01T00:00:00Z\"", "interval: 1d, start: \"2026-02-01T00:00:00Z\"", "core.daily"},
		{"a hardcoded row", "rate: 1}", "rate: 2}", "core.daily"},
		{"a string literal's spaces", "'a  b'", "'a b'", "core.daily"},
		{"the write mode", "write: {mode: recreate_partition, column: day}", "write: {mode: append}", "core.daily"},
		{"a sql statement", "SELECT 1\"]", "SELECT 2\"]", "core.flex"},
		{"a source's name", "name: ref.fx", "name: ref.fx2", "core.daily"},
	}
	for _, c := range cases {
		got := fingerprints(t, edit(t, c.old, c.neu))
		if got[c.model] == base[c.model] {
			t.Errorf("changing %s kept %s's fingerprint %s; it changes the output", c.what, c.model, base[c.model])
		}
	}
}

// An upstream's own definition is not part of its reader's fingerprint:
// changing raw.orders' command outdates raw.orders' windows, not core.daily's.
func TestFingerprintCountsModelUpstreamsByName(t *testing.T) {
	base := fingerprints(t, fpSpec)
	got := fingerprints(t, edit(t, `["./load.sh", "--full"]`, `["./load.sh", "--v2"]`))
	if got["core.daily"] != base["core.daily"] {
		t.Errorf("core.daily's fingerprint changed with its upstream's command")
	}
}

// A registration's stored definition gives the spec's fingerprint, so a UI
// opened from the store alone agrees with the CLI.
func TestRecordFingerprintMatchesSpec(t *testing.T) {
	sp := parseOK(t, fpSpec)
	for _, m := range sp.Models {
		rec := state.ModelRecord{Name: m.Name, Definition: DefinitionOf(m).JSON()}
		got, err := RecordFingerprint(rec)
		if err != nil {
			t.Fatal(err)
		}
		if want := Fingerprint(m); got != want {
			t.Errorf("%s: record fingerprint %s, spec fingerprint %s", m.Name, got, want)
		}
	}
	if fp, err := RecordFingerprint(state.ModelRecord{Name: "x.y"}); fp != "" || err != nil {
		t.Errorf("no stored definition: fingerprint %q, %v; want none", fp, err)
	}
	if _, err := RecordFingerprint(state.ModelRecord{Name: "x.y", Definition: []byte("{")}); err == nil || !strings.Contains(err.Error(), "x.y") {
		t.Errorf("a broken stored definition: %v; want an error naming the model", err)
	}
}

func TestShortFingerprint(t *testing.T) {
	if got := ShortFingerprint("0123456789abcdef"); got != "01234567" {
		t.Errorf("ShortFingerprint = %q", got)
	}
	if got := ShortFingerprint(""); got != "-" {
		t.Errorf("ShortFingerprint of unknown = %q, want -", got)
	}
}
