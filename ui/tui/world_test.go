package tui

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// worldSpec is five models of the lineage engine and gate tests draw
// (enginetest.LineageSpec; times are 2026-01-01):
//
//	raw.orders (1h, ingest) — its command fails for hours 05 and 07 until a
//	file "fixed" exists in the spec directory
//	├─ ENCAPSULATE mart.daily (1d, core)
//	│  └─ WHOLE report.snapshot (timeless, reports)
//	├─ ENCAPSULATE mart.hourly (1h, core)
//	└─ ENCAPSULATE + freshness 1h LATEST mart.fresh (1h, core)
var worldSpec = enginetest.LineageSpecOf("raw.orders", "mart.daily", "mart.hourly", "mart.fresh", "report.snapshot")

// viewerActor is the actor of the world's read-only viewer, as an SSH
// session names it (ui/serve's Actor: the key's fingerprint, then the user).
const viewerActor = "ssh:SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 alice"

var (
	t0       = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rawClock = t0.Add(24 * time.Hour) // raw.orders is loaded on 2026-01-02
	uiClock  = t0.Add(48 * time.Hour) // everything else, and the UI, on 2026-01-03
)

func hours(a, b int) state.Window {
	return state.Window{Since: t0.Add(time.Duration(a) * time.Hour), Until: t0.Add(time.Duration(b) * time.Hour)}
}

// world is a real SQLite store seeded by real engine runs, and the engine
// the UI is tested on.
type world struct {
	e *engine.Engine
	// s is e's store, for fixtures and checks that read it directly, and
	// opts e's options, for an engine over another store.
	s       state.Store
	opts    engine.Options
	path    string
	specDir string
}

// newWorld builds worldSpec's state with real runs:
//
//	raw.orders       day 0: 22 hours applied (at 2026-01-02), 05 and 07 failed
//	mart.daily       day 0 blocked (raw missing 05–06, 07–08)
//	mart.hourly      day 0: 22 applied, 05 and 07 blocked
//	mart.fresh       hours 00–04 of day 0: blocked, stale (raw applied 24h ago, within 1h)
//	report.snapshot  blocked (WHOLE: mart.daily)
func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOf(t, worldSpec)
}

// newWorldOf is newWorld over specText, a variant of worldSpec with the
// same models (the tests that need raw.orders' command to behave
// otherwise).
func newWorldOf(t *testing.T, specText string) *world {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sp, err := spec.Parse("bollhav.yaml", []byte(specText))
	if err != nil {
		t.Fatal(err)
	}
	clock := rawClock
	var mu sync.Mutex
	opts := engine.Options{SpecDir: dir, Actor: "test", Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}}
	e := engine.New(s, sp, opts)
	ctx := t.Context()
	day0 := state.Window{Since: t0, Until: t0.Add(24 * time.Hour)}
	run := func(models []string, w state.Window) {
		t.Helper()
		seeder := engine.New(pinnedRunTimes{Store: s, now: e.Clock}, sp, opts)
		if _, err := seeder.Run(ctx, engine.RunRequest{Models: models, Window: &w}, seeder.Executor(), nil); err != nil {
			t.Fatal(err)
		}
	}
	run([]string{"raw.orders"}, day0)
	mu.Lock()
	clock = uiClock
	mu.Unlock()
	run([]string{"mart.daily", "mart.hourly", "report.snapshot"}, day0)
	run([]string{"mart.fresh"}, hours(0, 5))
	opts.Now = func() time.Time { return uiClock }
	e = engine.New(s, sp, opts)
	// The audit log, past the runs: a mark that moves nothing, a mark the
	// engine refuses as wrong (running is the run loop's), and a viewer's
	// mark refused under read-only.
	if n, err := e.Mark(ctx, "mart.fresh", hours(10, 11), state.Pending); err != nil || n != 0 {
		t.Fatalf("mark: %d, %v", n, err)
	}
	if _, err := e.Mark(ctx, "raw.orders", hours(5, 6), state.Running); err == nil {
		t.Fatal("a mark to running was not refused")
	}
	viewer := e.As(viewerActor, true)
	if _, err := viewer.Mark(ctx, "raw.orders", hours(5, 6), state.Applied); !errors.Is(err, engine.ErrReadOnly) {
		t.Fatalf("a read-only mark: %v", err)
	}
	return &world{e: e, s: s, opts: opts, path: path, specDir: dir}
}

// pinnedRunTimes is the world's store while its runs are seeded: the
// engine times a run and its tasks with the wall clock from the run's
// start (so none takes 0s), and the goldens need the times the same on
// every machine, so the seeded runs' record is pinned to the engine's
// clock. Only the run log's times are touched; units and their outcomes
// go to the store as the engine writes them.
type pinnedRunTimes struct {
	state.Store
	now func() time.Time
}

func (p pinnedRunTimes) CreateRun(ctx context.Context, r state.Run) (int64, error) {
	r.StartedAt = p.now()
	return p.Store.CreateRun(ctx, r)
}

func (p pinnedRunTimes) FinishRun(ctx context.Context, id int64, status state.RunStatus, _ time.Time) error {
	return p.Store.FinishRun(ctx, id, status, p.now())
}

func (p pinnedRunTimes) StartTask(ctx context.Context, runID int64, taskID int, _ time.Time) (int, error) {
	return p.Store.StartTask(ctx, runID, taskID, p.now())
}

func (p pinnedRunTimes) FinishTask(ctx context.Context, entry state.TaskRunEntry) error {
	at := p.now()
	entry.StartedAt, entry.FinishedAt = at, &at
	return p.Store.FinishTask(ctx, entry)
}

// counts is a model's units by status, read from the store.
func (w *world) counts(t *testing.T, model string) map[state.UnitStatus]int {
	t.Helper()
	st, err := w.s.Stats(context.Background(), "", model)
	if err != nil {
		t.Fatal(err)
	}
	return st.Counts
}

// ui is a running program under teatest, with its frames recorded.
type uiRun struct {
	tm     *teatest.TestModel
	app    *App
	frames *frameRecorder
	// seen is the index of the frame the previous wait matched: the next
	// wait looks at it and every frame drawn after it, so a message shown
	// for a moment is found however soon the next frame replaced it.
	seen int
}

// startUI runs the UI on e at w×h with the "none" theme, on the pipelines
// view unless opts names another (startLanding opens as the product does).
func startUI(t *testing.T, e *engine.Engine, w, h int, opts Options) *uiRun {
	t.Helper()
	opts.View = cmp.Or(opts.View, string(viewPipelines))
	return startLanding(t, e, w, h, opts)
}

// startSettled starts the UI at 80×24 over a fresh world (newWorld), opened
// as opts says, and waits for view k, settled: where the tests that need no
// more of the world begin. It returns the run and its settled frame.
func startSettled(t *testing.T, opts Options, k viewKind) (*uiRun, string) {
	t.Helper()
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, opts)
	return r, r.waitSettled(t, k)
}

// startFixed is startSettled over a world whose source is fixed (the file
// "fixed" in its spec directory), so raw.orders' failed hours load when
// run again; it returns the world too, for its store.
func startFixed(t *testing.T, opts Options, k viewKind) (*world, *uiRun) {
	t.Helper()
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.specDir, "fixed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := startUI(t, w.e, 80, 24, opts)
	r.waitSettled(t, k)
	return w, r
}

// startLanding runs the UI as startUI does, but with opts.View as given:
// empty opens on the incidents, or on the pipelines when all is clear.
func startLanding(t *testing.T, e *engine.Engine, w, h int, opts Options) *uiRun {
	t.Helper()
	if opts.Theme == "" {
		opts.Theme = "none"
	}
	opts.FeedPoll = 100 * time.Millisecond
	app, err := newApp(t.Context(), e, withDefaults(opts), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	app.frames = &frameRecorder{}
	return &uiRun{tm: startProgram(t, app, w, h), app: app, frames: app.frames}
}

// startProgram runs app under teatest at w×h until the test ends.
func startProgram(t *testing.T, app *App, w, h int) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	return tm
}

// waitFor waits until a frame drawn since the previous wait (that one
// included) satisfies cond, and returns the first that does.
func (r *uiRun) waitFor(t *testing.T, what string, cond func(frame string, top viewKind) bool) string {
	t.Helper()
	return r.waitFrame(t, what, 60*time.Second, func(f recordedFrame) bool { return cond(f.plain, f.top) })
}

// waitFrame is every wait's loop: it looks through the frames drawn since
// the previous wait (that one included) for the first that satisfies cond,
// and fails after limit (a bound on a hang, not a speed) with the newest
// frame. Looking through the history rather than at the newest frame is
// what makes a test independent of the machine's speed: a fast run replaces
// a transient toast before a poll would see it.
func (r *uiRun) waitFrame(t *testing.T, what string, limit time.Duration, cond func(recordedFrame) bool) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	next := r.seen
	for {
		frames, from := r.frames.since(next)
		for k, f := range frames {
			if cond(f) {
				r.seen = from + k
				return f.plain
			}
		}
		next = from + len(frames)
		if time.Now().After(deadline) {
			frame, _, _ := r.frames.last()
			t.Fatalf("waiting for %s; the screen shows:\n%s", what, frame)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitText waits until the screen shows every string.
func (r *uiRun) waitText(t *testing.T, want ...string) string {
	t.Helper()
	return r.waitFor(t, strings.Join(want, ", "), func(f string, _ viewKind) bool {
		for _, s := range want {
			if !strings.Contains(f, s) {
				return false
			}
		}
		return true
	})
}

// waitSettled waits until the top view is k, loaded (past the incidents'
// first look, too), and the feed is live.
func (r *uiRun) waitSettled(t *testing.T, k viewKind) string {
	t.Helper()
	return r.waitFor(t, "a settled screen", func(f string, top viewKind) bool {
		return top == k && strings.Contains(f, "● live") && !strings.Contains(f, "loading…") && !strings.Contains(f, "first look:")
	})
}

// waitView waits, as waitFor does, for a frame whose top view is k with a
// title containing title, loaded.
func (r *uiRun) waitView(t *testing.T, k viewKind, title string) string {
	t.Helper()
	return r.waitFrame(t, "the view "+strconv.Quote(title), 60*time.Second, func(f recordedFrame) bool {
		return f.top == k && strings.Contains(f.title, title) && !strings.Contains(f.plain, "loading…")
	})
}

// keys sends key presses: a name ("enter", "esc", "down", "tab") or a
// single printable character.
func (r *uiRun) keys(names ...string) {
	for _, n := range names {
		r.tm.Send(keyPress(n))
	}
}

// namedKeys are the keys keyPress knows by name.
var namedKeys = map[string]tea.KeyPressMsg{
	"enter":     {Code: tea.KeyEnter},
	"esc":       {Code: tea.KeyEscape},
	"down":      {Code: tea.KeyDown},
	"up":        {Code: tea.KeyUp},
	"right":     {Code: tea.KeyRight},
	"left":      {Code: tea.KeyLeft},
	"tab":       {Code: tea.KeyTab},
	"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"backspace": {Code: tea.KeyBackspace},
}

func keyPress(n string) tea.KeyPressMsg {
	if k, ok := namedKeys[n]; ok {
		return k
	}
	r := []rune(n)[0]
	return tea.KeyPressMsg{Code: r, Text: n}
}

// typeText types s character by character.
func (r *uiRun) typeText(s string) { r.tm.Type(s) }

// command runs line in the command palette: ":", line typed, enter.
func (r *uiRun) command(line string) {
	r.keys(":")
	r.typeText(line)
	r.keys("enter")
}
