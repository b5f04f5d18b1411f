package spec_test

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
)

// TestShopExample loads examples/shop/bollhav.yaml, the spec users copy
// from, and pins the facts its comments promise; engine's
// TestShopExampleLintsClean lints it.
func TestShopExample(t *testing.T) {
	sp, err := spec.Load("../../examples/shop/bollhav.yaml")
	if err != nil {
		t.Fatalf("the shop example does not load:\n%v", err)
	}
	pipelines := map[string][]string{}
	for _, m := range sp.Models {
		pipelines[m.Pipeline] = append(pipelines[m.Pipeline], m.Name)
	}
	if len(sp.Models) != 10 || len(pipelines["ingest"]) != 2 || len(pipelines["core"]) != 7 || len(pipelines["marts"]) != 1 {
		t.Errorf("pipelines = %v", pipelines)
	}

	if raw := sp.Model("raw.orders"); raw.Run.Kind != spec.RunCommand || raw.Flexible() || raw.Run.Timeout != 10*time.Minute ||
		raw.SourceNames()[0] != "shopify.orders" || raw.Upstream[0].Kind != spec.KindAPI {
		t.Errorf("raw.orders = %+v", raw)
	}
	if ev := sp.Model("raw.events"); !ev.Flexible() || ev.Upstream[0].Kind != spec.KindFile || ev.Upstream[0].Gated() {
		t.Errorf("raw.events = %+v", ev)
	}

	daily := sp.Model("warehouse.orders_daily")
	if daily.Chunking.Location.String() != "Europe/Stockholm" || !daily.Chunking.Start.Equal(time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("orders_daily chunking = %+v", daily.Chunking)
	}
	gated := daily.GatedUpstreams()
	if len(gated) != 2 || gated[0].Contract != spec.Encapsulate || gated[0].Freshness.Within != 6*time.Hour ||
		gated[1].Contract != spec.Exists || !gated[1].DeactivateForDev {
		t.Errorf("orders_daily gates = %+v", gated)
	}
	if ref, _ := daily.Ref("raw.orders", spec.Env{Suffix: "pr7"}); ref != `"raw_pr7"."orders"` {
		t.Errorf("raw.orders in pr7 = %s", ref)
	}
	if ref, _ := daily.Ref("ref.shop_config", spec.Env{Suffix: "pr7"}); ref != `"ref"."shop_config"` {
		t.Errorf("shared config in pr7 = %s, want prod's", ref)
	}

	levels := map[string]spec.ContractLevel{}
	for _, m := range sp.Models {
		for _, s := range m.GatedUpstreams() {
			levels[m.Name+"<-"+s.Name] = s.Contract
		}
	}
	for edge, want := range map[string]spec.ContractLevel{
		"warehouse.sessions_daily<-raw.events":                  spec.Encapsulate,
		"warehouse.revenue_daily<-warehouse.orders_daily":       spec.Exact,
		"warehouse.revenue_cumulative<-warehouse.revenue_daily": spec.Through,
		"marts.order_summary<-warehouse.orders_daily":           spec.Whole,
		"warehouse.revenue_daily<-ref.shop_config":              spec.Exists,
	} {
		if levels[edge] != want {
			t.Errorf("%s = %v, want %v", edge, levels[edge], want)
		}
	}

	if v := sp.Model("marts.order_summary"); v.Temporality != spec.Timeless || v.Run.Kind != spec.RunView {
		t.Errorf("order_summary = %+v", v.Run)
	}
	cfg := sp.Model("ref.shop_config")
	if h := cfg.Upstream[0].Hardcoded; cfg.Temporality != spec.Timeless || h == nil || len(h.Rows) != 3 || len(h.ContentHash()) != 71 {
		t.Errorf("shop_config = %+v", cfg.Upstream)
	}

	alert := sp.Model("ops.core_failure_alert")
	if alert.RunCondition != graph.Any || alert.State || len(alert.After) != 3 || alert.After[0].On != graph.Failure || alert.InputsKnown() {
		t.Errorf("alert = %+v", alert)
	}
	if rep := sp.Model("ops.core_run_report"); rep.After[0].On != graph.Always {
		t.Errorf("run report after = %+v", rep.After)
	}
}
