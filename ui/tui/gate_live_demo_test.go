package tui_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/cli"
	"github.com/bollhav/bollhav/ui/tui"
)

// TestDemoLiveGateFollowsARun: the live gate index a feed keeps (one for
// every UI of the process, as `serve` shares it) and `blocked --recheck`
// say what a full sweep says on the demo, model for model — before, and
// after a run that reruns the failed payments hour with everything
// downstream of it, whose changes reach the feed's index only through the
// feed. The Blocked view's units carry its verdicts: before the fix the
// revenue days behind the outage wait.
func TestDemoLiveGateFollowsARun(t *testing.T) {
	d := seedDemo(t)
	ctx := t.Context()
	// One instant for every judge, the CLI's --as-of included: the demo's
	// freshness limits run on the clock, and a verdict must not flip
	// between two of them.
	at := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	d.opts.Now = func() time.Time { return at }
	d.e = engine.New(d.s, d.e.Spec(), d.opts)
	feed, err := tui.NewFeed(ctx, d.e, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	live, err := feed.LiveGate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := sameAsSweep(t, d, live)
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

	d.fixOutage(t) // the provider is back
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
	after := sameAsSweep(t, d, live)
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

// sameAsSweep checks the index's report, and `blocked --recheck -o json`
// run as a user runs it, against a full sweep at the demo engine's fixed
// now, and returns the index's report.
func sameAsSweep(t *testing.T, d *demo, live *gate.Live) *gate.SweepReport {
	t.Helper()
	at := d.e.Clock()
	if !live.Now().Equal(at) {
		t.Fatalf("the index judges at %s, the engine's clock says %s", live.Now(), at)
	}
	want, err := d.e.GateSweep(t.Context(), gate.BlockedFilter{}, nil)
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
	if cli := recheckJSON(t, d, at); !reflect.DeepEqual(cli, recheckRows(want)) {
		t.Fatalf("blocked --recheck says\n  %+v\na full sweep\n  %+v", cli, recheckRows(want))
	}
	if got.Units == 0 {
		t.Fatal("nothing outstanding on the demo: the comparison proves nothing")
	}
	return got
}

// recheckJSON runs `bollhav blocked --recheck -o json` on the demo as of at.
func recheckJSON(t *testing.T, d *demo, at time.Time) []enginetest.RecheckRow {
	t.Helper()
	var out, errb bytes.Buffer
	args := []string{"blocked", "--recheck", "-o", "json", "--spec", filepath.Join(d.dir, "bollhav.yaml"), "--as-of", state.FormatTime(at)}
	if code := cli.Main(args, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("blocked --recheck: exit %d\n%s", code, errb.String())
	}
	var got struct {
		Models []enginetest.RecheckRow `json:"models"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("blocked --recheck -o json: %v\n%s", err, out.String())
	}
	return got.Models
}

// recheckRows is rep as `blocked --recheck -o json` prints it.
func recheckRows(rep *gate.SweepReport) []enginetest.RecheckRow {
	out := []enginetest.RecheckRow{}
	for _, m := range rep.Models {
		out = append(out, enginetest.RecheckRow{Model: m.Model, Pipeline: m.Pipeline, Outstanding: m.Outstanding, Ready: m.Ready,
			Released: m.Released, Waiting: m.Waiting, Stale: m.Stale, Errors: m.Errors})
	}
	return out
}
