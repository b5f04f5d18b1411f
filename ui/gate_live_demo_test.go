package ui_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/ui"
)

// TestDemoLiveGateFollowsARun: the live gate index a feed keeps (one for
// every UI of the process, as `serve` shares it) says what a full sweep
// says on the demo — before, and after a run that reruns the failed
// payments hour with everything downstream of it, whose changes reach the
// index only through the feed. The Blocked view's units carry its
// verdicts: before the fix the revenue days behind the outage wait.
func TestDemoLiveGateFollowsARun(t *testing.T) {
	d := seedDemo(t)
	ctx := t.Context()
	feed, err := ui.NewFeed(ctx, d.e, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	live, err := feed.LiveGate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := sameAsSweep(t, d.e, live)
	waiting := revenue(before).Waiting
	if waiting < 2 {
		t.Fatalf("before the fix core.daily_revenue has %d units waiting, want the 2 days behind the outage: %+v", waiting, before.Models)
	}
	units, err := feed.BlockedNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	days := 0
	for _, u := range units {
		if u.Model == "core.daily_revenue" {
			days++
			if u.Readiness != gate.Waiting {
				t.Errorf("the Blocked view's %s %s is %q now, want waiting", u.Model, u.Window, u.Readiness)
			}
		}
	}
	if days != 2 {
		t.Errorf("the Blocked view lists %d revenue days, want 2", days)
	}

	if err := os.Remove(filepath.Join(d.dir, "scripts", "outage")); err != nil {
		t.Fatal(err) // the provider is back
	}
	// The fix as the UI runs it: the failed hour again, then what waited
	// behind it.
	for _, req := range []engine.RunRequest{
		{Models: []string{"raw.payments"}, Window: &d.outage, Mode: spec.Bulldozer},
		{Models: []string{"core.daily_revenue"}, Mode: spec.Discover},
	} {
		res, err := d.e.Run(ctx, req, d.e.Executor(), nil)
		if err != nil || res.Failed() {
			t.Fatalf("the fix run of %v: %v %+v", req.Models, err, res)
		}
	}
	latest, err := d.e.LatestChangeSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for live.Seq() < latest {
		if time.Now().After(deadline) {
			t.Fatalf("the index took the feed up to seq %d of %d in 30s", live.Seq(), latest)
		}
		time.Sleep(20 * time.Millisecond)
	}
	after := sameAsSweep(t, d.e, live)
	if revenue(after).Waiting >= waiting {
		t.Errorf("after the fix core.daily_revenue still has %d units waiting (%d before)", revenue(after).Waiting, waiting)
	}
}

// revenue is core.daily_revenue's counts in rep.
func revenue(rep *gate.SweepReport) gate.ModelReadiness {
	for _, m := range rep.Models {
		if m.Model == "core.daily_revenue" {
			return m
		}
	}
	return gate.ModelReadiness{}
}

// sameAsSweep checks the index's report against a full sweep at the
// index's now (the demo's freshness limits run on the wall clock) and
// returns it.
func sameAsSweep(t *testing.T, e *engine.Engine, live *gate.Live) *gate.SweepReport {
	t.Helper()
	at := live.Now()
	fixed := *e
	fixed.Now = func() time.Time { return at }
	want, err := fixed.GateSweep(t.Context(), gate.BlockedFilter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := live.Report(gate.BlockedFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the live index reports\n  %+v\na full sweep\n  %+v", got, want)
	}
	if got.Units == 0 {
		t.Fatal("nothing outstanding on the demo: the comparison proves nothing")
	}
	return got
}
