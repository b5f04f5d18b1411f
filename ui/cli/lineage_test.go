package cli

import (
	"strings"
	"testing"
	"time"
)

// lineageOf is `lineage -o json` as a test reads it.
type lineageOf struct {
	Nodes []struct {
		Model, Pipeline, Status string
		Layer                   int
	}
	Edges []struct {
		From, To, Kind, Contract, Verdict string
	}
}

func (l lineageOf) edge(from, to string) string {
	for _, e := range l.Edges {
		if e.From == from && e.To == to {
			return e.Kind + " " + e.Contract + " " + e.Verdict
		}
	}
	return "none"
}

// TestLineageOfTheFailedPaymentsHour: on the demo, focused on the failed
// payments hour, raw.payments' lineage runs across three pipelines —
// ingest's raw.payments, core's core.daily_revenue (THROUGH), reporting's
// mart.monthly_revenue (WHOLE over the days) — with the alert's FAILURE
// edge beside it. The THROUGH edge is missing, as is the WHOLE one; once
// the hour is marked applied the THROUGH edge is satisfied and the WHOLE
// one still missing until core.daily_revenue's days run: each edge has its
// own verdict. Every output form says the same.
func TestLineageOfTheFailedPaymentsHour(t *testing.T) {
	dir, sp := demoCopy(t)
	outage := demoOutage(t, dir)
	at := outage.Format(time.RFC3339)
	args := func(more ...string) []string {
		return append([]string{"lineage", "raw.payments", "--spec", sp, "--at", at}, more...)
	}
	var l lineageOf
	jsonOf(t, &l, args("-o", "json")...)
	layers := map[string]string{}
	for _, n := range l.Nodes {
		layers[n.Model] = n.Pipeline + " " + n.Status + " " + string(rune('0'+n.Layer))
	}
	for model, want := range map[string]string{
		"raw.payments": "ingest failed 0", "core.daily_revenue": "core blocked 1", "ops.payment_alerts": "ingest applied 1",
		"mart.monthly_revenue": "reporting missing 2",
	} {
		if layers[model] != want {
			t.Errorf("node %s: %q, want %q (pipeline, status at the outage, layer)", model, layers[model], want)
		}
	}
	if len(l.Nodes) != 4 {
		t.Errorf("%d nodes, want the four above: %+v", len(l.Nodes), l.Nodes)
	}
	for _, e := range [][3]string{
		{"raw.payments", "core.daily_revenue", "data THROUGH missing"},
		{"core.daily_revenue", "mart.monthly_revenue", "data WHOLE missing"},
		{"raw.payments", "ops.payment_alerts", "after FAILURE satisfied"},
	} {
		if got := l.edge(e[0], e[1]); got != e[2] {
			t.Errorf("edge %s → %s: %s, want %s", e[0], e[1], got, e[2])
		}
	}

	var near lineageOf
	jsonOf(t, &near, args("--down", "1", "-o", "json")...)
	if len(near.Nodes) != 3 || near.edge("core.daily_revenue", "mart.monthly_revenue") != "none" {
		t.Errorf("--down 1 reaches %+v, want raw.payments and its two readers, not the month", near.Nodes)
	}

	code, text, errOut := run(t, args()...)
	if code != 0 {
		t.Fatalf("lineage: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"raw.payments · ingest · fixed 1h grid: failed [" + at,
		"downstream (2 hops)\n  ├─ core.daily_revenue · core · fixed 1d grid: blocked",
		"— THROUGH missing: raw.payments (THROUGH): missing [" + at,
		"│  └─ mart.monthly_revenue · reporting · fixed 1mo grid: missing",
		"└─ ops.payment_alerts · ingest · timeless: applied — after FAILURE satisfied",
		"upstream (2 hops)\n  none",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	_, dot, _ := run(t, args("--format", "dot")...)
	if !strings.Contains(dot, `"raw.payments" -> "core.daily_revenue" [label="THROUGH missing", color=red];`) ||
		!strings.Contains(dot, `"raw.payments" -> "ops.payment_alerts" [label="FAILURE satisfied", color=darkgreen, style=dashed];`) {
		t.Errorf("dot:\n%s", dot)
	}
	_, mermaid, _ := run(t, args("--format", "mermaid")...)
	if !strings.Contains(mermaid, "n1 -->|THROUGH missing| n2") || !strings.Contains(mermaid, "-.->|FAILURE satisfied|") {
		t.Errorf("mermaid:\n%s", mermaid)
	}

	if code, _, errOut := run(t, "mark", "raw.payments", "--spec", sp, "--since", at, "--until", outage.Add(time.Hour).Format(time.RFC3339), "--status", "applied"); code != 0 {
		t.Fatalf("mark: exit %d: %s", code, errOut)
	}
	jsonOf(t, &l, args("-o", "json")...)
	if got := l.edge("raw.payments", "core.daily_revenue"); got != "data THROUGH satisfied" {
		t.Errorf("after the hour is applied the THROUGH edge is %s, want satisfied", got)
	}
	if got := l.edge("core.daily_revenue", "mart.monthly_revenue"); got != "data WHOLE missing" {
		t.Errorf("after the hour is applied the WHOLE edge is %s, want still missing (the days have not run)", got)
	}
}

// TestLineageBadInput: what lineage refuses, each with exit 2 and one
// line naming the problem.
func TestLineageBadInput(t *testing.T) {
	_, sp := demoCopy(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lineage"}, "want exactly one MODEL"},
		{[]string{"lineage", "no.such"}, "no.such"},
		{[]string{"lineage", "raw.payments", "--up", "-1"}, "must not be negative"},
		{[]string{"lineage", "raw.payments", "--format", "svg"}, `invalid --format "svg"`},
		{[]string{"lineage", "raw.payments", "--at", "yesterday"}, "--at"},
	} {
		code, out, errOut := run(t, append(tc.args, "--spec", sp)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
