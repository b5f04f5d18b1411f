package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestUnknownProvenanceSentinel(t *testing.T) {
	src := yamlLines(lModels,
		"  - name: raw.a",
		"    temporality: timeless",
		"  - name: raw.b",
		"    temporality: timeless",
		"    upstream: []")
	sp, err := Parse("bollhav.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	a, b := sp.Model("raw.a"), sp.Model("raw.b")
	for _, m := range []*Model{a, b} {
		if len(m.Upstream) != 1 {
			t.Fatalf("%s: upstream = %+v, want exactly the sentinel", m.Name, m.Upstream)
		}
		s := m.Upstream[0]
		if s.Kind != KindUnknown || s.Gated() || !IsUnknownProvenance(s.Name) || !strings.HasPrefix(s.Name, "unknown-") {
			t.Errorf("%s: sentinel = %+v", m.Name, s)
		}
		if m.InputsKnown() || len(m.DeclaredInputs()) != 0 || len(m.SourceNames()) != 0 ||
			len(m.UpstreamNames()) != 0 || len(m.GatedUpstreams()) != 0 {
			t.Errorf("%s: the sentinel counted as a declared input", m.Name)
		}
	}
	if a.Upstream[0].Name == b.Upstream[0].Name {
		t.Error("two unknown-provenance models share one sentinel; lineage would merge them")
	}
	again, err := Parse("bollhav.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	if again.Model("raw.a").Upstream[0].Name != a.Upstream[0].Name {
		t.Error("the sentinel changed between loads of the same spec")
	}
}

func TestIsUnknownProvenance(t *testing.T) {
	if !IsUnknownProvenance(NewUnknownSource("raw.a").Name) {
		t.Error("NewUnknownSource's name is not recognised")
	}
	for _, name := range []string{"raw.orders", "unknown-", "unknown-raw.orders", "unknown-1234", "Unknown-" + NewUnknownSource("a.b").Name[8:]} {
		if IsUnknownProvenance(name) {
			t.Errorf("IsUnknownProvenance(%q) = true", name)
		}
	}
}

func TestDeclaredInputs(t *testing.T) {
	m := refModel(t)
	all := []string{"warehouse.orders", "warehouse.customers", "raw.landing", "lake.raw.events", "crm.accounts", "dropzone.orders", "crm.contacts", "ref.countries"}
	if got := m.DeclaredInputs(); !slices.Equal(got, all) {
		t.Errorf("DeclaredInputs = %v, want %v", got, all)
	}
	if !m.InputsKnown() {
		t.Error("InputsKnown = false for a model with declared inputs")
	}
	if got := m.UpstreamNames(); !slices.Equal(got, all[:2]) {
		t.Errorf("UpstreamNames = %v, want the gated %v", got, all[:2])
	}
	if got := m.SourceNames(); !slices.Equal(got, all[2:]) {
		t.Errorf("SourceNames = %v, want the ungated %v", got, all[2:])
	}
	gated := m.GatedUpstreams()
	if len(gated) != 2 || gated[0].Contract != Encapsulate || gated[1].Contract != Whole {
		t.Errorf("GatedUpstreams = %+v", gated)
	}
	kinds := map[string]SourceKind{}
	for _, s := range m.Upstream {
		kinds[s.Name] = s.Kind
	}
	if kinds["ref.countries"] != KindHardcoded || kinds["crm.contacts"] != KindAPI || kinds["dropzone.orders"] != KindFile || kinds["raw.landing"] != KindModel {
		t.Errorf("kinds = %v", kinds)
	}
}
