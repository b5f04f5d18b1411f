package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/charmbracelet/x/ansi"
)

// The UI opens on the incidents when something is broken: at 80×24 the
// first card is raw.orders' failure, selected, with its error, before any
// key; enter explains its holding the most blocked unit down to the failed
// hour; esc leads back to the pipelines.
func TestLandingOpensOnTheIncidents(t *testing.T) {
	w := newWorld(t)
	r := startLanding(t, w.e, 80, 24, Options{})
	frame := r.waitSettled(t, viewIncidents)
	lines := strings.Split(frame, "\n")
	if !strings.HasPrefix(lines[1], "›✗ raw.orders failed 2026-01-01 05:00–08:00") {
		t.Errorf("the first card is not raw.orders' failure, selected:\n%s", frame)
	}
	if !strings.Contains(lines[2], "exit status 3: source unavailable") {
		t.Errorf("its error is not under it:\n%s", frame)
	}
	r.keys("enter")
	why := r.waitSettled(t, viewWhy)
	if !strings.Contains(why, "why mart.daily 2026-01-01") || !strings.Contains(why, "→ raw.orders 2026-01-01 05:00–06:00  ✗ failed") {
		t.Errorf("enter does not explain mart.daily down to the failed hour:\n%s", why)
	}
	r.keys("esc", "esc")
	back := r.waitSettled(t, viewPipelines)
	if head := strings.Split(back, "\n")[0]; strings.Contains(head, "›") {
		t.Errorf("the breadcrumb goes deeper than the pipelines: %q", head)
	}
}

// With every unit applied the UI opens on the pipelines, saying all is
// clear, and esc has nothing to go back to.
func TestLandingAllClearOpensOnThePipelines(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	dir := t.TempDir()
	sp := enginetest.Parse(t, `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["true"]}}
`)
	e := engine.New(s, sp, engine.Options{SpecDir: dir, Actor: "test", Now: func() time.Time { return uiClock }})
	day0 := state.Window{Since: t0, Until: t0.Add(24 * time.Hour)}
	if _, err := e.Run(t.Context(), engine.RunRequest{Window: &day0}, e.Executor(), nil); err != nil {
		t.Fatal(err)
	}
	r := startLanding(t, e, 80, 24, Options{})
	frame := r.waitFor(t, "the pipelines, all clear", func(f string, top viewKind) bool {
		return top == viewPipelines && strings.Contains(f, "● live") && strings.Contains(f, "mart.daily")
	})
	if !strings.Contains(frame, "✓ all clear") {
		t.Errorf("no all-clear line:\n%s", frame)
	}
	if head := strings.Split(frame, "\n")[0]; strings.Contains(head, "›") || strings.Contains(head, "Incidents") {
		t.Errorf("the incidents are still on the stack: %q", head)
	}
}

// A FAILURE alert that did not fire is held by its after: edge, with no
// incident to name: the UI stays on the incidents and says how many units
// are held, as `bollhav incidents` does, instead of "all clear".
func TestLandingWithHeldUnitsIsNotAllClear(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: ops.alert, pipeline: ingest, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     after: [{task: raw.orders, on: failure}], run: {command: ["true"]}}
`)
	e := engine.New(s, sp, engine.Options{SpecDir: t.TempDir(), Actor: "test", Now: func() time.Time { return uiClock }})
	days := state.Window{Since: t0, Until: t0.Add(48 * time.Hour)}
	if _, err := e.Run(t.Context(), engine.RunRequest{Window: &days}, e.Executor(), nil); err != nil {
		t.Fatal(err)
	}
	r := startLanding(t, e, 160, 24, Options{})
	frame := r.waitFor(t, "the incidents, two alert days held", func(f string, top viewKind) bool {
		return top == viewIncidents && strings.Contains(f, "no incident, but 2 units are held")
	})
	if strings.Contains(frame, "all clear") {
		t.Errorf("all clear while the alert's two days are held:\n%s", frame)
	}
}

// The incidents open on a first look — the failed roots and how many
// blocked units wait, before any is traced — and the traced report
// replaces it with no key pressed, on its own first card.
func TestIncidentsOpenOnAFirstLookThenTheTrace(t *testing.T) {
	a, next := firstLook(t)
	first := ansi.Strip(a.render())
	// By hand (newWorld): raw.orders failed 05 and 07; blocked mart.daily
	// day 0, mart.hourly 05+07, mart.fresh 00–04, report.snapshot = 9
	// units of 4 models.
	enginetest.ContainsAll(t, "the first look", first,
		"›✗ raw.orders failed 2026-01-01 05:00–08:00 (2 units)",
		"exit status 3: source unavailable",
		"what waits on it: tracing…",
		"first look: 1 failed root · tracing 9 blocked units in 4 models…",
	)
	traced := nextLoad(t, next)
	if traced == nil {
		t.Fatal("the first look did not ask for the traced report")
	}
	a.Update(traced)
	frame := ansi.Strip(a.render())
	if strings.Contains(frame, "first look") || strings.Contains(frame, "tracing") {
		t.Errorf("the traced report still says it is a first look:\n%s", frame)
	}
	// The 9 blocked units the first look counted, traced: 4 behind the
	// failed hours, mart.fresh's 5 behind stale rows; report.snapshot also
	// waits on mart.daily's day 1, which nothing loaded: a third root, so
	// fixing the failed hours alone releases 3 of their 4.
	enginetest.ContainsAll(t, "the traced report", frame, "›✗ raw.orders failed 2026-01-01 05:00–08:00 (2 units)",
		"holds 4 units of mart.daily, mart.hourly, report.snapshot (fixing it alone releases 3)",
		"~ raw.orders stale", "holds 5 units of mart.fresh", "? mart.daily not loaded 2026-01-02", "holds 1 unit of report.snapshot (fixing it alone releases 0)",
		"3 incidents · failures first, then by what they hold")
}

// nextLoad runs cmd and the commands it batches until one answers a
// view's load, and returns that answer (nil when none does within 10 s).
// Commands that wait (ticks, the feed) are left running until the test's
// context ends.
func nextLoad(t *testing.T, cmd tea.Cmd) loadResult {
	t.Helper()
	msgs := make(chan tea.Msg, 64)
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if batch, ok := msg.(tea.BatchMsg); ok {
				for _, c := range batch {
					run(c)
				}
				return
			}
			select {
			case msgs <- msg:
			case <-t.Context().Done():
			}
		}()
	}
	run(cmd)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case msg := <-msgs:
			if l, ok := msg.(loadResult); ok {
				return l
			}
		case <-deadline:
			return nil
		}
	}
}

// When the trace replaces a first look on which the cursor was moved, the
// cursor follows the selected root's model to the card the trace makes of
// it — a failure the trace names a gate error included — and goes to the
// first card when the trace has none for it, never to whatever now sits
// at the old position.
func TestIncidentsSelectionFollowsTheRootIntoTheTrace(t *testing.T) {
	a := benchApp(t)
	v := newIncidents(a.common)
	v.id = 1
	failed := func(model string, units int) gate.Incident {
		return gate.Incident{Kind: gate.IncidentFailed, Model: model, Units: units}
	}
	glance := &gate.IncidentReport{Glance: true, Incidents: []gate.Incident{failed("raw.a", 9), failed("raw.b", 5), failed("raw.c", 2)}}
	traced := &gate.IncidentReport{Incidents: []gate.Incident{
		{Kind: gate.IncidentStale, Model: "raw.z", Blocked: 40},
		{Kind: gate.IncidentFailed, Model: "raw.a", Blocked: 30},
		{Kind: gate.IncidentGateError, Model: "raw.b", Blocked: 10},
	}}
	for _, c := range []struct {
		name      string
		moves     int
		wantModel string
		wantKind  gate.IncidentKind
	}{
		{"untouched: the trace's first card", 0, "raw.z", gate.IncidentStale},
		{"raw.b, now a gate error", 1, "raw.b", gate.IncidentGateError},
		{"raw.c, healed: the first card", 2, "raw.z", gate.IncidentStale},
	} {
		v.rep = nil
		v.update(loaded[*gate.IncidentReport]{view: 1, data: glance})
		for range c.moves {
			v.cur.move(1)
		}
		v.update(loaded[*gate.IncidentReport]{view: 1, data: traced})
		if s := v.selected(); s == nil || s.Model != c.wantModel || s.Kind != c.wantKind {
			t.Errorf("%s: selected %+v, want %s %s", c.name, s, c.wantKind, c.wantModel)
		}
	}
}

// A trace that fails while the store answers is said under the first
// look, not left as "tracing…".
func TestIncidentsTraceFailureIsShown(t *testing.T) {
	a, next := firstLook(t)
	if nextLoad(t, next) == nil {
		t.Fatal("the first look did not ask for the traced report")
	}
	v := a.top().(*incidentsView)
	a.Update(loaded[*gate.IncidentReport]{view: v.id, gen: v.gen, err: errors.New("reading the blocked units: disk I/O error")})
	frame := ansi.Strip(a.render())
	if !strings.Contains(frame, "the trace failed: reading the blocked units: disk I/O error") || strings.Contains(frame, "tracing 9") {
		t.Errorf("the failed trace is not said:\n%s", frame)
	}
	if !strings.Contains(frame, "raw.orders failed") {
		t.Errorf("the first look's cards are gone:\n%s", frame)
	}
}

// firstLook is a UI on newWorld at 100×24, opened as the product opens,
// that has taken its first load's answer (the first look) and not yet the
// trace it asked for; next runs that load.
func firstLook(t *testing.T) (a *App, next tea.Cmd) {
	t.Helper()
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	a.width, a.height = 100, 24
	_, next = a.Update(a.startLoad(a.top())())
	return a, next
}

// A load that runs out of loadTimeout is taken for a hung store and retried
// under the banner; a whole-platform load (the trace, the Blocked queue)
// that runs out of its longer bound while the store answers is an error
// that says so, not a retry loop.
func TestLoadOutOfTimeIsDownOnlyUnderTheShortBound(t *testing.T) {
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	slow := func(context.Context) (int, error) { return 0, fmt.Errorf("reading: %w", context.DeadlineExceeded) }
	var down storeDownError
	_, shortErr := loadCmd(a.common, 1, 1, slow)().(loaded[int]).answer()
	if !errors.As(shortErr, &down) {
		t.Errorf("out of loadTimeout: %v, want the store-down retry", shortErr)
	}
	_, longErr := loadCmdWithin(a.common, 1, 1, wholeLoadTimeout, slow)().(loaded[int]).answer()
	if errors.As(longErr, &down) || longErr == nil || !strings.Contains(longErr.Error(), "not done within 10m0s") {
		t.Errorf("out of wholeLoadTimeout: %v, want an error naming the bound, not a store-down retry", longErr)
	}
}

// A long report scrolls by whole cards: with 50 cards of 3 lines each (the
// title, the error, what waits) and 19 lines for them, the selected 31st
// card is the last of the 6 that fit (25 + 6 = 31), so the screen starts
// at the 26th and says 25 are above.
func TestIncidentsScrollByWholeCards(t *testing.T) {
	a := benchApp(t)
	v := newIncidents(a.common)
	v.id = 1
	rep := &gate.IncidentReport{}
	for i := range 50 {
		rep.Incidents = append(rep.Incidents, gate.Incident{Kind: gate.IncidentFailed, Model: fmt.Sprintf("raw.m%02d", i), Detail: "boom"})
	}
	v.update(loaded[*gate.IncidentReport]{view: 1, data: rep})
	v.loaded = true
	v.cur.move(30)
	lines := v.render(80, 20)
	for i, l := range lines {
		lines[i] = ansi.Strip(l)
	}
	if !strings.Contains(lines[0], "raw.m25 failed") || strings.Contains(lines[0], "›") {
		t.Errorf("the screen does not start at the 26th card:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(lines[15], "›") || !strings.Contains(lines[15], "raw.m30 failed") {
		t.Errorf("the selected 31st card is not the last on screen:\n%s", strings.Join(lines, "\n"))
	}
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "50 incidents") || !strings.Contains(foot, "25 above") {
		t.Errorf("foot %q, want 50 incidents, 25 above", foot)
	}
}

// A first look read before the program (Options.FirstLook) is the landing
// view's first answer, without a read of its own — the report given names a
// model the store does not have, so only it can put that card on screen —
// and the trace that follows reads the store and replaces it.
func TestIncidentsOpenOnAFirstLookReadBeforeTheProgram(t *testing.T) {
	w := newWorld(t)
	given := &gate.IncidentReport{Glance: true, Now: uiClock, Tracing: 9, TracingModels: 4,
		Incidents: []gate.Incident{{Kind: gate.IncidentFailed, Model: "raw.elsewhere", Units: 3, Detail: "read before the program"}}}
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", FirstLook: given}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	a.width, a.height = 100, 24
	_, next := a.Update(a.startLoad(a.top())())
	first := ansi.Strip(a.render())
	if !strings.Contains(first, "raw.elsewhere failed") || !strings.Contains(first, "read before the program") {
		t.Fatalf("the first look given is not on screen:\n%s", first)
	}
	traced := nextLoad(t, next)
	if traced == nil {
		t.Fatal("the first look given did not ask for the traced report")
	}
	a.Update(traced)
	frame := ansi.Strip(a.render())
	if strings.Contains(frame, "raw.elsewhere") || !strings.Contains(frame, "raw.orders failed") || strings.Contains(frame, "first look") {
		t.Errorf("the trace did not replace the first look given with the store's report:\n%s", frame)
	}
}
