package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/charmbracelet/x/exp/golden"
)

// fitSpec is six days of a daily model over an hourly source whose rows a
// freshness limit of 12 hours finds too old by the time the UI looks:
//
//	src.hourly  loaded 2026-03-07 01:00 for 03-01..03-07 (144 hours)
//	core.daily  run 2026-03-07 02:00 for the same six days (source 1h old)
//	the UI      at 2026-03-07 23:00: the source's rows are 22h old, limit 12h
const fitSpec = `models:
  - {name: src.hourly, pipeline: ingest, chunking: {interval: 1h, start: "2026-03-01T00:00:00Z"}, run: {command: ["true"]}}
  - name: core.daily
    pipeline: core
    chunking: {interval: 1d, start: "2026-03-01T00:00:00Z"}
    upstream:
      - {name: src.hourly, contract: encapsulate, freshness: {within: 12h, scope: latest}}
    run: {command: ["true"]}
`

var fitT0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// newFitWorld seeds fitSpec with real runs and returns the engine at the
// UI's clock.
func newFitWorld(t *testing.T) *engine.Engine {
	t.Helper()
	s := enginetest.Open(t, enginetest.SQLite)
	dir := t.TempDir()
	sp := enginetest.Parse(t, fitSpec)
	var mu sync.Mutex
	clock := fitT0.Add(6*24*time.Hour + time.Hour)
	opts := engine.Options{SpecDir: dir, Actor: "test", Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}}
	e := engine.New(s, sp, opts)
	six := state.Window{Since: fitT0, Until: fitT0.Add(6 * 24 * time.Hour)}
	run := func(model string, at time.Time) {
		t.Helper()
		mu.Lock()
		clock = at
		mu.Unlock()
		if _, err := e.Run(t.Context(), engine.RunRequest{Models: []string{model}, Window: &six}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
	}
	run("src.hourly", fitT0.Add(6*24*time.Hour+time.Hour))
	run("core.daily", fitT0.Add(6*24*time.Hour+2*time.Hour))
	ui := fitT0.Add(6*24*time.Hour + 23*time.Hour)
	opts.Now = func() time.Time { return ui }
	return engine.New(s, sp, opts)
}

// timelineLines are the frame's timeline: its heading and the lines after
// it, up to the first line that is not part of it.
func timelineLines(t *testing.T, frame string) []string {
	t.Helper()
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " Timeline") {
			return lines[i:]
		}
	}
	t.Fatalf("no timeline on screen:\n%s", frame)
	return nil
}

// cells counts the non-blank cells of a strip line.
func cells(line string) int {
	return len([]rune(strings.TrimSpace(line))) - strings.Count(strings.TrimSpace(line), " ")
}

// TestTimelineFitGolden draws the two models' views at 120×40 and 80×24
// against testdata/TestTimelineFitGolden: the source's stale hours as
// stale cells with "~ stale" in the legend and STALE against its limit in
// the header, zoomed out to days by itself (167 hours do not fit); the
// daily model's six days filling the width, its lane showing the source's
// rows stale for this edge.
func TestTimelineFitGolden(t *testing.T) {
	e := newFitWorld(t)
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		for _, model := range []string{"src.hourly", "core.daily"} {
			t.Run(fmt.Sprintf("%s_%dx%d", model, sz[0], sz[1]), func(t *testing.T) {
				r := startUI(t, e, sz[0], sz[1], Options{View: "model", Model: model})
				frame := r.waitSettled(t, viewModel)
				checkFrame(t, frame, sz[0], sz[1])
				tl := timelineLines(t, frame)
				if model == "src.hourly" {
					// At 80 columns the edge's name is cut; STALE and the
					// limit come first so that they are not.
					if !strings.Contains(frame, "newest applied 22h ago ~ STALE · limit 12h (src.hourly→c") {
						t.Errorf("the header does not set the newest row (22h old) against the 12h limit:\n%s", frame)
					}
					if !strings.Contains(tl[0], "zoom 1h [day] week month") || !strings.Contains(tl[0], "~ stale") {
						t.Errorf("the heading does not show the day zoom it fitted and the stale legend: %q", tl[0])
					}
					// Six stale days and a seventh of 23 hours never run:
					// the worst of that day is missing.
					k := (sz[0] - 1 - 2) / 7
					want := strings.Repeat("~", 6*k) + strings.Repeat("·", k)
					if got := strings.TrimSpace(tl[2]); got != want {
						t.Errorf("the strip is\n%q\nwant six stale days and a missing one, %d columns each:\n%q", got, k, want)
					}
				} else {
					k := (sz[0] - 1 - 2) / 6
					// k is the widest whole cell: one column more a day
					// would not fit between the margins.
					if got := cells(tl[2]); got != 6*k || 6*(k+1) <= sz[0]-1-2 {
						t.Errorf("the six days take %d cells, want %d of the %d-column line: %q", got, 6*k, sz[0]-1, tl[2])
					}
					if !strings.Contains(tl[5], strings.Repeat("~", 24)) {
						t.Errorf("the source's lane does not show its rows stale for this edge: %q", tl[5])
					}
				}
				golden.RequireEqual(t, []byte(frame+"\n"))
			})
		}
	}
}

// TestTimelineKeepsTheCursorInView: zoomed in to hours (167 of them do not
// fit 79 columns), moving the cursor to the last unit and back to the first
// scrolls the timeline so the pointer and its label stay on screen.
func TestTimelineKeepsTheCursorInView(t *testing.T) {
	e := newFitWorld(t)
	r := startUI(t, e, 80, 24, Options{View: "model", Model: "src.hourly"})
	r.waitSettled(t, viewModel)
	r.waitText(t, "zoom 1h [day] week month")
	r.keys("+")
	r.waitText(t, "zoom [1h] day week month", "▲ 2026-03-01 00:00–01:00")
	r.keys("G") // the last unit, 143 hours on: past the right edge
	f := r.waitText(t, "2026-03-06 23:00–24:00 ✓ applied")
	tl := timelineLines(t, f)
	if c := strings.IndexRune(tl[3], '▲'); c < 0 || strings.ContainsAny(tl[3], "◂▸") {
		t.Errorf("the cursor is off screen after G: %q", tl[3])
	}
	// Its column shows its hour: stale, like every hour loaded.
	col := len([]rune(tl[3][:strings.Index(tl[3], "▲")]))
	if got := []rune(tl[2])[col]; got != '~' {
		t.Errorf("the cursor's column shows %q, want the stale hour: %q", got, tl[2])
	}
	r.keys("g")
	f = r.waitText(t, "▲ 2026-03-01 00:00–01:00")
	if tl := timelineLines(t, f); !strings.HasPrefix(strings.TrimSpace(tl[1]), "Mar 1") {
		t.Errorf("back at the first unit, the ruler does not start on its day: %q", tl[1])
	}
}

// tightestFreshness picks the smallest limit among the gated edges that
// read a model: raw is read within 36h by a and within 2h by b, and by c
// through an ungated edge with none, so b's 2h holds it; a model no edge
// holds to a limit has none.
func TestTightestFreshness(t *testing.T) {
	sp := enginetest.Parse(t, `models:
  - {name: s.raw, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: s.a, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: s.raw, contract: encapsulate, freshness: {within: 36h}}], run: {command: ["true"]}}
  - {name: s.b, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: s.raw, contract: exact, freshness: {within: 2h}}], run: {command: ["true"]}}
  - {name: s.c, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, upstream: [{name: s.raw}], run: {command: ["true"]}}
`)
	defs := map[string]*spec.Model{}
	for _, m := range sp.Models {
		defs[m.Name] = m
	}
	if got := tightestFreshness(defs, "s.raw"); got != (freshLimit{Within: 2 * time.Hour, Downstream: "s.b"}) {
		t.Errorf("raw's limit = %+v, want 2h from b", got)
	}
	if got := tightestFreshness(defs, "s.a"); got != (freshLimit{}) {
		t.Errorf("a's limit = %+v, want none", got)
	}
}
