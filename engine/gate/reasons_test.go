package gate_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// TestReasonsStructureEveryKindTheEngineWrites: each kind of entry the
// engine stores (the gate's missing, stale, outdated and not-applied
// verdicts, an after: edge, a wait on work under way) reads back as its
// kind with its upstream, contract or edge, missing windows and run — and
// a unit held by two upstreams has two reasons, in order.
func TestReasonsStructureEveryKindTheEngineWrites(t *testing.T) {
	for _, tc := range []struct {
		stored string
		want   []gate.Reason
	}{
		{"raw.a (ENCAPSULATE): missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z); ingest.fx (EXACT): missing [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)",
			[]gate.Reason{
				{Kind: gate.ReasonMissing, Upstream: "raw.a", Contract: "ENCAPSULATE", Missing: []state.Window{hours(5, 6)},
					Detail: "missing [2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)"},
				{Kind: gate.ReasonMissing, Upstream: "ingest.fx", Contract: "EXACT", Missing: []state.Window{days(0, 1)},
					Detail: "missing [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)"},
			}},
		{"raw.clicks (THROUGH, stale): newest applied_at 2026-01-01T00:00:00Z is older than 2h",
			[]gate.Reason{{Kind: gate.ReasonStale, Upstream: "raw.clicks", Contract: "THROUGH", Detail: "newest applied_at 2026-01-01T00:00:00Z is older than 2h"}}},
		{"core.x (EXACT): " + gate.OutdatedText,
			[]gate.Reason{{Kind: gate.ReasonOutdated, Upstream: "core.x", Contract: "EXACT", Detail: gate.OutdatedText}}},
		{"ref.dim (WHOLE): not applied",
			[]gate.Reason{{Kind: gate.ReasonNotApplied, Upstream: "ref.dim", Contract: "WHOLE", Detail: "not applied"}}},
		{gate.AfterReason("p.a", graph.Success, gate.EndedDetail("FAILED", 7)),
			[]gate.Reason{{Kind: gate.ReasonAfter, Upstream: "p.a", Edge: "SUCCESS", Run: 7, Detail: "ended FAILED in run 7"}}},
		{gate.AfterReason("x.a", graph.Success, gate.NotRunDetail(days(2, 3))),
			[]gate.Reason{{Kind: gate.ReasonAfter, Upstream: "x.a", Edge: "SUCCESS", Detail: gate.NotRunDetail(days(2, 3))}}},
		{"raw.h (ENCAPSULATE): waiting on 3 running unit(s) under way",
			[]gate.Reason{{Kind: gate.ReasonUnderWay, Upstream: "raw.h", Contract: "ENCAPSULATE", Detail: "waiting on 3 running unit(s) under way"}}},
		{gate.ReleasedReason(4), []gate.Reason{{Kind: gate.ReasonReleased, Run: 4, Detail: gate.ReleasedReason(4)}}},
		{"a reason from another release", []gate.Reason{{Kind: gate.ReasonOther, Detail: "a reason from another release"}}},
		{"", nil},
	} {
		if got := gate.Reasons(tc.stored); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Reasons(%q)\n got %+v\nwant %+v", tc.stored, got, tc.want)
		}
	}
}

// TestUnitReasonsAddTheRetryWaitAndTheLease: besides its stored reason, a
// failed try waiting for its next and a running unit's lease are reasons
// it is not applied now, with when they end.
func TestUnitReasonsAddTheRetryWaitAndTheLease(t *testing.T) {
	next, lease := t0.Add(time.Hour), t0.Add(2*time.Hour)
	retry := gate.UnitReasons(state.Unit{Status: state.Pending, Error: "exit status 1: source down\nmore", NotBefore: &next}, nil)
	if len(retry) != 1 || retry[0].Kind != gate.ReasonRetry || !retry[0].Until.Equal(next) || retry[0].Detail != "a failed try waits for its next: exit status 1: source down" {
		t.Errorf("a retrying unit's reasons %+v", retry)
	}
	running := gate.UnitReasons(state.Unit{Status: state.Running, LeaseOwner: "host:42", LeaseUntil: &lease}, nil)
	if len(running) != 1 || running[0].Kind != gate.ReasonLease || !running[0].Until.Equal(lease) || running[0].Detail != "running under host:42's lease" {
		t.Errorf("a running unit's reasons %+v", running)
	}
	waiting := gate.UnitReasons(state.Unit{Status: state.Pending, BlockedReason: "raw.h (ENCAPSULATE): waiting on 2 running unit(s) under way", NotBefore: &next}, nil)
	if len(waiting) != 1 || waiting[0].Kind != gate.ReasonUnderWay {
		t.Errorf("a waiting unit's reasons %+v: want its one stored entry, no retry (it has no error)", waiting)
	}
	if got := gate.UnitReasons(state.Unit{Status: state.Applied}, nil); len(got) != 0 {
		t.Errorf("an applied unit's reasons %+v, want none", got)
	}
}

// The overlap lock: a pending unit of a flexible model that a running unit
// of the same model overlaps waits for it, with the running window named
// and its lease's end; a running unit of another model, one that does not
// overlap, and a unit that is not pending add nothing.
func TestUnitReasonsAddTheOverlapLock(t *testing.T) {
	lease := t0.Add(5 * time.Hour)
	running := []state.Unit{
		{ID: 1, Model: "flex.m", Status: state.Running, Window: hours(2, 4), LeaseUntil: &lease},
		{ID: 2, Model: "flex.m", Status: state.Running, Window: hours(6, 7)},
		{ID: 3, Model: "other.m", Status: state.Running, Window: hours(0, 9)},
	}
	got := gate.UnitReasons(state.Unit{ID: 9, Model: "flex.m", Status: state.Pending, Window: hours(1, 3)}, running)
	want := "the running unit " + hours(2, 4).String() + " of this flexible model overlaps it: the next claim after it ends takes this one"
	if len(got) != 1 || got[0].Kind != gate.ReasonOverlap || got[0].Detail != want || !got[0].Until.Equal(lease) {
		t.Errorf("a pending unit under a running one: %+v; want one overlap reason %q until %v", got, want, lease)
	}
	if got := gate.UnitReasons(state.Unit{ID: 9, Model: "flex.m", Status: state.Pending, Window: hours(4, 6)}, running); len(got) != 0 {
		t.Errorf("a pending unit between the running ones: %+v, want none", got)
	}
	if got := gate.UnitReasons(state.Unit{ID: 9, Model: "flex.m", Status: state.Blocked, BlockedReason: "x", Window: hours(1, 3)}, running); len(got) != 1 || got[0].Kind == gate.ReasonOverlap {
		t.Errorf("a blocked unit: %+v, want only its stored reason", got)
	}
}
