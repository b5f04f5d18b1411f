package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// zonedSpec is one daily model on Stockholm's days: its day 2026-01-01 is
// [2025-12-31T23:00Z, 2026-01-01T23:00Z).
const zonedSpec = `models:
  - {name: sales.daily, chunking: {interval: 1d, start: "2026-01-01", timezone: Europe/Stockholm}, run: {command: ["true"]}}
`

// TestTimeToggle: one format per kind — a window absolute, an instant
// as an age — and t / T switch instants to times and everything to local
// time, the header saying which is on and every absolute time, windows
// included, in the zone it names. Worked by hand: the unit is applied at
// 2026-01-02 12:00Z and the UI looks at 2026-01-03 00:00Z, so it reads
// "12h ago", at 07:00 EST in New York (the viewer's zone); its window is
// Stockholm's 2026-01-01, which in UTC is 2025-12-31 23:00 to 2026-01-01
// 23:00, and in New York 18:00 to 18:00.
func TestTimeToggle(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	dir := t.TempDir()
	sp := enginetest.Parse(t, zonedSpec)
	applied := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	opts := engine.Options{SpecDir: dir, Actor: "test", Now: func() time.Time { return applied }}
	e := engine.New(s, sp, opts)
	day := state.MustWindow(time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 23, 0, 0, 0, time.UTC))
	if _, err := e.Run(t.Context(), engine.RunRequest{Models: []string{"sales.daily"}, Window: &day}, e.Executor(), nil); err != nil {
		t.Fatal(err)
	}
	opts.Now = func() time.Time { return applied.Add(12 * time.Hour) }
	e = engine.New(s, sp, opts)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	r := startUI(t, e, 80, 24, Options{View: "model", Model: "sales.daily", Location: ny})
	r.waitSettled(t, viewModel)
	unitRow := func(f string) string {
		for _, l := range strings.Split(f, "\n") {
			// The units table's row, not the timeline's cursor label.
			if strings.Contains(l, "✓ applied") && !strings.Contains(l, "▲") {
				return l
			}
		}
		t.Fatalf("no applied unit row:\n%s", f)
		return ""
	}

	f := r.waitText(t, "ago·UTC", "2025-12-31 23:00 – 2026-01-01 23:00")
	if row := unitRow(f); !strings.Contains(row, "12h ago") {
		t.Errorf("default: the unit's applied_at is not an age:\n%s", row)
	}

	// T: every absolute time in the zone the header names, the window
	// too — Stockholm's day is New York's 18:00 to 18:00.
	r.keys("T")
	f = r.waitText(t, "ago·EST", "WINDOW (EST)")
	if row := unitRow(f); !strings.Contains(row, "2025-12-31 18:00 – 2026-01-01 18:00") || !strings.Contains(row, "12h ago") {
		t.Errorf("T: want the window in New York's time and still the age:\n%s", row)
	}

	r.keys("t")
	f = r.waitText(t, "abs·EST")
	if row := unitRow(f); !strings.Contains(row, "2026-01-02 07:00 EST") {
		t.Errorf("t after T: want applied_at at 07:00 in New York:\n%s", row)
	}

	r.keys("T")
	f = r.waitText(t, "abs·UTC", "2025-12-31 23:00 – 2026-01-01 23:00")
	if row := unitRow(f); !strings.Contains(row, "2026-01-02 12:00Z") {
		t.Errorf("T again: want applied_at in UTC:\n%s", row)
	}
}

// TestTimeRuleOnEveryScreen: an age reads relative and a point in time
// absolute, t switches every time on screen between the two, and the
// absolute ones are in the zone the header names, windows included. By
// hand (newWorld): raw.orders' hours failed at 2026-01-02 00:00Z and the
// UI looks at 2026-01-03 00:00Z (a day); its failed hours 05:00–08:00Z
// are 00:00–03:00 in New York (EST).
func TestTimeRuleOnEveryScreen(t *testing.T) {
	w := newWorld(t)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	r := startUI(t, w.e, 120, 24, Options{View: "blocked", Location: ny})
	r.waitSettled(t, viewBlocked)
	failedRow := func(f string) string {
		for _, l := range strings.Split(f, "\n") {
			if strings.Contains(l, "✗      3 raw.orders") {
				return l
			}
		}
		t.Fatalf("no failed raw.orders row:\n%s", f)
		return ""
	}
	// Blocked: CHANGED is an age, then under t the time, whole.
	if row := failedRow(r.waitText(t, "CHANGED")); !strings.Contains(row, "1d ago") {
		t.Errorf("Blocked's CHANGED is not an age: %q", row)
	}
	r.keys("t")
	if row := failedRow(r.waitText(t, "abs·UTC")); !strings.Contains(row, "2026-01-02 00:00Z") {
		t.Errorf("under t Blocked's CHANGED is not the time, whole: %q", row)
	}
	// Pipelines at 120 columns: LAST APPLIED under t is whole.
	r.keys("1")
	f := r.waitFor(t, "Pipelines under t", func(f string, top viewKind) bool {
		return top == viewPipelines && strings.Contains(f, "LAST APPLIED") && strings.Contains(f, "abs·UTC")
	})
	for _, l := range strings.Split(f, "\n") {
		if strings.Contains(l, "raw.orders") && !strings.Contains(l, "2026-01-02 00:00Z") {
			t.Errorf("under t Pipelines' LAST APPLIED is not the whole time: %q", l)
		}
	}
	// T: the header says EST, and windows read in New York's time too,
	// named, beside the times.
	r.keys("T", "2")
	if row := failedRow(r.waitFor(t, "Blocked under T", func(f string, top viewKind) bool {
		return top == viewBlocked && strings.Contains(f, "abs·EST") && strings.Contains(f, "CHANGED")
	})); !strings.Contains(row, "2026-01-01 00:00–01:00 EST") || !strings.Contains(row, "2026-01-01 19:00 EST") {
		t.Errorf("under T Blocked's window and time are not in New York's zone: %q", row)
	}
	// The incidents at 80×24: the card's window in the header's zone, and
	// its age under t as when it began.
	r.tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	r.keys("i")
	f = r.waitText(t, "raw.orders failed 2026-01-01 00:00–03:00 EST")
	if !strings.Contains(f, "since 2026-01-01 19:00 EST") {
		t.Errorf("under t the incident's age is not when it began:\n%s", f)
	}
	r.keys("t")
	f = r.waitText(t, "ago·EST", "raw.orders failed 2026-01-01 00:00–03:00 EST")
	if !strings.Contains(f, "for 1d") {
		t.Errorf("without t the incident's age is not a duration:\n%s", f)
	}
}
