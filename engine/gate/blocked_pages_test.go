package gate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// unitLine is everything Blocked and Triage say of a unit, on one line.
func unitLine(u gate.BlockedUnit) string {
	return fmt.Sprintf("%s|%s|%s|%s|%q|%q|%d|%s|holds %d", u.Model, u.Pipeline, u.Window, u.Status, u.Reason, u.Error,
		u.Attempts, u.UpdatedAt.UTC().Format("2006-01-02T15:04:05.999999Z"), u.Holds)
}

func unitLines(us []gate.BlockedUnit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = unitLine(u)
	}
	return out
}

// pagesOf reads a paged listing whole, checking that every page but the
// last is full.
func pagesOf(t *testing.T, size int, read func(fn func(gate.StuckPage) error) error) []gate.BlockedUnit {
	t.Helper()
	var (
		all    []gate.BlockedUnit
		models []gate.StuckModel
	)
	short := false
	err := read(func(p gate.StuckPage) error {
		page := p.Units
		if models == nil {
			models = p.Models
		} else if !slices.Equal(models, p.Models) {
			t.Fatalf("the models changed between pages: %v, then %v", models, p.Models)
		}
		if short || len(page) == 0 || len(page) > size {
			t.Fatalf("a page of %d units (size %d) after a short one: %v", len(page), size, short)
		}
		short = len(page) < size
		all = append(all, page...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The models told with the first page are those of the units, each
	// with its count and a span holding its windows.
	count, failed := map[string]int{}, map[string]int{}
	for _, u := range all {
		count[u.Model]++
		if u.Status == state.Failed {
			failed[u.Model]++
		}
	}
	for _, m := range models {
		if count[m.Model] != m.Units || failed[m.Model] != m.Failed {
			t.Errorf("%s: %d units told, %d failed; %d listed, %d failed", m.Model, m.Units, m.Failed, count[m.Model], failed[m.Model])
		}
		delete(count, m.Model)
	}
	if len(count) > 0 {
		t.Errorf("models listed but not told: %v", count)
	}
	for _, u := range all {
		i := slices.IndexFunc(models, func(m gate.StuckModel) bool { return m.Model == u.Model })
		if i >= 0 && !models[i].Span.Covers(u.Window) && !u.Window.IsZero() {
			t.Errorf("%s %s lies outside the span told, %s", u.Model, u.Window, models[i].Span)
		}
	}
	return all
}

// TestStuckPagesMatchTheFullRead is the oracle test of the grouped, paged
// read (issue 33): on generated projects of both stores, BlockedPages and
// TriagePages hand over exactly what Blocked and Triage list — every unit,
// with its reason, error, attempts and what it holds, in the same order —
// for the whole environment, one pipeline and one model, at page sizes
// from one unit to more than there are; and so does a store that cannot
// group (paging the full read).
func TestStuckPagesMatchTheFullRead(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		timeless := 0
		for _, seed := range []int64{3, 5} {
			env := fmt.Sprintf("s%d", seed)
			sp, _, err := gen.Seed(t.Context(), s, env, gen.Config{Models: 40, Units: 4000, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			// The generated state leaves timeless models applied or
			// pending: make them stuck, blocked and failed in turn.
			for i, m := range sp.Models {
				if m.Temporality != spec.Timeless {
					continue
				}
				to, reason := state.Blocked, "held for the test"
				if i%2 == 1 {
					to, reason = state.Failed, ""
				}
				if _, err := s.SetStatus(t.Context(), state.StatusChange{Env: env, Model: m.Name, From: []state.UnitStatus{state.Pending, state.Applied},
					To: to, Reason: reason, Now: gen.AsOf}); err != nil {
					t.Fatal(err)
				}
			}
			g := &gate.Reader{Store: s, Spec: sp, Env: spec.Env{Suffix: env}, Now: at(gen.AsOf)}
			full, err := g.Triage(t.Context(), gate.BlockedFilter{})
			if err != nil {
				t.Fatal(err)
			}
			// The oracle has something to say: failed and blocked units,
			// some holding others, more than a page.
			kinds := map[state.UnitStatus]int{}
			holding := 0
			for _, u := range full {
				kinds[u.Status]++
				if u.Holds > 0 {
					holding++
				}
				if u.Window.IsZero() {
					timeless++
				}
			}
			if kinds[state.Failed] == 0 || kinds[state.Blocked] < 20 || holding < 10 {
				t.Fatalf("seed %d: %v stuck units, %d holding others: too few to compare", seed, kinds, holding)
			}
			filters := []gate.BlockedFilter{{}, {Pipeline: full[0].Pipeline}, {Model: full[0].Model}, {Model: full[len(full)-1].Model}}
			for _, f := range filters {
				for _, size := range []int{1, 7, 100_000} {
					for _, r := range []struct {
						name  string
						full  func() ([]gate.BlockedUnit, error)
						paged func(*gate.Reader) func(func(gate.StuckPage) error) error
					}{
						{"Blocked", func() ([]gate.BlockedUnit, error) { return g.Blocked(t.Context(), f) },
							func(g *gate.Reader) func(func(gate.StuckPage) error) error {
								return func(fn func(gate.StuckPage) error) error { return g.BlockedPages(t.Context(), f, size, fn) }
							}},
						{"Triage", func() ([]gate.BlockedUnit, error) { return g.Triage(t.Context(), f) },
							func(g *gate.Reader) func(func(gate.StuckPage) error) error {
								return func(fn func(gate.StuckPage) error) error { return g.TriagePages(t.Context(), f, size, fn) }
							}},
					} {
						want, err := r.full()
						if err != nil {
							t.Fatal(err)
						}
						what := fmt.Sprintf("seed %d %s %+v, pages of %d", seed, r.name, f, size)
						expectStrings(t, what, unitLines(pagesOf(t, size, r.paged(g))), unitLines(want))
						if size == 7 {
							plain := *g
							plain.Store = hideStuck{s}
							expectStrings(t, what+" without a grouped read", unitLines(pagesOf(t, size, r.paged(&plain))), unitLines(want))
						}
					}
				}
			}
		}
		if timeless == 0 {
			t.Error("no timeless model's unit is stuck in either project: its zero window went unchecked")
		}
	})
}

// hideStuck is a store without the grouped, paged read.
type hideStuck struct{ state.Store }

// TestStuckPagesRefuseWhatStuckRefuses: an unknown model or pipeline is the
// error Blocked gives, and a page of no units is refused.
func TestStuckPagesRefuseWhatStuckRefuses(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		_, want := g.Blocked(t.Context(), gate.BlockedFilter{Model: "no.such"})
		err := g.BlockedPages(t.Context(), gate.BlockedFilter{Model: "no.such"}, 10, func(gate.StuckPage) error { return nil })
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("unknown model: %v, want %v", err, want)
		}
		if err := g.BlockedPages(t.Context(), gate.BlockedFilter{}, 0, func(gate.StuckPage) error { return nil }); err == nil {
			t.Error("pages of no units: no error")
		}
	})
}
