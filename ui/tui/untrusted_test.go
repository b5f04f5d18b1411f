package tui

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// hostileErr is what raw.leak's command writes to stderr: a title, a
// screen clear, concealed text and a clipboard write.
const hostileErr = "\x1b]0;TITLE\x07\x1b[2J\x1b[8mhidden\x1b]52;c;cm0gLXJmIH4=\x07"

// hostileShown is how the frame shows it: every escape as text.
const hostileShown = `\x1b]0;TITLE\x07\x1b[2J\x1b[8mhidden`

// TestStoredEscapesAreShownAsText: a unit's error holding escape sequences
// (its command's stderr), and an audit entry whose actor holds one (as a
// store written before actors were cleaned can), are drawn as text in the
// Incidents card, the why view's root cause, the Blocked list and its
// detail, and the audit log: every escape visible, and the terminal gets
// no concealed-text SGR from them — the stored text is cleaned before it is
// styled, so safeFrame, which keeps SGR, has none of theirs left to keep.
func TestStoredEscapesAreShownAsText(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	sp := enginetest.Parse(t, `models:
  - {name: raw.leak, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     run: {command: ["sh", "-c", "printf '\\033]0;TITLE\\007\\033[2J\\033[8mhidden\\033]52;c;cm0gLXJmIH4=\\007' >&2; exit 1"]}}
  - {name: mart.daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.leak, contract: encapsulate}], run: {command: ["true"]}}
`)
	opts := engine.Options{SpecDir: t.TempDir(), Actor: "eve\x1b[8m", Now: func() time.Time { return uiClock }}
	e := engine.New(s, sp, opts)
	day0, hour0 := state.Window{Since: t0, Until: t0.Add(24 * time.Hour)}, hours(0, 1)
	if _, err := e.Run(t.Context(), engine.RunRequest{Models: []string{"raw.leak"}, Window: &hour0}, e.Executor(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(t.Context(), engine.RunRequest{Models: []string{"mart.daily"}, Window: &day0}, e.Executor(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Mark(t.Context(), "raw.leak", hours(1, 2), state.Pending); err != nil {
		t.Fatal(err)
	}
	opts.Actor = "test"
	e = engine.New(s, sp, opts)

	// startLanding's program, but with a colour terminal's profile: the
	// renderer then writes the SGR the frame holds (it drops every style
	// for a terminal without colour), concealed text included.
	app, err := newApp(t.Context(), e, withDefaults(Options{Theme: "none", FeedPoll: 100 * time.Millisecond}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	app.frames = &frameRecorder{}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(160, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor)))
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	r := &uiRun{tm: tm, app: app, frames: app.frames}
	shows := func(what, frame string, want string, n int) {
		t.Helper()
		if strings.Count(frame, want) < n {
			t.Errorf("%s: %q is not shown %d time(s):\n%s", what, want, n, frame)
		}
	}
	frame := r.waitFor(t, "the Incidents card", func(f string, top viewKind) bool {
		return top == viewIncidents && strings.Contains(f, "raw.leak failed") && strings.Contains(f, "hidden") && !strings.Contains(f, "first look")
	})
	shows("the Incidents card", frame, hostileShown, 1)
	r.keys("enter")
	frame = r.waitFor(t, "the why view's root cause", func(f string, top viewKind) bool {
		return top == viewWhy && strings.Contains(f, "root cause") && strings.Contains(f, "hidden")
	})
	shows("the why view", frame, hostileShown, 1)
	r.keys("2")
	frame = r.waitFor(t, "the Blocked list and its detail", func(f string, top viewKind) bool {
		return top == viewBlocked && strings.Count(f, "hidden") >= 2 // the failed unit's line and its detail
	})
	shows("the Blocked view", frame, `\x1b[2J\x1b[8mhidden`, 2)
	r.keys("4")
	frame = r.waitFor(t, "the audit log", func(f string, top viewKind) bool {
		return top == viewAudit && strings.Contains(f, "eve")
	})
	shows("the audit log", frame, `eve\x1b[8m`, 2) // the list's row and the selected entry
	out, err := io.ReadAll(r.tm.Output())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllSubmatch(out, -1) {
		for _, p := range strings.FieldsFunc(string(m[1]), func(r rune) bool { return r == ';' || r == ':' }) {
			if p == "8" { // theme none: no colour whose argument could read 8
				t.Fatalf("the terminal got a concealed-text SGR %q", m[0])
			}
		}
	}
	// (The renderer clears the screen itself, so ESC [ 2 J is not looked for.)
	for _, seq := range []string{"\x1b]0;TITLE", "\x1b]52;"} {
		if strings.Contains(string(out), seq) {
			t.Errorf("the terminal got %q", seq)
		}
	}
}
