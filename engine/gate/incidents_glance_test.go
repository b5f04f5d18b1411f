package gate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

func mustGlance(t *testing.T, g *gate.Reader) *gate.IncidentReport {
	t.Helper()
	rep, err := g.Glance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Glance {
		t.Fatal("a glance that does not say it is one")
	}
	return rep
}

// A glance is the failed roots before any blocked unit is traced: whyWorld's
// failed raw.orders hours as one incident with their error, age and span,
// no impact yet, and the blocked units counted, not traced. The traced
// report agrees on every failed root the glance names.
func TestGlanceIsTheFailedRootsBeforeAnyTrace(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		rep := mustGlance(t, g)
		// By hand: raw.orders failed 05 and 07, span 05..08, both at
		// t0+48h; the focus is the newest failed unit, the later of the
		// two on a tie. Nothing is counted behind it yet. Blocked: mart.daily
		// day 0, mart.hourly 05+07, mart.flex 05+07, report.running,
		// report.snapshot, report.hourly_rollup = 8 units of 6 models.
		expectStrings(t, "glance", incidentStrings(rep), []string{
			"failed raw.orders " + state.Window{Since: hours(5, 6).Since, Until: hours(7, 8).Until}.String() +
				" units=2 blocked=0 of  impact=0 focus=raw.orders " + hours(7, 8).String(),
		})
		inc := rep.Incidents[0]
		if inc.Detail != "exit status 3: source unavailable" {
			t.Errorf("detail %q, want the newest error", inc.Detail)
		}
		if want := t0.Add(48 * time.Hour); !inc.Since.Equal(want) {
			t.Errorf("since %s, want %s (when the units failed)", inc.Since, want)
		}
		if rep.Tracing != 8 || rep.TracingModels != 6 {
			t.Errorf("tracing %d units of %d models, want 8 of 6", rep.Tracing, rep.TracingModels)
		}
		full := mustIncidents(t, g)
		if full.Glance || full.Tracing != 0 {
			t.Errorf("the traced report says glance=%v tracing=%d", full.Glance, full.Tracing)
		}
		for _, g := range rep.Incidents {
			found := false
			for _, f := range full.Incidents {
				if f.Model == g.Model && (f.Kind == gate.IncidentFailed || f.Kind == gate.IncidentGateError) {
					found = true
					if f.Units != g.Units || f.Span != g.Span || !f.Since.Equal(g.Since) || f.Detail != g.Detail {
						t.Errorf("glance %s (%q) and trace %s (%q) disagree on the failed root", incidentString(g), g.Detail, incidentString(f), f.Detail)
					}
				}
			}
			if !found {
				t.Errorf("glance root %s is not in the traced report %v", incidentString(g), incidentStrings(full))
			}
		}
	})
}

// A glance does not judge gates: a unit failed by a hard gate error is a
// failure until the trace names it a gate error.
func TestGlanceCallsAGateErrorAFailureUntilTraced(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := reader(enginetest.ExactOverFlex.Seed(t, s))
		rep := mustGlance(t, g)
		if len(rep.Incidents) != 1 || rep.Incidents[0].Kind != gate.IncidentFailed || rep.Incidents[0].Units != 2 ||
			rep.Incidents[0].Pipeline != "core" {
			t.Errorf("glance %v, want mart.exact's 2 units failed (pipeline core)", incidentStrings(rep))
		}
		if full := mustIncidents(t, g); len(full.Incidents) != 1 || full.Incidents[0].Kind != gate.IncidentGateError {
			t.Errorf("traced %v, want the gate error", incidentStrings(full))
		}
	})
}

// With every unit applied a glance has nothing failed and nothing to trace.
func TestGlanceAllClear(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := allApplied(t, s)
		if rep := mustGlance(t, g); len(rep.Incidents) != 0 || rep.Tracing != 0 || rep.TracingModels != 0 {
			t.Errorf("everything applied: %v, tracing %d", incidentStrings(rep), rep.Tracing)
		}
	})
}

// A glance reads the failed units of the gate.GlanceDetailed models with
// the most of them, and counts the others' from the kept counts: 103
// failing models, two with 3 failed hours, the rest with 1.
func TestGlanceReadsTheMostFailedModelsFirst(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n")
	const n = gate.GlanceDetailed + 3
	for i := range n {
		fmt.Fprintf(&b, "  - name: raw.m%03d\n    pipeline: p\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"false\"]}\n", i)
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		// A run of every model over hour 00, then one of the last two over
		// 01–02: every run fails (the command is false).
		sp := enginetest.RegisterYAML(t, s, b.String(), t0)
		now := t0.Add(48 * time.Hour)
		last := []string{fmt.Sprintf("raw.m%03d", n-2), fmt.Sprintf("raw.m%03d", n-1)}
		var us []enginetest.UnitOpts
		for _, m := range sp.Models {
			us = append(us, enginetest.UnitOpts{Model: m.Name, Window: hours(0, 1), Status: state.Failed, At: now, Error: "exit status 1"})
			if slices.Contains(last, m.Name) {
				for h := 1; h < 3; h++ {
					us = append(us, enginetest.UnitOpts{Model: m.Name, Window: hours(h, h+1), Status: state.Failed, At: now, Error: "exit status 1"})
				}
			}
		}
		enginetest.Units(t, s, us...)
		g := &gate.Reader{Store: s, Spec: sp, Now: at(now)}
		rep := mustGlance(t, g)
		if len(rep.Incidents) != n {
			t.Fatalf("%d failed roots, want %d", len(rep.Incidents), n)
		}
		// By hand: the two with 3 units first (by name), then the others
		// by name; the first GlanceDetailed read in full.
		want := append(slices.Clone(last), func() []string {
			var rest []string
			for i := range n - 2 {
				rest = append(rest, fmt.Sprintf("raw.m%03d", i))
			}
			return rest
		}()...)
		for i, inc := range rep.Incidents {
			units := 1
			if i < 2 {
				units = 3
			}
			if inc.Model != want[i] || inc.Units != units || inc.Kind != gate.IncidentFailed {
				t.Errorf("root %d: %s %s units=%d, want %s failed units=%d", i, inc.Model, inc.Kind, inc.Units, want[i], units)
			}
			detailed := i < gate.GlanceDetailed
			if got := inc.Focus.Model != "" && !inc.Span.IsZero() && inc.Detail != ""; got != detailed {
				t.Errorf("root %d (%s): read in full %v (focus %+v, span %s, detail %q), want %v", i, inc.Model, got, inc.Focus, inc.Span, inc.Detail, detailed)
			}
		}
		if top := rep.Incidents[0]; top.Span != (state.Window{Since: hours(0, 1).Since, Until: hours(2, 3).Until}) {
			t.Errorf("%s span %s, want its three failed hours", top.Model, top.Span)
		}
	})
}
