package gate

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
)

// TestReasonPartsReadsWhatJudgeWrites: a blocked_reason Judge writes for a
// unit with two unsatisfied upstreams — one missing two ranges, one only
// stale — reads back into the upstreams, levels and missing ranges it was
// written from; a reason that does not read that way is kept whole.
func TestReasonPartsReadsWhatJudgeWrites(t *testing.T) {
	fresh := spec.Source{Name: "raw.clicks", Kind: spec.KindModel, Model: &spec.SourceModel{}, Contract: spec.Encapsulate,
		Freshness: &spec.Freshness{Within: 2 * time.Hour, Scope: spec.Latest}}
	m := &spec.Model{Name: "mart.daily", Temporality: spec.Temporal, Upstream: []spec.Source{src(spec.Through), fresh}}
	day2 := days(2, 3)
	ups := map[string]UpstreamState{
		"warehouse.orders": fixedUp(now, applied(t0, days(1, 2))),
		"raw.clicks":       fixedUp(now, applied(t0, days(0, 30))),
	}
	g := Judge(m, &day2, spec.Env{}, ups, now)
	if g.Satisfied || g.BlockedReason == "" {
		t.Fatalf("the unit is not blocked: %+v", g)
	}
	parts := ReasonParts(g.BlockedReason)
	if len(parts) != 2 {
		t.Fatalf("ReasonParts(%q) = %+v, want 2 parts", g.BlockedReason, parts)
	}
	p := parts[0]
	if p.Upstream != "warehouse.orders" || p.Level != "THROUGH" || p.Stale || len(p.Missing) != 2 ||
		!p.Missing[0].Equal(days(0, 1)) || !p.Missing[1].Equal(days(2, 3)) {
		t.Errorf("the THROUGH part of %q reads %+v, want warehouse.orders missing days 0 and 2", g.BlockedReason, p)
	}
	p = parts[1]
	if p.Upstream != "raw.clicks" || p.Level != "ENCAPSULATE" || !p.Stale || p.Missing != nil || p.Detail == "" {
		t.Errorf("the stale part of %q reads %+v, want raw.clicks, ENCAPSULATE, stale", g.BlockedReason, p)
	}
	if got := ReasonParts("the upstream went away"); len(got) != 1 || got[0].Upstream != "" || got[0].Detail != "the upstream went away" {
		t.Errorf("a foreign reason reads %+v, want it whole as the detail", got)
	}
	if got := ReasonParts("a (WHOLE): missing [garbage)"); len(got) != 1 || got[0].Upstream != "a" || got[0].Missing != nil {
		t.Errorf("an unreadable range reads %+v, want the upstream and no ranges", got)
	}
}
