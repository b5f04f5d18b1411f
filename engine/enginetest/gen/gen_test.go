package gen_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// small is a project big enough to hold every shape and status, small
// enough to write in a second.
var small = gen.Config{Models: 60, Units: 12_000, Seed: 7}

func TestSpecParsesWithEveryShapeAndLevel(t *testing.T) {
	for _, cfg := range []gen.Config{small, {Models: 300, Units: 50_000, Seed: 1}, {Models: 1, Units: 10, Seed: 3}} {
		sp, err := spec.Parse(gen.SpecFile, gen.Spec(cfg))
		if err != nil {
			t.Fatalf("%+v: the generated spec does not parse: %v", cfg, err)
		}
		if len(sp.Models) != cfg.Models {
			t.Fatalf("%+v: %d models, want %d", cfg, len(sp.Models), cfg.Models)
		}
		if cfg.Models < 80 {
			continue
		}
		levels := map[spec.ContractLevel]int{}
		grains := map[string]int{}
		var flex, fix, timeless, zoned, fresh int
		for _, m := range sp.Models {
			switch {
			case m.Temporality == spec.Timeless:
				timeless++
			case m.Flexible():
				flex++
			default:
				fix++
			}
			if m.Chunking != nil {
				grains[m.Chunking.Interval.String()]++
				if m.Chunking.Location.String() != "UTC" {
					zoned++
				}
			}
			gated := 0
			for _, src := range m.Upstream {
				if src.Gated() {
					gated++
					levels[src.Contract]++
					if sp.Model(src.Name) == nil {
						t.Errorf("%s reads %s, which is not a model of the spec", m.Name, src.Name)
					}
				}
				if src.Freshness != nil {
					fresh++
				}
			}
			if gated > 3 {
				t.Errorf("%s has %d gated upstreams, want at most 3", m.Name, gated)
			}
		}
		for _, l := range []spec.ContractLevel{spec.Exists, spec.Exact, spec.Encapsulate, spec.Through, spec.Whole} {
			if levels[l] == 0 {
				t.Errorf("%+v: no gated edge at %s (levels %v)", cfg, l, levels)
			}
		}
		for _, g := range []string{"15m", "1h", "1d", "1mo"} {
			if grains[g] == 0 {
				t.Errorf("%+v: no model of grain %s (grains %v)", cfg, g, grains)
			}
		}
		if flex == 0 || fix == 0 || zoned == 0 || fresh == 0 || (cfg.Models >= 300 && timeless == 0) {
			t.Errorf("%+v: %d flexible, %d fixed, %d timeless, %d zoned models, %d freshness limits; want some of each", cfg, flex, fix, timeless, zoned, fresh)
		}
	}
}

func TestSameSeedSameSpec(t *testing.T) {
	a, b := gen.Spec(small), gen.Spec(small)
	if !bytes.Equal(a, b) {
		t.Fatal("two specs of the same config differ")
	}
	other := small
	other.Seed++
	if bytes.Equal(a, gen.Spec(other)) {
		t.Fatal("another seed gave the same spec")
	}
}

// populateSmall fills s as Populate does with the small config, failing the
// test on error.
func populateSmall(t *testing.T, s state.Store) (*engine.Engine, gen.Summary) {
	t.Helper()
	e, sum, err := gen.Populate(t.Context(), s, engine.Options{}, small)
	if err != nil {
		t.Fatal(err)
	}
	return e, sum
}

func TestPopulateWritesTheAskedState(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e, sum := populateSmall(t, s)
		if e.Spec() == nil || len(e.Spec().Models) != small.Models {
			t.Fatalf("Populate left the engine without the spec's %d models", small.Models)
		}
		if !e.Clock().Equal(gen.AsOf) {
			t.Fatal("Populate did not set the engine's clock to AsOf")
		}
		got := storeCounts(ctx, t, s)
		total := 0
		for _, st := range state.Statuses {
			total += got[st]
			if got[st] == 0 {
				t.Errorf("no %s unit in the store (counts %v)", st, got)
			}
			if got[st] != sum.Counts[st] {
				t.Errorf("%s: the store holds %d units, the summary says %d", st, got[st], sum.Counts[st])
			}
		}
		if lo, hi := small.Units*95/100, small.Units*105/100; total < lo || total > hi {
			t.Errorf("the store holds %d units, want %d ± 5%%", total, small.Units)
		}
		if stale := staleUnits(ctx, t, s, e); stale == 0 || stale != sum.Stale {
			t.Errorf("the store holds %d stale units, the summary says %d; want some", stale, sum.Stale)
		}
	})
}

func TestPopulateIsDeterministic(t *testing.T) {
	ctx := t.Context()
	dump := func() []state.Unit {
		s := enginetest.Open(t, enginetest.SQLite)
		cfg := gen.Config{Models: 30, Units: 3000, Seed: 11}
		e, _, err := gen.Populate(ctx, s, engine.Options{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out []state.Unit
		for _, m := range e.Spec().Models {
			err := s.ScanUnits(ctx, state.UnitQuery{Model: m.Name}, func(u state.Unit) error {
				out = append(out, state.Unit{Model: u.Model, Window: u.Window, Status: u.Status, AppliedAt: u.AppliedAt})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	a, b := dump(), dump()
	if len(a) != len(b) {
		t.Fatalf("two populations of one config hold %d and %d units", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Model != y.Model || !x.Window.Equal(y.Window) || x.Status != y.Status || (x.AppliedAt == nil) != (y.AppliedAt == nil) ||
			(x.AppliedAt != nil && !x.AppliedAt.Equal(*y.AppliedAt)) {
			t.Fatalf("unit %d differs: %+v and %+v", i, x, y)
		}
	}
}

// storeCounts counts the store's units by status, model by model.
func storeCounts(ctx context.Context, t *testing.T, s state.Store) map[state.UnitStatus]int {
	t.Helper()
	recs, err := s.Models(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[state.UnitStatus]int{}
	for _, rec := range recs {
		st, err := s.Stats(ctx, "", rec.Name)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range st.Counts {
			out[k] += v
		}
	}
	return out
}

// staleUnits counts, by brute force over the store, the applied units that
// an applied row of an EXACT, ENCAPSULATE or THROUGH upstream overlapping
// their window is newer than. s is e's store.
func staleUnits(ctx context.Context, t *testing.T, s state.Store, e *engine.Engine) int {
	t.Helper()
	n := 0
	for _, m := range e.Spec().Models {
		var ups [][]state.AppliedRow
		for _, src := range m.Upstream {
			if src.Contract != spec.Exact && src.Contract != spec.Encapsulate && src.Contract != spec.Through {
				continue
			}
			rows, err := s.Applied(ctx, "", src.Name, state.Window{})
			if err != nil {
				t.Fatal(err)
			}
			ups = append(ups, rows)
		}
		err := s.ScanUnits(ctx, state.UnitQuery{Model: m.Name, Statuses: []state.UnitStatus{state.Applied}}, func(u state.Unit) error {
		units:
			for _, rows := range ups {
				for _, r := range rows {
					if r.Window.Overlaps(u.Window) && r.AppliedAt.After(*u.AppliedAt) {
						n++
						break units
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// Attach sets an engine up over a store Populate filled earlier — the same
// spec, the clock at AsOf — and returns the summary Populate returned,
// writing nothing.
func TestAttachIsPopulateWithoutWriting(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		_, sum := populateSmall(t, s)
		before := storeCounts(ctx, t, s)
		e, got, err := gen.Attach(s, engine.Options{}, small)
		if err != nil {
			t.Fatal(err)
		}
		if got.Units != sum.Units || got.Models != sum.Models || got.Stale != sum.Stale || len(got.Counts) != len(sum.Counts) {
			t.Fatalf("Attach summarised %+v, Populate %+v", got, sum)
		}
		for st, n := range sum.Counts {
			if got.Counts[st] != n {
				t.Fatalf("Attach counts %d %s units, Populate %d", got.Counts[st], st, n)
			}
		}
		if e.Spec() == nil || len(e.Spec().Models) != small.Models || !e.Clock().Equal(gen.AsOf) {
			t.Fatal("Attach left the engine without the project's spec or its clock")
		}
		if after := storeCounts(ctx, t, s); len(after) != len(before) {
			t.Fatalf("Attach wrote to the store: %v, was %v", after, before)
		} else {
			for st, n := range before {
				if after[st] != n {
					t.Fatalf("Attach wrote to the store: %v, was %v", after, before)
				}
			}
		}
	})
}

// Seed writes what Populate writes, registrations and units, without an
// engine.
func TestSeedIsPopulateWithoutAnEngine(t *testing.T) {
	ctx := t.Context()
	dump := func(s state.Store) string {
		recs, err := s.Models(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range recs {
			fmt.Fprintf(&b, "%s %d %s\n", r.Name, r.TaskID, r.ContentHash)
			err := s.ScanUnits(ctx, state.UnitQuery{Model: r.Name}, func(u state.Unit) error {
				fmt.Fprintf(&b, " %s %s %v\n", u.Window, u.Status, u.AppliedAt)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		edges, err := s.Edges(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%v\n", edges)
		return b.String()
	}
	populated := enginetest.Open(t, enginetest.SQLite)
	_, want, err := gen.Populate(ctx, populated, engine.Options{}, small)
	if err != nil {
		t.Fatal(err)
	}
	seeded := enginetest.Open(t, enginetest.SQLite)
	sp, got, err := gen.Seed(ctx, seeded, "", small)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Models) != small.Models || got.Units != want.Units || got.Stale != want.Stale {
		t.Errorf("Seed: %d models, summary %+v; Populate %+v", len(sp.Models), got, want)
	}
	if a, b := dump(populated), dump(seeded); a != b {
		t.Error("Seed wrote another state than Populate")
	}
}
