package tui_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/cli"
	"github.com/bollhav/bollhav/ui/tui"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// demo is the demo shop (`bollhav demo --no-ui`) in a temporary folder, and an engine over its store as the UI opens it.
type demo struct {
	dir string
	e   *engine.Engine
	// s is e's store and opts its options, for a test that reads the store
	// or makes another engine over it.
	s      state.Store
	opts   engine.Options
	outage state.Window // raw.payments' failed hour
}

func seedDemo(t *testing.T) *demo {
	t.Helper()
	return seedDemoAs(t, time.Time{})
}

// seedDemoAs is the demo told as of asOf (demo --as-of; zero: now), with
// an engine whose clock stays there.
func seedDemoAs(t *testing.T, asOf time.Time) *demo {
	t.Helper()
	if testing.Short() {
		t.Skip("seeds the demo shop")
	}
	// Seeded once per run of the package's tests; each test works on a
	// copy of its own.
	template, args := "shop", []string{"demo", "--no-ui"}
	if !asOf.IsZero() {
		template, args = "shop-as-of-"+asOf.Format("20060102T150405"), append(args, "--as-of", asOf.Format(time.RFC3339))
	}
	dir := enginetest.CopyOfTemplate(t, template, func(dir string) error {
		var out, errb bytes.Buffer
		if code := cli.Main(append(args, "--dir", dir), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
			return fmt.Errorf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		return nil
	})
	sp, store := enginetest.OpenProject(t, dir)
	at, err := cli.DemoOutage(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.Options{SpecDir: dir, Actor: "test"}
	if !asOf.IsZero() {
		opts.Now = func() time.Time { return asOf }
	}
	return &demo{dir: dir, e: engine.New(store, sp, opts), s: store, opts: opts,
		outage: state.Window{Since: at, Until: at.Add(time.Hour)}}
}

// units are model's units by status, read from the store.
func (d *demo) units(t *testing.T, model string) []state.Unit {
	t.Helper()
	var out []state.Unit
	if err := d.s.ScanUnits(context.Background(), state.UnitQuery{Model: model}, func(u state.Unit) error {
		out = append(out, u)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// blockedWindows are the windows of model's blocked units, read from the
// store.
func (d *demo) blockedWindows(t *testing.T, model string) []state.Window {
	t.Helper()
	var out []state.Window
	for _, u := range d.units(t, model) {
		if u.Status == state.Blocked {
			out = append(out, u.Window)
		}
	}
	return out
}

// fixOutage brings the demo's payment provider back: its outage script
// goes, so the failed hour succeeds when it runs again.
func (d *demo) fixOutage(t *testing.T) {
	t.Helper()
	if err := os.Remove(filepath.Join(d.dir, "scripts", "outage")); err != nil {
		t.Fatal(err)
	}
}

// revenueDaysFixed checks that the demo holds its two revenue days behind
// the outage, then brings the payment provider back (fixOutage); it
// returns the two days, for the test to follow them to applied.
func (d *demo) revenueDaysFixed(t *testing.T) []state.Window {
	t.Helper()
	days := d.blockedWindows(t, "core.daily_revenue")
	if len(days) != 2 {
		t.Fatalf("the demo blocks %d revenue days behind the outage, want 2", len(days))
	}
	d.fixOutage(t)
	return days
}

// startOnIncidents starts the demo's UI at 80×24 as the product launches
// it, on the incidents, and waits for them; it returns the run and that
// first frame.
func (d *demo) startOnIncidents(t *testing.T) (*tui.DemoUI, string) {
	t.Helper()
	r := tui.StartDemoUI(t, d.e, 80, 24, tui.Options{})
	return r, r.WaitView(t, "incidents")
}

// TestDemoWhyShowsTheRootCausesWholeError: at 80×24, enter on the first
// incident explains the blocked revenue day, and the root cause's error is
// on the screen whole — the provider's "503" and, on its own line of the
// error, "the payment provider is down" — not cut to one line.
func TestDemoWhyShowsTheRootCausesWholeError(t *testing.T) {
	r, _ := seedDemo(t).startOnIncidents(t)
	r.Keys("enter")
	f := r.WaitView(t, "why")
	tui.CheckFrame(t, f, 80, 24)
	enginetest.ContainsAll(t, "the why screen", f, "why core.daily_revenue", "← root cause", "503 Service Unavailable", "the payment provider is down until scripts/outage is removed; retry then")
}

// TestDemoFixFlowsDownstreamInThreeKeys: the payment provider is back; from
// launch, r on the first incident (the failed payments hour), d for "with
// downstream", y to confirm — and the store has the hour applied and the
// revenue days that waited behind it applied too, by the real engine.
func TestDemoFixFlowsDownstreamInThreeKeys(t *testing.T) {
	d := seedDemo(t)
	blockedDays := d.revenueDaysFixed(t)
	r, f := d.startOnIncidents(t)
	if !strings.Contains(f, "›✗ raw.payments failed") {
		t.Fatalf("the failed root is the first incident, selected:\n%s", f)
	}
	r.Keys("r")
	r.WaitText(t, "Run 1 unit of raw.payments in prod?")
	r.Keys("d")
	// The plan says what the fix frees: raw.payments' hour holds back two
	// revenue days and, behind them, two months (the incident's 4 units).
	f = r.WaitText(t, "with downstream: on", "core.daily_revenue  run 2 units", "releases 4 held units downstream")
	tui.CheckFrame(t, f, 80, 24)
	// The dialog keeps its context: the incident it acts on is still on
	// screen behind it.
	for _, want := range []string{"›✗ raw.payments failed", "holds 4 units of core.daily_revenue"} {
		if !strings.Contains(f, want) {
			t.Errorf("behind the dialog %q is not visible:\n%s", want, f)
		}
	}
	r.Keys("y")
	deadline := time.Now().Add(60 * time.Second)
	for {
		hourApplied := false
		for _, u := range d.units(t, "raw.payments") {
			if u.Window.Equal(d.outage) && u.Status == state.Applied {
				hourApplied = true
			}
		}
		days := 0
		for _, u := range d.units(t, "core.daily_revenue") {
			for _, w := range blockedDays {
				if u.Window.Equal(w) && u.Status == state.Applied {
					days++
				}
			}
		}
		if hourApplied && days == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the run: payments hour applied %v, %d of the 2 revenue days applied", hourApplied, days)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.WaitText(t, "succeeded (w opens it): discover")
}

// TestDemoYankCopiesTheUnitWithOSC52: y on the first incident writes the
// OSC 52 clipboard sequence with the command line that explains the unit
// behind it — the revenue day its failed hour holds, as enter and the
// "explain:" line of `bollhav incidents` name it — which pastes into a
// shell (what the terminal, local or over SSH, puts on the clipboard), and
// says so.
func TestDemoYankCopiesTheUnitWithOSC52(t *testing.T) {
	d := seedDemo(t)
	days := d.blockedWindows(t, "core.daily_revenue")
	r, _ := d.startOnIncidents(t)
	r.Keys("y")
	cmd := "bollhav why core.daily_revenue --at " + days[0].Since.Format(time.RFC3339)
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(cmd)) + "\a"
	r.WaitText(t, "copied the why command (OSC 52): bollhav why core.daily_revenue")
	teatest.WaitFor(t, r.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
		teatest.WithDuration(60*time.Second))
}

// TestDemoUnitDetailShowsTheWholeErrorAndWhatRan: d on the failed payments
// incident opens the unit: its whole error, its failed attempts with their
// times and runs, the command that ran and the BOLLHAV_* variables it got.
func TestDemoUnitDetailShowsTheWholeErrorAndWhatRan(t *testing.T) {
	d := seedDemo(t)
	r, _ := d.startOnIncidents(t)
	r.Keys("d")
	f := r.WaitText(t, "Ran (as the spec has it now)")
	tui.CheckFrame(t, f, 80, 24)
	since := d.outage.Since.Format(time.RFC3339)
	enginetest.ContainsAll(t, "the unit detail", f,
		"✗ raw.payments", "✗ failed", "503 Service Unavailable", "the payment provider is down until scripts/outage is removed; retry then",
		"command ./scripts/load_payments.sh", "BOLLHAV_SINCE="+since,
	)
	// The history is below: G scrolls to its end. The demo's payments hour
	// failed in both seeding runs, the same error each time.
	r.Keys("G")
	f = r.WaitText(t, "· run 1")
	if n := strings.Count(f, "try 1 · "); n != 2 || !strings.Contains(f, "· run 1") || !strings.Contains(f, "· run 2") {
		t.Errorf("want the two failed attempts of runs 1 and 2:\n%s", f)
	}
}
