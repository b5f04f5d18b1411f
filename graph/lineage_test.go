package graph

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// shop is a small lineage: three external inputs (s3.orders, dropzone.orders,
// api.crm) and five models.
//
//	s3.orders -> raw.orders -> stg.orders -> mart.daily
//	             dropzone.orders -^            ^
//	raw.customers -----------------------------+-> mart.customers <- api.crm
func shop(t *testing.T) *Lineage {
	t.Helper()
	l, err := NewLineage(
		[]string{"raw.orders", "raw.customers", "stg.orders", "mart.daily", "mart.customers"},
		map[string][]string{
			"raw.orders":     {"s3.orders"},
			"stg.orders":     {"raw.orders", "dropzone.orders"},
			"mart.daily":     {"stg.orders", "raw.customers", "stg.orders"},
			"mart.customers": {"raw.customers", "api.crm"},
		})
	if err != nil {
		t.Fatalf("NewLineage: %v", err)
	}
	return l
}

func TestLineageModelsInSuppliedOrder(t *testing.T) {
	equalStrings(t, "Models()", shop(t).Models(),
		[]string{"raw.orders", "raw.customers", "stg.orders", "mart.daily", "mart.customers"})
}

func TestLineageExternalsAreLeafInputsNotModels(t *testing.T) {
	l := shop(t)
	equalStrings(t, "Externals()", l.Externals(), []string{"api.crm", "dropzone.orders", "s3.orders"})
	if l.IsModel("dropzone.orders") || !l.IsModel("stg.orders") || l.IsModel("nowhere") {
		t.Errorf("IsModel wrong: dropzone.orders %v, stg.orders %v, nowhere %v",
			l.IsModel("dropzone.orders"), l.IsModel("stg.orders"), l.IsModel("nowhere"))
	}
	equalStrings(t, "Upstream(stg.orders)", l.Upstream("stg.orders"), []string{"raw.orders"})
	equalStrings(t, "Upstream(raw.orders)", l.Upstream("raw.orders"), nil)
	equalStrings(t, "Downstream(dropzone.orders)", l.Downstream("dropzone.orders"), []string{"stg.orders"})
}

func TestLineageDirect(t *testing.T) {
	l := shop(t)
	// Reading stg.orders twice counts once.
	equalStrings(t, "Upstream(mart.daily)", l.Upstream("mart.daily"), []string{"raw.customers", "stg.orders"})
	equalStrings(t, "Downstream(raw.customers)", l.Downstream("raw.customers"), []string{"mart.customers", "mart.daily"})
	equalStrings(t, "Downstream(stg.orders)", l.Downstream("stg.orders"), []string{"mart.daily"})
	equalStrings(t, "Downstream(mart.daily)", l.Downstream("mart.daily"), nil)
	equalStrings(t, "Upstream(unknown)", l.Upstream("unknown"), nil)
}

func TestLineageDownstreamClosure(t *testing.T) {
	l := shop(t)
	equalStrings(t, "DownstreamClosure(raw.orders)", l.DownstreamClosure("raw.orders"), []string{"mart.daily", "stg.orders"})
	equalStrings(t, "DownstreamClosure(s3.orders)", l.DownstreamClosure("s3.orders"), []string{"mart.daily", "raw.orders", "stg.orders"})
	equalStrings(t, "DownstreamClosure(raw.orders, stg.orders)", l.DownstreamClosure("raw.orders", "stg.orders"), []string{"mart.daily"})
	equalStrings(t, "DownstreamClosure(raw.customers, raw.orders)", l.DownstreamClosure("raw.customers", "raw.orders"),
		[]string{"mart.customers", "mart.daily", "stg.orders"})
	equalStrings(t, "DownstreamClosure()", l.DownstreamClosure(), nil)
	equalStrings(t, "DownstreamClosure(unknown)", l.DownstreamClosure("unknown"), nil)
}

func TestLineageUpstreamClosure(t *testing.T) {
	l := shop(t)
	equalStrings(t, "UpstreamClosure(mart.daily)", l.UpstreamClosure("mart.daily"), []string{"raw.customers", "raw.orders", "stg.orders"})
	equalStrings(t, "UpstreamClosure(mart.daily, stg.orders)", l.UpstreamClosure("mart.daily", "stg.orders"), []string{"raw.customers", "raw.orders"})
	equalStrings(t, "UpstreamClosure(mart.customers)", l.UpstreamClosure("mart.customers"), []string{"raw.customers"})
	equalStrings(t, "UpstreamClosure(raw.orders)", l.UpstreamClosure("raw.orders"), nil)
}

func TestLineageTopologicalOrder(t *testing.T) {
	// Kahn, ties by name: raw.customers and raw.orders start free; the smaller
	// name goes first and frees mart.customers, which is smaller than
	// raw.orders; then raw.orders frees stg.orders, which frees mart.daily.
	equalStrings(t, "TopologicalOrder()", shop(t).TopologicalOrder(),
		[]string{"raw.customers", "mart.customers", "raw.orders", "stg.orders", "mart.daily"})
	// The order does not depend on the order models are supplied in.
	l, err := NewLineage([]string{"c", "b", "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "TopologicalOrder(no edges)", l.TopologicalOrder(), []string{"a", "b", "c"})
}

func TestLineageCycle(t *testing.T) {
	cases := []struct {
		name     string
		models   []string
		upstream map[string][]string
		want     []string
	}{
		{"three models in a loop", []string{"a", "b", "c"},
			map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}}, []string{"a", "b", "c"}},
		{"the walk starts at the first model supplied", []string{"b", "a", "c"},
			map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}}, []string{"b", "c", "a"}},
		{"a model leading into the loop is not part of it", []string{"d", "a", "b"},
			map[string][]string{"d": {"a"}, "a": {"b"}, "b": {"a"}}, []string{"a", "b"}},
		{"a model reading itself", []string{"a", "b"},
			map[string][]string{"b": {"x", "b"}}, []string{"b"}},
		{"reads are followed in the order given", []string{"a", "b", "c"},
			map[string][]string{"a": {"c", "b"}, "b": {"a"}, "c": {"a"}}, []string{"a", "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewLineage(c.models, c.upstream)
			var ce *LineageCycleError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *LineageCycleError", err)
			}
			equalStrings(t, "Cycle", ce.Cycle, c.want)
			wantGraphError(t, err)
		})
	}
	if got, want := (&LineageCycleError{Cycle: []string{"a", "b"}}).Error(), "graph: models read each other in a loop: a -> b -> a"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestLineageRejectsInvalidInput(t *testing.T) {
	cases := []struct {
		name     string
		models   []string
		upstream map[string][]string
	}{
		{"duplicate model", []string{"a", "b", "a"}, nil},
		{"empty model name", []string{"a", ""}, nil},
		{"empty upstream name", []string{"a"}, map[string][]string{"a": {""}}},
		{"upstream for a name that is not a model", []string{"a"}, map[string][]string{"ext": {"a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewLineage(c.models, c.upstream)
			if err == nil {
				t.Fatal("NewLineage accepted it")
			}
			wantGraphError(t, err)
			var ce *LineageCycleError
			if errors.As(err, &ce) {
				t.Errorf("error %v is a LineageCycleError", err)
			}
		})
	}
}

func TestLineageIsImmutable(t *testing.T) {
	models := []string{"a", "b"}
	up := map[string][]string{"b": {"a"}}
	l, err := NewLineage(models, up)
	if err != nil {
		t.Fatal(err)
	}
	models[0] = "z"
	up["b"][0] = "z"
	l.Models()[1] = "y"
	l.Upstream("b")[0] = "y"
	l.TopologicalOrder()[0] = "y"
	equalStrings(t, "Models()", l.Models(), []string{"a", "b"})
	equalStrings(t, "Upstream(b)", l.Upstream("b"), []string{"a"})
	equalStrings(t, "TopologicalOrder()", l.TopologicalOrder(), []string{"a", "b"})
}

func TestLineagePropertiesOnRandomGraphs(t *testing.T) {
	// On random acyclic lineages: every model comes after what it reads, the
	// order is the same whatever order models are supplied in, and the
	// closures are reachability.
	r := rand.New(rand.NewPCG(11, 13))
	for iter := range 300 {
		n := 1 + r.IntN(8)
		models := make([]string, n)
		for i := range models {
			models[i] = fmt.Sprintf("m%02d", r.IntN(100)*100+i)
		}
		// models[i] reads only models[j] with j < i, and sometimes an external.
		up := map[string][]string{}
		for i := range models {
			for j := range i {
				if r.IntN(3) == 0 {
					up[models[i]] = append(up[models[i]], models[j])
				}
			}
			if r.IntN(4) == 0 {
				up[models[i]] = append(up[models[i]], "ext.x")
			}
		}
		shuffled := slices.Clone(models)
		r.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		l, err := NewLineage(models, up)
		if err != nil {
			t.Fatalf("case %d: %v", iter, err)
		}
		l2, err := NewLineage(shuffled, up)
		if err != nil {
			t.Fatalf("case %d: %v", iter, err)
		}
		order := l.TopologicalOrder()
		if !slices.Equal(order, l2.TopologicalOrder()) {
			t.Fatalf("case %d: order %v depends on supply order (%v)", iter, order, l2.TopologicalOrder())
		}
		if len(order) != n {
			t.Fatalf("case %d: order %v misses models", iter, order)
		}
		for _, m := range models {
			for _, u := range l.Upstream(m) {
				if slices.Index(order, u) > slices.Index(order, m) {
					t.Fatalf("case %d: %s before %s, which it reads", iter, m, u)
				}
			}
			// Reachability by repeated relaxation.
			down := map[string]bool{}
			for changed := true; changed; {
				changed = false
				for reader, reads := range up {
					for _, u := range reads {
						if (u == m || down[u]) && !down[reader] {
							down[reader] = true
							changed = true
						}
					}
				}
			}
			want := slices.Sorted(maps.Keys(down))
			equalStrings(t, "DownstreamClosure("+m+")", l.DownstreamClosure(m), want)
			for _, d := range want {
				if !slices.Contains(l.UpstreamClosure(d), m) {
					t.Fatalf("case %d: %s reads %s through others, UpstreamClosure(%s) = %v", iter, d, m, d, l.UpstreamClosure(d))
				}
			}
		}
	}
}
