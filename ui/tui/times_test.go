package tui

import (
	"strings"
	"testing"
	"time"

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
// time, the header saying which is on. Worked by hand: the unit is
// applied at 2026-01-02 12:00Z and the UI looks at 2026-01-03 00:00Z, so
// it reads "12h ago", at 07:00 EST in New York (the viewer's zone); its
// window is Stockholm's 2026-01-01, which in UTC is 2025-12-31 23:00 to
// 2026-01-01 23:00.
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

	r.keys("T")
	f = r.waitText(t, "ago·EST", "WINDOW (CET)")
	if row := unitRow(f); !strings.Contains(row, "2026-01-01 ") || strings.Contains(row, "23:00") || !strings.Contains(row, "12h ago") {
		t.Errorf("T: want Stockholm's date 2026-01-01 and still the age:\n%s", row)
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
