package gate_test

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// underWaySpec: a daily model gated ENCAPSULATE on an hourly load, one
// gated EXACT on a daily load, and one gated on the hourly load with a
// freshness limit.
const underWaySpec = `models:
  - {name: raw.h, chunking: {interval: 1h, start: "2026-01-01"}, run: {command: ["true"]}}
  - {name: raw.d, chunking: {interval: 1d, start: "2026-01-01"}, run: {command: ["true"]}}
  - {name: core.enc, chunking: {interval: 1d, start: "2026-01-01"}, upstream: [{name: raw.h, contract: encapsulate}], run: {command: ["true"]}}
  - {name: core.exact, chunking: {interval: 1d, start: "2026-01-01"}, upstream: [{name: raw.d, contract: exact}], run: {command: ["true"]}}
`

// TestUnderWayWaitsOnlyForWorkInFlight: a unit whose missing upstream
// windows are all being loaded waits instead of blocking (issue 32 §6);
// one whose missing range has a gap no work covers, or work that nobody
// will claim, is blocked as before.
func TestUnderWayWaitsOnlyForWorkInFlight(t *testing.T) {
	now := t0.Add(10 * 24 * time.Hour)
	all := func(string) bool { return true }
	for _, tc := range []struct {
		name   string
		model  string
		units  []enginetest.UnitOpts
		claims func(string) bool
		want   string // the reason it waits; empty: blocked
	}{
		{"every missing hour running", "core.enc", hoursOf("raw.h", 0, 24, state.Running), nil,
			"raw.h (ENCAPSULATE): waiting on 24 running unit(s) under way"},
		{"running and pending, the caller claims pending", "core.enc",
			append(hoursOf("raw.h", 0, 12, state.Running), hoursOf("raw.h", 12, 24, state.Pending)...), all,
			"raw.h (ENCAPSULATE): waiting on 12 running and 12 pending unit(s) under way"},
		{"pending that nobody here claims", "core.enc",
			append(hoursOf("raw.h", 0, 12, state.Running), hoursOf("raw.h", 12, 24, state.Pending)...), nil, ""},
		{"applied hours count as done", "core.enc",
			append(hoursOf("raw.h", 0, 20, state.Applied), hoursOf("raw.h", 20, 24, state.Running)...), nil,
			"raw.h (ENCAPSULATE): waiting on 4 running unit(s) under way"},
		{"a failed hour blocks", "core.enc",
			append(hoursOf("raw.h", 0, 23, state.Running), hoursOf("raw.h", 23, 24, state.Failed)...), all, ""},
		{"an hour no unit covers blocks", "core.enc", hoursOf("raw.h", 0, 23, state.Running), all, ""},
		{"EXACT: the day itself running", "core.exact", []enginetest.UnitOpts{{Model: "raw.d", Window: days(0, 1), Status: state.Running}}, nil,
			"raw.d (EXACT): waiting on 1 running unit(s) under way"},
		{"EXACT: the day blocked upstream", "core.exact", []enginetest.UnitOpts{{Model: "raw.d", Window: days(0, 1), Status: state.Blocked, BlockedReason: "x"}}, all, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				sp := enginetest.RegisterYAML(t, s, underWaySpec, t0)
				enginetest.Units(t, s, tc.units...)
				g := &gate.Reader{Store: s, Spec: sp, Now: at(now)}
				m := sp.Model(tc.model)
				w := days(0, 1)
				ug, err := g.Unit(t.Context(), m, &w, now)
				if err != nil || ug.Satisfied {
					t.Fatalf("gate of %s day 0: %+v, %v; want unsatisfied", tc.model, ug, err)
				}
				reason, ok, err := g.UnderWay(t.Context(), m, ug, tc.claims)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (tc.want != "") || reason != tc.want {
					t.Errorf("under way = %v, %q; want %v, %q", ok, reason, tc.want != "", tc.want)
				}
			})
		})
	}
}

// hoursOf seeds model's hours [a, b) of day 0 in status.
func hoursOf(model string, a, b int, status state.UnitStatus) []enginetest.UnitOpts {
	var out []enginetest.UnitOpts
	for h := a; h < b; h++ {
		u := enginetest.UnitOpts{Model: model, Window: hours(h, h+1), Status: status}
		if status == state.Blocked {
			u.BlockedReason = "upstream"
		}
		if status == state.Failed {
			u.Error = "exit status 1"
		}
		out = append(out, u)
	}
	return out
}

// why tells a unit that waits on work under way from a blocked one: with
// the missing hours running it says what it waits on and that it is not
// blocked; with them pending (nobody here claims them) it says nothing of
// the kind, and the upstream's verdict names the missing range as before.
func TestWhySaysAUnitWaitsOnWorkUnderWay(t *testing.T) {
	now := t0.Add(10 * 24 * time.Hour)
	for _, tc := range []struct {
		name   string
		status state.UnitStatus
		want   string
	}{
		{"the missing hours running", state.Running, "waiting on work under way, not blocked: raw.h (ENCAPSULATE): waiting on 4 running unit(s) under way"},
		{"the missing hours pending", state.Pending, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				sp := enginetest.RegisterYAML(t, s, underWaySpec, t0)
				enginetest.Units(t, s, append(hoursOf("raw.h", 0, 20, state.Applied), hoursOf("raw.h", 20, 24, tc.status)...)...)
				enginetest.Units(t, s, enginetest.UnitOpts{Model: "core.enc", Window: days(0, 1), Status: state.Pending})
				g := &gate.Reader{Store: s, Spec: sp, Now: at(now)}
				r, err := g.Why(t.Context(), "core.enc", t0)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.GateLine(); got != tc.want {
					t.Errorf("gate line %q, want %q", got, tc.want)
				}
				if r.Satisfied || len(r.Upstreams) == 0 || len(r.Upstreams[0].Missing) == 0 {
					t.Errorf("the upstream's verdict no longer names the missing hours: %+v", r.Upstreams)
				}
			})
		})
	}
}
