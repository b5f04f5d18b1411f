package engine

import (
	"context"
	"errors"
	"fmt"
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
	return fmt.Sprintf("%s %s %s units=%d blocked=%d of %s impact=%d focus=%s", inc.Kind, inc.Model, span, inc.Units,
		inc.Blocked, strings.Join(inc.BlockedModels, ","), inc.Impact, focus)
}

// incidentStrings is every incident of rep in one line each.
func incidentStrings(rep *gate.IncidentReport) []string {
	out := []string{}
	for _, inc := range rep.Incidents {
		out = append(out, incidentString(inc))
	}
	return out
}

func mustIncidents(t *testing.T, e *Engine) *gate.IncidentReport {
	t.Helper()
	rep, err := e.Incidents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Every blocked unit of whyWorld waits, directly or through mart.daily and
// mart.hourly, on raw.orders' two failed hours: one incident, not eight.
func TestIncidentsGroupBlockedUnitsUnderTheirFailedRoot(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		rep := mustIncidents(t, e)
		got := incidentStrings(rep)
		// By hand: raw.orders failed 05 and 07 (span 05..08). Blocked behind
		// it: mart.daily day 0, mart.hourly 05+07, mart.flex 05+07,
		// report.running day 0, report.snapshot, report.hourly_rollup day 0
		// = 8. Impact: the outstanding units [05, 08) reaches downstream:
		// mart.daily 1 + mart.hourly 2 + mart.flex 2 + report.running 1 +
		// report.snapshot 1 + report.hourly_rollup 1 = 8 (mart.fresh has no
		// units). Focus: the blocked unit of most impact, mart.daily day 0
		// (impact 2, TestBlockedOrdersByImpact).
		expectStrings(t, "incidents", got, []string{
			"failed raw.orders " + state.Window{Since: hours(5, 6).Since, Until: hours(7, 8).Until}.String() +
				" units=2 blocked=8 of mart.daily,mart.flex,mart.hourly,report.hourly_rollup,report.running,report.snapshot" +
				" impact=8 focus=mart.daily " + days(0, 1).String(),
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
// units, and each incident counts only the blocked units whose chain ends
// at it.
func TestIncidentsSeparateStaleMissingAndFailedRoots(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		// Three hours later raw.orders' rows (applied at t0+48h) are past
		// mart.fresh's 1h freshness: its 22 hours over applied rows block
		// stale, 05 and 07 block on the failed hours.
		e.opts.Now = func() time.Time { return t0.Add(51 * time.Hour) }
		if _, err := e.Run(t.Context(), RunRequest{Models: []string{"mart.fresh"}, Window: firstDay()}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
		// mart.daily's day 1: raw.orders has no unit there at all.
		day1 := days(1, 2)
		if _, err := e.Run(t.Context(), RunRequest{Models: []string{"mart.daily"}, Window: &day1}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
		if c := statuses(t, s, "mart.fresh"); c[state.Blocked] != 24 {
			t.Fatalf("mart.fresh %v, want 24 blocked", c)
		}
		rep := mustIncidents(t, e)
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
		//   missing raw.orders: mart.daily day 1 waits on raw.orders' 00 hour
		//     of day 1, never prefilled (the chain's first missing window);
		//     impact: the outstanding units that hour reaches = mart.daily
		//     day 1 + report.snapshot (WHOLE); report.running day 0 ends
		//     where the hour begins, so THROUGH does not reach it = 2.
		// The stale root holds back the most units, but a failure comes
		// first: it never heals without someone reading its error.
		expectStrings(t, "incidents", got, []string{
			"failed raw.orders " + state.Window{Since: hours(5, 6).Since, Until: hours(7, 8).Until}.String() +
				" units=2 blocked=10 of mart.daily,mart.flex,mart.fresh,mart.hourly,report.hourly_rollup,report.running,report.snapshot" +
				" impact=11 focus=mart.daily " + days(0, 1).String(),
			"stale raw.orders " + days(0, 1).String() + " units=22 blocked=22 of mart.fresh impact=32 focus=mart.fresh " + hours(0, 1).String(),
			"missing raw.orders " + hours(24, 25).String() + " units=1 blocked=1 of mart.daily impact=2 focus=mart.daily " + days(1, 2).String(),
		})
		if d := rep.Incidents[1].Detail; !strings.Contains(d, "stale") || !strings.Contains(d, "older than 1h") {
			t.Errorf("stale detail %q", d)
		}
		if d := rep.Incidents[2].Detail; d != hours(24, 25).String()+" is missing: not loaded" {
			t.Errorf("missing detail %q", d)
		}
	})
}

// Once the failed hours are marked applied, the units stored blocked
// behind them are released, not failed, and the units waiting on those
// count on the released root.
func TestIncidentsReleasedUnitsAreTheirOwnRoot(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := whyWorld(t, s)
		for _, h := range []state.Window{hours(5, 6), hours(7, 8)} {
			if _, err := e.Mark(t.Context(), "raw.orders", h, state.Applied); err != nil {
				t.Fatal(err)
			}
		}
		rep := mustIncidents(t, e)
		got := []string{}
		for _, inc := range rep.Incidents {
			got = append(got, fmt.Sprintf("%s %s units=%d blocked=%d impact=%d", inc.Kind, inc.Model, inc.Units, inc.Blocked, inc.Impact))
		}
		// By hand: mart.daily day 0, mart.hourly 05+07 and mart.flex 05+07
		// read raw.orders directly and are satisfied now: released roots.
		// report.running and report.snapshot stop at mart.daily day 0,
		// report.hourly_rollup at mart.hourly 05. Impact: downstream reach
		// plus the released units themselves: mart.daily 2+1, mart.hourly
		// 1+2, mart.flex 0+2; ties by model.
		expectStrings(t, "released", got, []string{
			"released mart.daily units=1 blocked=3 impact=3",
			"released mart.hourly units=2 blocked=3 impact=3",
			"released mart.flex units=2 blocked=2 impact=2",
		})
		if rep.Incidents[0].Detail != "its upstreams caught up: the next run applies it" {
			t.Errorf("detail %q", rep.Incidents[0].Detail)
		}
	})
}

// A pipeline with every unit applied has no incident at all.
func TestIncidentsAllClear(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
		if c := statuses(t, s, "mart.daily"); c[state.Applied] != 1 {
			t.Fatalf("mart.daily %v", c)
		}
		if rep := mustIncidents(t, e); len(rep.Incidents) != 0 || rep.Untraced != 0 {
			t.Errorf("everything applied: %+v, want no incident", rep.Incidents)
		}
	})
}

// A unit that failed and waits for its retry is a failed incident that
// says when the next try comes: the store's not-before time.
func TestIncidentsShowTheNextRetry(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, _ := retryClockWorld(t, s)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = e.Run(ctx, RunRequest{Window: firstDay()}, &flakyExec{fails: 5}, nil)
		}()
		t.Cleanup(cancel)
		waiting := waitRetrying(t, s, "raw.orders", days(0, 1))
		rep := mustIncidents(t, e)
		if len(rep.Incidents) != 1 {
			t.Fatalf("incidents %+v, want the retrying unit", rep.Incidents)
		}
		inc := rep.Incidents[0]
		if inc.Kind != gate.IncidentFailed || inc.Model != "raw.orders" || inc.Units != 1 || inc.Detail != "exit status 1: source flaky" {
			t.Errorf("incident %+v, want raw.orders failed with its error", inc)
		}
		if inc.Retry == nil || !inc.Retry.At.Equal(*waiting.NotBefore) || inc.Retry.Try != 2 || inc.Retry.Of != 3 {
			t.Errorf("retry %+v, want try 2 of 3 at %s", inc.Retry, waiting.NotBefore)
		}
		if got, want := inc.Retry.Line(state.FormatTime), "retry 2/3 at "+state.FormatTime(*waiting.NotBefore); got != want {
			t.Errorf("retry line %q, want %q", got, want)
		}

		// The run is cancelled while the unit waits: no try 2 of 3 comes
		// from it; a new run takes the unit from the same time on, with a
		// fresh budget, and every view says so.
		cancel()
		<-done
		runs, err := s.Runs(t.Context(), "", 1)
		if err != nil || len(runs) != 1 {
			t.Fatal(runs, err)
		}
		rep = mustIncidents(t, e)
		if r := rep.Incidents[0].Retry; r == nil || r.EndedRun != runs[0].ID {
			t.Fatalf("retry after the cancel %+v, want it to name the ended run %d", r, runs[0].ID)
		}
		want := fmt.Sprintf("retry by a new run from %s (run %d that set it ended)", state.FormatTime(*waiting.NotBefore), runs[0].ID)
		if got := rep.Incidents[0].Retry.Line(state.FormatTime); got != want {
			t.Errorf("retry line %q, want %q", got, want)
		}
		why := mustWhy(t, e, "raw.orders", t0)
		if why.Retry == nil || why.Retry.EndedRun != runs[0].ID {
			t.Errorf("why's retry %+v, want the ended run named", why.Retry)
		}
	})
}

// exactOverFlexSpec fails mart.exact's units on a hard gate error: EXACT
// over a flexible upstream can never match.
const exactOverFlexSpec = `models:
  - name: raw.flex
    pipeline: ingest
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}
    run: {command: ["true"]}
  - name: mart.exact
    pipeline: core
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.flex, contract: exact}]
    run: {command: ["true"]}
`

// A unit failed by a hard gate error (EXACT over a flexible upstream can
// never match) is a gate_error incident, not a failure a reload fixes.
func TestIncidentsNameAHardGateError(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, exactOverFlexSpec)
		w := hours(0, 2)
		if _, err := e.Run(t.Context(), RunRequest{Window: &w}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		if c := statuses(t, s, "mart.exact"); c[state.Failed] != 2 {
			t.Fatalf("mart.exact %v, want 2 failed on the hard error", c)
		}
		rep := mustIncidents(t, e)
		if len(rep.Incidents) != 1 {
			t.Fatalf("incidents %v, want one", incidentStrings(rep))
		}
		inc := rep.Incidents[0]
		if inc.Kind != gate.IncidentGateError || inc.Model != "mart.exact" || inc.Units != 2 || !strings.Contains(inc.Detail, "EXACT") {
			t.Errorf("incident %s (%q), want a gate_error of mart.exact's 2 units naming EXACT", incidentString(inc), inc.Detail)
		}
	})
}

// Past the first MaxTracedBlocked blocked units, a unit joins an incident
// only when a traced unit of its model had the very same reason; the others
// are counted untraced, not credited to whatever root its model's first
// unit had.
func TestIncidentsPastTheTraceBoundCountUntraced(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,200 units")
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, `models:
  - name: up.h
    pipeline: p
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["true"]}
  - name: down.h
    pipeline: p
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: up.h, contract: encapsulate}]
    run: {command: ["true"]}
`)
		const n = gate.MaxTracedBlocked + 100
		e.opts.Now = func() time.Time { return t0.Add((n + 1) * time.Hour) }
		w := hours(0, n)
		failing := &fakeExec{fail: func(model string, _ *state.Window) error {
			if model == "up.h" {
				return errors.New("exit status 1: down")
			}
			return nil
		}}
		if _, err := e.Run(t.Context(), RunRequest{Window: &w}, failing, nil); err != nil {
			t.Fatal(err)
		}
		if c := statuses(t, s, "down.h"); c[state.Blocked] != n {
			t.Fatalf("down.h %v, want %d blocked", c, n)
		}
		rep := mustIncidents(t, e)
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
