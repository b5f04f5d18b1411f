package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// heldWorldSpec is worldSpec with raw.orders' failing hours waiting while
// a file "hold" exists in the spec directory: a test holds a rerun in
// flight, looks at the screen, then lets it go on (and fail again, unless
// "fixed" exists).
var heldWorldSpec = strings.Replace(worldSpec, "test -f fixed ||", "while test -f hold; do sleep 0.05; done; test -f fixed ||", 1)

// After a rerun started from the Incidents screen fails again, the cursor
// is still on the root it was started from, its card open with its error —
// at 80×24, through the frames in between, where the root is "not loaded"
// while its hours run and sorts below the stale root.
func TestIncidentsCursorStaysOnTheRootThroughAFailedRerun(t *testing.T) {
	if !strings.Contains(heldWorldSpec, "test -f hold") {
		t.Fatal("heldWorldSpec did not change raw.orders' command")
	}
	w := newWorldOf(t, heldWorldSpec)
	hold := filepath.Join(w.specDir, "hold")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := startLanding(t, w.e, 80, 24, Options{})
	f := r.waitSettled(t, viewIncidents)
	if sel := selectedLine(f); !strings.Contains(sel, "raw.orders failed") {
		t.Fatalf("the first card selected is not raw.orders' failure: %q\n%s", sel, f)
	}
	// The footer offers the fix before the ways out: r with esc and q.
	lines := strings.Split(f, "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "r run root") || !strings.Contains(foot, "esc back") || !strings.Contains(foot, "q quit") {
		t.Errorf("the footer at 80 columns is not r, esc and q: %q", foot)
	}
	r.keys("r")
	r.waitText(t, "Run 2 units of raw.orders in prod?")
	r.keys("y")
	// Held in flight: the failed hours are running, and the root is a
	// card of another kind, below the stale one.
	f = r.waitFor(t, "the root not loaded while it runs", func(f string, top viewKind) bool {
		return top == viewIncidents && strings.Contains(f, "raw.orders not loaded")
	})
	if sel := selectedLine(f); !strings.Contains(sel, "raw.orders not loaded") {
		t.Errorf("while the rerun runs the cursor left its root: %q\n%s", sel, f)
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed
	for w.counts(t, "raw.orders")[state.Failed] != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the rerun did not fail again: %v", w.counts(t, "raw.orders"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	f = r.waitFor(t, "the root failed again", func(f string, top viewKind) bool {
		return top == viewIncidents && strings.Contains(f, "raw.orders failed") && !strings.Contains(f, "raw.orders not loaded") &&
			strings.Contains(f, "failed (w opens it)")
	})
	lines = strings.Split(f, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "›") {
			at = i
		}
	}
	if at < 0 || !strings.Contains(lines[at], "raw.orders failed 2026-01-01 05:00–08:00") {
		t.Fatalf("after the failed rerun the cursor is not on raw.orders' failure:\n%s", f)
	}
	if !strings.Contains(lines[at+1], "exit status 3: source unavailable") {
		t.Errorf("the failed card is collapsed:\n%s", f)
	}
	// Its age is the incident's: failing since the hours first failed, a
	// day before the UI's clock, not since the rerun's try.
	if !strings.HasSuffix(strings.TrimRight(lines[at], " "), "for 1d") {
		t.Errorf("the failed card's age is not the incident's (for 1d): %q", lines[at])
	}
}

// The selection follows its root by model and window across reloads,
// whatever its kind became, and goes back to it after a report without it;
// a move of the cursor pins the card moved to.
func TestIncidentsSelectionFollowsTheRootAcrossKinds(t *testing.T) {
	a := benchApp(t)
	v := newIncidents(a.common)
	v.id = 1
	failedSpan, staleSpan := hours(5, 8), hours(0, 5)
	stale := gate.Incident{Kind: gate.IncidentStale, Model: "raw.orders", Span: staleSpan, Blocked: 5}
	other := gate.Incident{Kind: gate.IncidentStale, Model: "raw.clicks", Span: hours(0, 3), Blocked: 5}
	failed := gate.Incident{Kind: gate.IncidentFailed, Model: "raw.orders", Span: failedSpan, Blocked: 4}
	missing := gate.Incident{Kind: gate.IncidentMissing, Model: "raw.orders", Span: failedSpan, Blocked: 4}
	frames := []struct {
		name string
		incs []gate.Incident
		want gate.IncidentKind // "" for: whatever, the root is not there
	}{
		{"before the rerun", []gate.Incident{failed, stale, other}, gate.IncidentFailed},
		{"its hours pending", []gate.Incident{stale, other, missing}, gate.IncidentMissing},
		{"its hours running, nothing traced to it", []gate.Incident{stale, other}, ""},
		{"failed again", []gate.Incident{failed, stale, other}, gate.IncidentFailed},
	}
	for _, fr := range frames {
		v.update(loaded[*gate.IncidentReport]{view: 1, data: &gate.IncidentReport{Incidents: fr.incs}})
		s := v.selected()
		if fr.want == "" {
			continue
		}
		if s == nil || s.Model != "raw.orders" || s.Kind != fr.want || !s.Span.Equal(failedSpan) {
			t.Fatalf("%s: selected %+v, want raw.orders %s over %s", fr.name, s, fr.want, failedSpan)
		}
	}
	// Moving the cursor pins the card moved to.
	v.cur.move(1)
	v.pin()
	v.update(loaded[*gate.IncidentReport]{view: 1, data: &gate.IncidentReport{Incidents: []gate.Incident{other, failed, stale}}})
	if s := v.selected(); s == nil || s.Kind != gate.IncidentStale || s.Model != "raw.orders" {
		t.Errorf("after a move to the stale root: selected %+v", s)
	}
}
