package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// The fixtures the gate, UI and CLI tests seed stand for what real runs
// leave. These tests run the engine on each fixture's spec as the fixture
// says it was run and compare the store with the seeded one, unit by unit,
// registration by registration and run by run, on both backends: a change
// to the engine's outcomes or its gate's wording fails here, not silently
// in a test that seeds the old state.

var fixtures = []enginetest.Fixture{enginetest.Lineage, enginetest.FailedHour, enginetest.StaleUpstream, enginetest.UnregisteredUpstream,
	enginetest.LineageStale, enginetest.ExactOverFlex}

func TestFactoryMatchesRun(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, ran state.Store) {
				runFixture(t, ran, f)
				seeded := enginetest.Open(t, ran.Backend())
				w := f.Seed(t, seeded)
				if w.Now != f.Now {
					t.Errorf("world clock %s, fixture %s", w.Now, f.Now)
				}
				expectSameText(t, "registrations", registrations(t, ran), registrations(t, seeded))
				expectSameText(t, "units", unitsText(t, ran), unitsText(t, seeded))
				expectSameText(t, "runs", runsText(t, ran), runsText(t, seeded))
			})
		})
	}
}

// runFixture runs the engine on f's spec as f says: each run with the
// engine's clock at its time, in a spec directory of its own.
func runFixture(t *testing.T, s state.Store, f enginetest.Fixture) {
	t.Helper()
	dir := t.TempDir()
	for i, r := range f.Runs {
		at := r.At
		// A fixture of a contract that can never match (ExactOverFlex)
		// is run knowingly, as --allow-lint-errors would.
		e := engine.New(s, enginetest.Parse(t, f.Spec), engine.Options{SpecDir: dir, Actor: "test", Now: func() time.Time { return at }, AllowLintErrors: true})
		req := engine.RunRequest{Models: r.Models}
		if !r.Window.IsZero() {
			w := r.Window
			req.Window = &w
		}
		if _, err := e.Run(t.Context(), req, e.Executor(), nil); err != nil {
			t.Fatalf("run %d of %s: %v", i+1, f.Name, err)
		}
	}
}

func expectSameText(t *testing.T, what, ran, seeded string) {
	t.Helper()
	if line, a, b := enginetest.FirstLineDiff(ran, seeded); line > 0 {
		t.Errorf("%s differ at line %d:\n ran    %s\n seeded %s", what, line, a, b)
	}
}

// registrations is every registration and task edge, without the times.
func registrations(t *testing.T, s state.Store) string {
	t.Helper()
	var b strings.Builder
	for _, r := range enginetest.Models(t, s) {
		fmt.Fprintf(&b, "%s task %d %s %s %s %s %s %s\n", r.Name, r.TaskID, r.Pipeline, r.Temporality, r.Flexibility, r.Interval, r.Start, r.ContentHash)
		defs, err := s.Definitions(t.Context(), "", r.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			fmt.Fprintf(&b, "  definition %s\n", d.Fingerprint)
		}
	}
	edges, err := s.Edges(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		fmt.Fprintf(&b, "edge %+v\n", e)
	}
	return b.String()
}

// unitsText is every unit of every registered model: window, status,
// reason, error, applied_at, fingerprint, attempts and run.
func unitsText(t *testing.T, s state.Store) string {
	t.Helper()
	var b strings.Builder
	for _, r := range enginetest.Models(t, s) {
		enginetest.EachUnit(t, s, state.UnitQuery{Model: r.Name}, func(u state.Unit) {
			at := "-"
			if u.AppliedAt != nil {
				at = state.FormatTime(*u.AppliedAt)
			}
			fmt.Fprintf(&b, "%s %s %s reason=%q error=%q applied_at=%s fingerprint=%s attempts=%d run=%d\n",
				u.Model, u.Window, u.Status, u.BlockedReason, u.Error, at, u.Fingerprint, u.Attempts, u.RunID)
		})
		a, err := s.Stats(t.Context(), "", r.Name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s counts %v\n", r.Name, a.Counts)
	}
	return b.String()
}

// runsText is every run: models, window, mode and how it ended.
func runsText(t *testing.T, s state.Store) string {
	t.Helper()
	runs, err := s.Runs(t.Context(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "run %d %v %s %s %s\n", r.ID, r.Models, r.Window, r.StateMode, r.Status)
	}
	return b.String()
}
