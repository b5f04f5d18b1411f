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

// incidentString is an incident in one line for comparison.
func incidentString(inc gate.Incident) string {
	span := "existence"
	if !inc.Span.IsZero() {
		span = inc.Span.String()
	}
	focus := inc.Focus.Model
	if !inc.Focus.Window.IsZero() {
		focus += " " + inc.Focus.Window.String()
	}
	return fmt.Sprintf("%s %s %s units=%d blocked=%d of %s reach=%d focus=%s", inc.Kind, inc.Model, span, inc.Units,
		inc.Blocked, strings.Join(inc.BlockedModels, ","), inc.Reach, focus)
}

// incidentStrings is every incident of rep in one line each.
func incidentStrings(rep *gate.IncidentReport) []string {
	out := []string{}
	for _, inc := range rep.Incidents {
		out = append(out, incidentString(inc))
	}
	return out
}

func mustIncidents(t *testing.T, g *gate.Reader) *gate.IncidentReport {
	t.Helper()
	rep, err := g.Incidents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Every blocked unit of whyWorld waits, directly or through mart.daily and
// mart.hourly, on raw.orders' two failed hours: one incident, not eight.
func TestIncidentsGroupBlockedUnitsUnderTheirFailedRoot(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		rep := mustIncidents(t, g)
		got := incidentStrings(rep)
		// By hand: raw.orders failed 05 and 07 (span 05..08). Blocked behind
		// it: mart.daily day 0, mart.hourly 05+07, mart.flex 05+07,
		// report.running day 0, report.snapshot, report.hourly_rollup day 0
		// = 8. Reach: the outstanding units [05, 08) reaches downstream:
		// mart.daily 1 + mart.hourly 2 + mart.flex 2 + report.running 1 +
		// report.snapshot 1 + report.hourly_rollup 1 = 8 (mart.fresh has no
		// units). Focus: the blocked unit of most impact, mart.daily day 0
		// (holds 2, TestBlockedOrdersByHolds).
		// report.snapshot (WHOLE over mart.daily's two days) also waits on
		// mart.daily's day 1, which has no unit: it counts under that root
		// too, a missing one holding 1 unit (impact: the snapshot).
		expectStrings(t, "incidents", got, []string{
			"failed raw.orders " + state.Window{Since: hours(5, 6).Since, Until: hours(7, 8).Until}.String() +
				" units=2 blocked=8 of mart.daily,mart.flex,mart.hourly,report.hourly_rollup,report.running,report.snapshot" +
				" reach=8 focus=mart.daily " + days(0, 1).String(),
			"missing mart.daily " + days(1, 2).String() + " units=1 blocked=1 of report.snapshot reach=1 focus=report.snapshot",
		})
		inc := rep.Incidents[0]
		if inc.Detail != "exit status 3: source unavailable" {
			t.Errorf("detail %q, want the newest error's first line", inc.Detail)
		}
		if inc.Retry != nil {
			t.Errorf("retry %+v, want none: no retry policy", inc.Retry)
		}
		if want := t0.Add(48 * time.Hour); !inc.Since.Equal(want) {
			t.Errorf("since %s, want %s (when the units failed)", inc.Since, want)
		}
		if rep.Untraced != 0 {
			t.Errorf("untraced %d", rep.Untraced)
		}
	})
}

// A stale upstream, a window never loaded and a failure each get their own
// incident; the failure comes first although the stale rows hold back more
// units, and each incident counts the blocked units one of whose chains
// ends at it.
func TestIncidentsSeparateStaleMissingAndFailedRoots(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		// Three hours later raw.orders' rows (applied at t0+48h) are past
		// mart.fresh's 1h freshness: its 22 hours over applied rows block
		// stale, 05 and 07 block on the failed hours; mart.daily's day 1
		// blocks as raw.orders has no unit there at all.
		g := reader(enginetest.LineageStale.Seed(t, s))
		rep := mustIncidents(t, g)
		got := incidentStrings(rep)
		// By hand:
		//   failed raw.orders: the 8 blocked units before, plus mart.fresh 05
		//     and 07 = 10; impact 8 + mart.fresh 05, 06, 07 = 11 (06 is
		//     blocked too, stale, and [05, 08) reaches it). Focus stays
		//     mart.daily day 0 (impact 2 beats mart.fresh's 0).
		//   stale raw.orders: 22 stale rows (one per mart.fresh hour),
		//     span the whole day; impact: every outstanding unit day 0
		//     reaches downstream = mart.daily 1 + mart.hourly 2 + mart.flex 2
		//     + mart.fresh 24 + report.* 3 = 32; focus mart.fresh 00 (all
		//     impact 0: by model, then since).
		//   missing raw.orders: mart.daily day 1 waits on raw.orders' whole
		//     day 1, never prefilled (one root for the stretch no unit
		//     covers); report.snapshot waits on it through mart.daily day 1
		//     as well as on the failed hours (through day 0), so it counts
		//     under both: 2 held; impact: the outstanding units the day
		//     reaches = mart.daily day 1 + report.snapshot (WHOLE);
		//     report.running day 0 ends where it begins = 2.
		// The stale root holds back the most units, but a failure comes
		// first: it never heals without someone reading its error.
		expectStrings(t, "incidents", got, []string{
			"failed raw.orders " + state.Window{Since: hours(5, 6).Since, Until: hours(7, 8).Until}.String() +
				" units=2 blocked=10 of mart.daily,mart.flex,mart.fresh,mart.hourly,report.hourly_rollup,report.running,report.snapshot" +
				" reach=11 focus=mart.daily " + days(0, 1).String(),
			"stale raw.orders " + days(0, 1).String() + " units=22 blocked=22 of mart.fresh reach=32 focus=mart.fresh " + hours(0, 1).String(),
			"missing raw.orders " + days(1, 2).String() + " units=1 blocked=2 of mart.daily,report.snapshot reach=2 focus=mart.daily " + days(1, 2).String(),
		})
		if d := rep.Incidents[1].Detail; !strings.Contains(d, "stale") || !strings.Contains(d, "older than 1h") {
			t.Errorf("stale detail %q", d)
		}
		if d := rep.Incidents[2].Detail; d != days(1, 2).String()+" is missing: not loaded" {
			t.Errorf("missing detail %q", d)
		}
	})
}

// Once the failed hours are marked applied, the units stored blocked
// behind them are released, not failed, and the units waiting on those
// count on the released root.
func TestIncidentsReleasedUnitsAreTheirOwnRoot(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := lineage(t, s)
		for _, h := range []state.Window{hours(5, 6), hours(7, 8)} {
			mark(t, s, "raw.orders", h, state.Applied, g.Now())
		}
		rep := mustIncidents(t, g)
		got := []string{}
		for _, inc := range rep.Incidents {
			got = append(got, fmt.Sprintf("%s %s units=%d blocked=%d reach=%d", inc.Kind, inc.Model, inc.Units, inc.Blocked, inc.Reach))
		}
		// By hand: mart.daily day 0, mart.hourly 05+07 and mart.flex 05+07
		// read raw.orders directly and are satisfied now: released roots.
		// report.running and report.snapshot stop at mart.daily day 0,
		// report.hourly_rollup at mart.hourly 05. Reach: downstream
		// plus the released units themselves: mart.daily 2+1, mart.hourly
		// 1+2, mart.flex 0+2; ties by model. report.snapshot (WHOLE over
		// mart.daily's two days) also waits on mart.daily's day 1, which has
		// no unit: a second root, missing, holding it (impact: the snapshot).
		expectStrings(t, "released", got, []string{
			"released mart.daily units=1 blocked=3 reach=3",
			"released mart.hourly units=2 blocked=3 reach=3",
			"released mart.flex units=2 blocked=2 reach=2",
			"missing mart.daily units=1 blocked=1 reach=1",
		})
		if rep.Incidents[0].Detail != "its upstreams caught up: the next run applies it" {
			t.Errorf("detail %q", rep.Incidents[0].Detail)
		}
	})
}

// A pipeline with every unit applied has no incident at all.
func TestIncidentsAllClear(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := allApplied(t, s)
		if rep := mustIncidents(t, g); len(rep.Incidents) != 0 || rep.Untraced != 0 {
			t.Errorf("everything applied: %+v, want no incident", rep.Incidents)
		}
	})
}

// A unit failed by a hard gate error (EXACT over a flexible upstream can
// never match) is a gate_error incident, not a failure a reload fixes.
func TestIncidentsNameAHardGateError(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := reader(enginetest.ExactOverFlex.Seed(t, s))
		rep := mustIncidents(t, g)
		if len(rep.Incidents) != 1 {
			t.Fatalf("incidents %v, want one", incidentStrings(rep))
		}
		inc := rep.Incidents[0]
		if inc.Kind != gate.IncidentGateError || inc.Model != "mart.exact" || inc.Units != 2 || !strings.Contains(inc.Detail, "EXACT") {
			t.Errorf("incident %s (%q), want a gate_error of mart.exact's 2 units naming EXACT", incidentString(inc), inc.Detail)
		}
	})
}

// hourlyUpDown is two hourly models, down.h gated on up.h by ENCAPSULATE:
// each down.h hour waits for exactly its own up.h hour.
const hourlyUpDown = `models:
  - {name: up.h, pipeline: p, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: down.h, pipeline: p, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: up.h, contract: encapsulate}], run: {command: ["true"]}}
`

// Past the first MaxTracedBlocked blocked units, a unit joins an incident
// only when a traced unit of its model had the very same reason; the others
// are counted untraced, not credited to whatever root its model's first
// unit had.
func TestIncidentsPastTheTraceBoundCountUntraced(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,200 units")
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		sp := enginetest.RegisterYAML(t, s, hourlyUpDown, t0)
		const n = gate.MaxTracedBlocked + 100
		// A run of both over n hours whose up.h fails every hour: each
		// down.h hour blocked on its own missing hour, as the gate words it.
		now := t0.Add((n + 1) * time.Hour)
		var us []enginetest.UnitOpts
		for h := range n {
			w := hours(h, h+1)
			us = append(us, enginetest.UnitOpts{Model: "up.h", Window: w, Status: state.Failed, At: now, Error: "exit status 1: down"},
				enginetest.UnitOpts{Model: "down.h", Window: w, Status: state.Blocked, At: now,
					BlockedReason: "up.h (ENCAPSULATE): missing [" + state.FormatTime(w.Since) + ", " + state.FormatTime(w.Until) + ")"})
		}
		enginetest.Units(t, s, us...)
		g := &gate.Reader{Store: s, Spec: sp, Now: at(now)}
		rep := mustIncidents(t, g)
		// Every blocked hour names its own missing hour: the 500 traced
		// ones are behind up.h's failure, the 100 past the bound share no
		// reason with them.
		if len(rep.Incidents) != 1 || rep.Incidents[0].Kind != gate.IncidentFailed || rep.Incidents[0].Blocked != gate.MaxTracedBlocked {
			t.Errorf("incidents %v, want up.h failed with %d blocked behind it", incidentStrings(rep), gate.MaxTracedBlocked)
		}
		if rep.Untraced != 100 {
			t.Errorf("untraced %d, want 100", rep.Untraced)
		}
	})
}

// Past the trace bound a blocked unit joins the roots of the first traced
// unit with its model and reason, and ages them by its own last change
// alone: not by that of a traced unit with the same reason that traced
// elsewhere. Here one stored reason covers 600 down.h hours: the first 300
// behind up.h's failed hours, the next 200 behind its pending ones (and
// blocked longest), the 100 past the bound joining the failure. The
// failure's age is that of its own units and the 400 behind it; on the
// grouped read the group's earliest change is the pending-held hours', so
// the untraced ones are read again for theirs.
func TestIncidentsAgeTheUntracedByTheirOwnChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,200 units")
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		sp := enginetest.RegisterYAML(t, s, hourlyUpDown, t0)
		const failed, missing, past = 300, 200, 100
		now := t0.Add((failed + missing + past + 1) * time.Hour)
		var us []enginetest.UnitOpts
		for h := range failed + missing + past {
			w := hours(h, h+1)
			up := enginetest.UnitOpts{Model: "up.h", Window: w, Status: state.Failed, At: now, Error: "exit status 1: down"}
			down := enginetest.UnitOpts{Model: "down.h", Window: w, Status: state.Blocked, At: now, BlockedReason: "held"}
			switch {
			case h >= failed+missing:
				down.At = now.Add(-time.Hour)
			case h >= failed:
				up = enginetest.UnitOpts{Model: "up.h", Window: w, Status: state.Pending, At: now}
				down.At = now.Add(-5 * time.Hour)
			}
			us = append(us, up, down)
		}
		enginetest.Units(t, s, us...)
		g := &gate.Reader{Store: s, Spec: sp, Now: at(now)}
		rep := mustIncidents(t, g)
		got := map[gate.IncidentKind]gate.Incident{}
		for _, inc := range rep.Incidents {
			got[inc.Kind] = inc
		}
		if f := got[gate.IncidentFailed]; f.Model != "up.h" || f.Blocked != failed+past || !f.Since.Equal(now.Add(-time.Hour)) {
			t.Errorf("the failure: %s blocked=%d since %s, want up.h holding %d since %s", f.Model, f.Blocked, f.Since, failed+past, now.Add(-time.Hour))
		}
		if m := got[gate.IncidentMissing]; m.Model != "up.h" || m.Blocked != missing || !m.Since.Equal(now.Add(-5*time.Hour)) {
			t.Errorf("the missing hours: %s blocked=%d since %s, want up.h holding %d since %s", m.Model, m.Blocked, m.Since, missing, now.Add(-5*time.Hour))
		}
		if len(rep.Incidents) != 2 || rep.Held != failed+missing+past || rep.Untraced != 0 {
			t.Errorf("incidents %v held=%d untraced=%d, want the two with all %d held", incidentStrings(rep), rep.Held, rep.Untraced, failed+missing+past)
		}
	})
}

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
				" units=2 blocked=0 of  reach=0 focus=raw.orders " + hours(7, 8).String(),
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

// Incidents holds only the blocked units it traces: on both stores its
// first page and grouped counts from the store, and on a store without
// the grouped read two scans. Each report must be the one made from every
// blocked unit held in a list (IncidentsOf over Blocked, the full
// computation kept as the oracle), on a generated project with more
// blocked units than MaxTracedBlocked, so the untraced ones are put on
// incidents by reason or counted.
func TestIncidentsStreamedEqualTheListed(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := generated(t, s, 12000)
		blocked, err := g.Blocked(t.Context(), gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(blocked) <= gate.MaxTracedBlocked {
			t.Fatalf("%d blocked units: want more than %d for the untraced path", len(blocked), gate.MaxTracedBlocked)
		}
		listed, err := g.IncidentsOf(t.Context(), blocked)
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := g.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want, got := reportLines(listed), reportLines(streamed)
		if !slices.Equal(got, want) {
			t.Errorf("grouped report differs from the listed one:\n got  %q\n want %q", got, want)
		}
		// And the two scans a store without the grouped read gets.
		plain := *g
		plain.Store = hideStuck{s}
		scanned, err := plain.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := reportLines(scanned); !slices.Equal(got, want) {
			t.Errorf("scanned report differs from the listed one:\n got  %q\n want %q", got, want)
		}
		// Each blocked unit counts once in the report (held), and under
		// every root that holds it: the incidents' sum is at least that.
		if behind := streamed.Untraced + streamed.Held; behind != len(blocked) {
			t.Errorf("the report accounts for %d blocked units, the store holds %d", behind, len(blocked))
		}
		credited := 0
		for _, inc := range streamed.Incidents {
			credited += inc.Blocked
		}
		if credited < streamed.Held {
			t.Errorf("the incidents hold %d units in all, fewer than the %d held", credited, streamed.Held)
		}
	})
}

// The trace keeps each upstream's applied rows and each model's
// outstanding units, read once whole, and judges every gate and walks
// every missing range from them: the report is the one the windowed
// reads give, on generated projects on both stores.
func TestIncidentsFromKeptRowsEqualTheWindowedReads(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := generated(t, s, 12000)
		kept, err := g.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		gate.WindowedReads(true)
		windowed, err := g.Incidents(t.Context())
		gate.WindowedReads(false)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := reportLines(kept), reportLines(windowed); !slices.Equal(got, want) {
			t.Errorf("the report from kept rows differs from the windowed reads':\n got  %q\n want %q", got, want)
		}
		if len(kept.Incidents) < 5 {
			t.Errorf("%d incidents: the generated project should trace several roots", len(kept.Incidents))
		}
	})
}

// TriageFirst, the Blocked view's one-pass load, hands over TriagePages'
// first page and Incidents' report: with a page that holds the first
// MaxTracedBlocked blocked units (traced from the page), one that holds
// fewer (traced from the store's pages), one that holds the whole queue,
// and on a store without the grouped read.
func TestTriageFirstIsTheFirstPageAndTheIncidents(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := generated(t, s, 12000)
		want, err := g.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		all, err := g.Triage(t.Context(), gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		blockedFirst := 0 // the page size that holds the first MaxTracedBlocked blocked units
		for i, n := 0, 0; i < len(all) && n < gate.MaxTracedBlocked; i++ {
			if all[i].Status == state.Blocked {
				n++
			}
			blockedFirst = i + 1
		}
		if blockedFirst+10 >= len(all) {
			t.Fatalf("the first %d blocked units end %d units into a queue of %d: no page holds them and leaves more", gate.MaxTracedBlocked, blockedFirst, len(all))
		}
		plain := *g
		plain.Store = hideStuck{s}
		for _, c := range []struct {
			name  string
			g     *gate.Reader
			limit int
		}{
			{"a page holding the traced units", g, blockedFirst + 10},
			{"a page holding fewer", g, 50},
			{"the whole queue", g, len(all) + 1},
			{"without the grouped read", &plain, 50},
		} {
			page, rep, err := c.g.TriageFirst(t.Context(), c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := unitLines(page.Units), unitLines(all[:min(len(all), c.limit)]); !slices.Equal(got, want) {
				t.Errorf("%s: the page differs from Triage's first %d units:\n got  %q\n want %q", c.name, c.limit, got, want)
			}
			if got := reportLines(rep); !slices.Equal(got, reportLines(want)) {
				t.Errorf("%s: the report differs from Incidents':\n got  %q\n want %q", c.name, got, reportLines(want))
			}
		}
	})
}

// reportLines is a report in full, one line an incident, for comparison.
func reportLines(rep *gate.IncidentReport) []string {
	out := []string{fmt.Sprintf("untraced=%d held=%d now=%s", rep.Untraced, rep.Held, rep.Now)}
	for _, inc := range rep.Incidents {
		out = append(out, fmt.Sprintf("%s %s %s units=%d since=%s blocked=%d releases=%d %v reach=%d focus=%s %s retry=%v detail=%q",
			inc.Kind, inc.Model, inc.Span, inc.Units, inc.Since, inc.Blocked, inc.Releases, inc.BlockedModels, inc.Reach,
			inc.Focus.Model, inc.Focus.Window, inc.Retry != nil, inc.Detail))
	}
	return out
}
