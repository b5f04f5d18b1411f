package gate

import (
	"errors"
	"github.com/bollhav/bollhav/engine/spec"
	"testing"
	"time"
)

// A daily model with three gated upstreams and one ungated source.
func gatedModel() *spec.Model {
	return &spec.Model{
		Name: "mart.daily", Schema: "mart", Table: "daily", Temporality: spec.Temporal, State: true,
		Upstream: []spec.Source{
			{Name: "warehouse.orders", Kind: spec.KindModel, Model: &spec.SourceModel{}, Contract: spec.Encapsulate},
			{Name: "warehouse.customers", Kind: spec.KindModel, Model: &spec.SourceModel{}, Contract: spec.Whole},
			{Name: "raw.landing", Kind: spec.KindModel, Model: &spec.SourceModel{}},
			{Name: "ref.config", Kind: spec.KindModel, Model: &spec.SourceModel{}, Contract: spec.Exists, DeactivateForDev: true},
		},
	}
}

func TestGateUnitChecksEveryUpstreamWithoutShortCircuit(t *testing.T) {
	w := days(1, 2)
	ups := map[string]UpstreamState{
		"warehouse.orders":    fixedUp(now, applied(t0, days(0, 1))),                  // day 1 missing
		"warehouse.customers": fixedUp(t0.Add(72*time.Hour), applied(t0, days(0, 2))), // day 2 missing
		"ref.config":          {Registered: true, Temporality: spec.Timeless},
	}
	g := Judge(gatedModel(), &w, spec.Env{}, ups, now)
	if g.Satisfied || g.Err != nil {
		t.Fatalf("want blocked without error, got %+v", g)
	}
	want := "warehouse.orders (ENCAPSULATE): missing [2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z); " +
		"warehouse.customers (WHOLE): missing [2026-01-03T00:00:00Z, 2026-01-04T00:00:00Z)"
	if g.BlockedReason != want {
		t.Errorf("blocked_reason\n got %q\nwant %q", g.BlockedReason, want)
	}
	// One verdict per gated upstream, in declaration order; the ungated
	// raw.landing is never checked.
	var names []string
	for _, v := range g.Verdicts {
		names = append(names, v.Upstream)
	}
	if len(names) != 3 || names[0] != "warehouse.orders" || names[1] != "warehouse.customers" || names[2] != "ref.config" {
		t.Errorf("verdicts for %v", names)
	}
}

func TestGateUnitAllSatisfiedRuns(t *testing.T) {
	w := days(1, 2)
	ups := map[string]UpstreamState{
		"warehouse.orders":    fixedUp(now, applied(t0, days(1, 2))),
		"warehouse.customers": fixedUp(t0.Add(48*time.Hour), applied(t0, days(0, 1), days(1, 2))),
		"ref.config":          {Registered: true, Temporality: spec.Timeless},
	}
	if g := Judge(gatedModel(), &w, spec.Env{}, ups, now); !g.Satisfied || g.BlockedReason != "" || g.Err != nil {
		t.Fatalf("want satisfied, got %+v", g)
	}
}

func TestGateUnitHardErrorAndBlockTogether(t *testing.T) {
	w := days(1, 2)
	ups := map[string]UpstreamState{
		"warehouse.orders": fixedUp(now, nil),
		// warehouse.customers is not registered: a hard error, not a skip.
		"ref.config": {Registered: true, Temporality: spec.Timeless},
	}
	g := Judge(gatedModel(), &w, spec.Env{}, ups, now)
	var ge *Error
	if !errors.As(g.Err, &ge) || ge.Upstream != "warehouse.customers" {
		t.Fatalf("want the unregistered upstream as a Error, got %v", g.Err)
	}
	if g.BlockedReason == "" {
		t.Error("the missing warehouse.orders is still reported: no short-circuit")
	}
}

// The design's deactivate_for_dev table: dev → prod table assumed okay
// (skipped); dev → dev table checked; prod → prod checked either way.
func TestGateUnitDeactivateForDev(t *testing.T) {
	w := days(1, 2)
	ups := map[string]UpstreamState{
		"warehouse.orders":    fixedUp(now, applied(t0, days(1, 2))),
		"warehouse.customers": fixedUp(t0.Add(48*time.Hour), applied(t0, days(0, 1), days(1, 2))),
		// ref.config is registered nowhere in this test.
	}
	t.Run("dev to prod table, deactivate_for_dev: gate skipped", func(t *testing.T) {
		g := Judge(gatedModel(), &w, spec.Env{Suffix: "pr123"}, ups, now)
		if !g.Satisfied || g.Err != nil {
			t.Fatalf("want satisfied with ref.config skipped, got %+v", g)
		}
		if v := g.Verdicts[2]; !v.Skipped || v.Upstream != "ref.config" {
			t.Errorf("ref.config verdict %+v", v)
		}
	})
	t.Run("dev to dev table, no flag: checked", func(t *testing.T) {
		m := gatedModel()
		m.Upstream[3].DeactivateForDev = false
		if g := Judge(m, &w, spec.Env{Suffix: "pr123"}, ups, now); g.Err == nil {
			t.Fatal("an unregistered dev upstream is a hard error")
		}
	})
	t.Run("prod to prod, the flag is inert", func(t *testing.T) {
		if g := Judge(gatedModel(), &w, spec.Env{}, ups, now); g.Err == nil {
			t.Fatal("without a suffix deactivate_for_dev does nothing: ref.config is checked")
		}
	})
}
