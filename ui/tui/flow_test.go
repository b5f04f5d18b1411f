package tui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// selectedLine is the line the cursor is on ("›" first).
func selectedLine(frame string) string {
	for _, l := range strings.Split(frame, "\n") {
		if strings.HasPrefix(l, "›") {
			return l
		}
	}
	return ""
}

// TestDrillDownToTheBlockingUpstream walks pipelines → model → unit (why)
// → its blocking upstream with enter alone, and again with b.
func TestDrillDownToTheBlockingUpstream(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)

	// The cursor starts on raw.orders; mart.daily is two rows down, past
	// the core heading.
	r.keys("down", "down")
	r.waitFor(t, "the cursor on mart.daily", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "mart.daily")
	})
	r.keys("enter")
	f := r.waitSettled(t, viewModel)
	if !strings.Contains(f, "Pipelines › mart.daily") || !strings.Contains(selectedLine(f), "2026-01-01") {
		t.Fatalf("the model view of mart.daily with its blocked day selected:\n%s", f)
	}

	r.keys("enter")
	f = r.waitSettled(t, viewWhy)
	if !strings.Contains(f, "mart.daily 2026-01-01  ⊘ blocked") || !strings.Contains(selectedLine(f), "→ raw.orders 2026-01-01 05:00–06:00") {
		t.Fatalf("why mart.daily with the blocking link selected:\n%s", f)
	}

	r.keys("enter")
	f = r.waitView(t, viewWhy, "why raw.orders 2026-01-01 05:00–06:00")
	if !strings.Contains(f, "error: exit status 3: source unavailable") {
		t.Errorf("the failed upstream unit shows its error:\n%s", f)
	}

	// Back, then the same jump with b.
	r.keys("esc")
	r.waitView(t, viewWhy, "why mart.daily")
	r.keys("b")
	r.waitView(t, viewWhy, "why raw.orders 2026-01-01 05:00–06:00")
	// esc all the way back to the pipelines, and no further.
	r.keys("esc", "esc", "esc", "esc", "esc")
	r.waitSettled(t, viewPipelines)
}

// TestRunFromTheDialogLandsInTheStore: the source is fixed, the operator
// runs the failed hour from the model view, and the store has it applied.
func TestRunFromTheDialogLandsInTheStore(t *testing.T) {
	w, r := startFixed(t, Options{View: "model", Model: "raw.orders"}, viewModel)
	r.keys("r")
	r.waitText(t, "Run 1 unit of raw.orders in prod?", "[ Cancel ]")
	// Enter on the default button cancels.
	r.keys("enter")
	r.waitFor(t, "the dialog closed", func(f string, _ viewKind) bool { return !strings.Contains(f, "STATE_MODE") })
	if c := w.counts(t, "raw.orders"); c[state.Failed] != 2 {
		t.Fatalf("cancel ran something: %v", c)
	}

	r.keys("r")
	r.waitText(t, "Run 1 unit of raw.orders in prod?")
	r.keys("right")
	r.waitText(t, "[ Run ]")
	r.keys("enter")
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed: -race on a busy machine is slow
	for w.counts(t, "raw.orders")[state.Applied] != 23 {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not land: %v", w.counts(t, "raw.orders"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The UI follows: the count and the outcome, without a key press.
	r.waitText(t, "✓ 23 applied", "✗ 1 failed")
	r.waitText(t, "run 4 succeeded (w opens it): bulldozer")
	runs, err := w.s.Runs(context.Background(), "", 10)
	if err != nil || len(runs) != 4 || runs[0].StateMode != "bulldozer" || runs[0].Window != hours(5, 6) {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	// The runs view lists it.
	r.keys("3")
	r.waitText(t, "Started here", "run 4 done")
}

// TestTorchConfirmedByTypingTheName: a torch is confirmed only by the
// model's exact name, and then runs.
func TestTorchConfirmedByTypingTheName(t *testing.T) {
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, Options{View: "model", Model: "mart.hourly"})
	r.waitSettled(t, viewModel)
	r.keys("R", "tab", "tab")
	r.waitText(t, "[torch]", "Type its name to confirm", "delete    24 units")
	r.typeText("mart.hourly")
	r.keys("enter")
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed: -race on a busy machine is slow
	for {
		runs, err := w.s.Runs(context.Background(), "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 4 && runs[0].StateMode == "torch" && runs[0].Status != state.RunRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished torch run: %+v", runs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Torch rebuilt the contract range [start, 2026-01-03): 48 hours, of
	// which the 22 with raw.orders applied are applied again.
	c := w.counts(t, "mart.hourly")
	total := 0
	for _, n := range c {
		total += n
	}
	if total != 48 || c[state.Applied] != 22 {
		t.Errorf("after the torch mart.hourly has %v", c)
	}
	r.waitText(t, "48 of 48")
}

// TestTorchCancelledChangesNothing: a wrong name, an empty field and esc
// all leave the store as it was.
func TestTorchCancelledChangesNothing(t *testing.T) {
	w := newWorld(t)
	before := w.counts(t, "mart.hourly")
	r := startUI(t, w.e, 80, 24, Options{View: "model", Model: "mart.hourly"})
	r.waitSettled(t, viewModel)
	r.keys("R", "tab", "tab")
	r.waitText(t, "[torch]", "Type its name to confirm", "delete    24 units")
	r.keys("enter")
	r.waitText(t, "type mart.hourly to confirm the torch")
	r.typeText("mart.hourl")
	r.keys("enter")
	r.waitText(t, `"mart.hourl" is not mart.hourly: nothing was done`)
	// Letters typed into the field are text, not commands: q did not quit,
	// r opened nothing.
	r.typeText("qr")
	r.waitText(t, "> mart.hourlqr")
	r.keys("esc")
	r.waitFor(t, "the dialog closed", func(f string, top viewKind) bool {
		return top == viewModel && !strings.Contains(f, "Type its name")
	})
	time.Sleep(200 * time.Millisecond)
	after := w.counts(t, "mart.hourly")
	for _, s := range state.Statuses {
		if before[s] != after[s] {
			t.Fatalf("a cancelled torch changed the store: %v → %v", before, after)
		}
	}
	runs, _ := w.s.Runs(context.Background(), "", 10)
	if len(runs) != 3 {
		t.Fatalf("a cancelled torch recorded a run: %+v", runs)
	}
}

// TestReadOnlyHidesActions: no action key, no help line, no dialog — and
// the engine refuses too.
func TestReadOnlyHidesActions(t *testing.T) {
	w := newWorld(t)
	r := startUI(t, w.e, 160, 48, Options{View: "model", Model: "raw.orders", ReadOnly: true})
	f := r.waitSettled(t, viewModel)
	for _, s := range []string{"run window", "run model", "mark applied", "mark pending"} {
		if strings.Contains(f, s) {
			t.Errorf("read-only footer offers %q:\n%s", s, f)
		}
	}
	if !strings.Contains(f, "read-only") {
		t.Errorf("the header says read-only:\n%s", f)
	}
	r.keys("r", "R", "a", "p")
	r.keys("?")
	f = r.waitText(t, "Keys — raw.orders")
	for _, s := range []string{"STATE_MODE", "run window", "mark applied", "mark pending"} {
		if strings.Contains(f, s) {
			t.Errorf("read-only: %q shows:\n%s", s, f)
		}
	}
	if !r.app.eng.ReadOnly() {
		t.Error("the UI's engine is not read-only")
	}
	if _, err := r.app.eng.Mark(context.Background(), "raw.orders", hours(5, 6), state.Applied); err == nil {
		t.Error("the read-only engine marked a unit")
	}
}

// TestAChangeByAnotherProcessAppears: another engine on the same SQLite
// file marks a unit; the UI shows it without a key press.
func TestAChangeByAnotherProcessAppears(t *testing.T) {
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, Options{})
	f := r.waitSettled(t, viewPipelines)
	if !strings.Contains(selectedLine(f), "✓ 22") {
		t.Fatalf("raw.orders starts with 22 applied:\n%s", f)
	}
	other, err := sqlite.Open(context.Background(), w.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	e2 := engine.New(other, w.e.Spec(), engine.Options{Actor: "other", Now: w.e.Clock})
	if n, err := e2.Mark(context.Background(), "raw.orders", hours(5, 6), state.Applied); err != nil || n != 1 {
		t.Fatalf("mark from another engine: %d, %v", n, err)
	}
	r.waitFor(t, "raw.orders with 23 applied", func(f string, _ viewKind) bool {
		l := selectedLine(f)
		return strings.Contains(l, "raw.orders") && strings.Contains(l, "✓ 23") && strings.Contains(l, "✗ 1")
	})
}

// flakyStore fails every read while down, as a store whose connection is
// lost does.
type flakyStore struct {
	state.Store
	down atomic.Bool
}

func (s *flakyStore) isDown() bool { return s.down.Load() }

var errLost = &lostError{}

type lostError struct{}

func (*lostError) Error() string { return "connection refused" }

func (s *flakyStore) SchemaVersion(ctx context.Context) (int, error) {
	if s.isDown() {
		return 0, errLost
	}
	return s.Store.SchemaVersion(ctx)
}

func (s *flakyStore) Models(ctx context.Context, env string) ([]state.ModelRecord, error) {
	if s.isDown() {
		return nil, errLost
	}
	return s.Store.Models(ctx, env)
}

func (s *flakyStore) Changes(ctx context.Context, after int64, limit int) ([]state.Change, error) {
	if s.isDown() {
		return nil, errLost
	}
	return s.Store.Changes(ctx, after, limit)
}

// TestLostConnectionShowsABannerAndRecovers: reads fail, a banner says so;
// the store comes back, the banner goes by itself.
func TestLostConnectionShowsABannerAndRecovers(t *testing.T) {
	w := newWorld(t)
	fs := &flakyStore{Store: w.s}
	e := engine.New(fs, w.e.Spec(), w.opts)
	r := startUI(t, e, 80, 24, Options{})
	r.waitSettled(t, viewPipelines)
	fs.down.Store(true)
	r.keys("1") // reload
	f := r.waitText(t, "⚠", "connection refused", "retrying by itself")
	if !strings.Contains(f, "raw.orders") {
		t.Errorf("the last data stays on screen under the banner:\n%s", f)
	}
	fs.down.Store(false)
	r.waitFor(t, "the banner gone", func(f string, _ viewKind) bool {
		return !strings.Contains(f, "⚠") && strings.Contains(f, "● live")
	})
}

// TestPaletteFilterAndEnv: : goes to a model, / filters, env switches the
// environment.
func TestPaletteFilterAndEnv(t *testing.T) {
	r, _ := startSettled(t, Options{}, viewPipelines)

	r.keys(":")
	r.typeText("model mart.dai")
	r.keys("tab") // completes to "model mart.daily "
	r.waitText(t, ":model mart.daily")
	r.keys("enter")
	r.waitFor(t, "the model view", func(f string, top viewKind) bool {
		return top == viewModel && strings.Contains(f, "Pipelines › mart.daily")
	})

	r.command("nonsense")
	r.waitText(t, `unknown command "nonsense"`)
	r.keys("esc")

	r.keys("1", "/")
	r.typeText("hourly")
	f := r.waitText(t, "/hourly")
	if strings.Contains(f, "raw.orders") || !strings.Contains(f, "mart.hourly") {
		t.Errorf("the filter keeps mart.hourly only:\n%s", f)
	}
	r.keys("enter", "esc") // keep, then esc clears the filter
	r.waitText(t, "raw.orders", "mart.hourly")

	r.command("env pr7")
	f = r.waitFor(t, "the pr7 environment", func(f string, top viewKind) bool {
		header, _, _ := strings.Cut(f, "\n")
		return top == viewPipelines && strings.Contains(header, " pr7 ") && strings.Contains(f, "raw.orders") &&
			!strings.Contains(f, ":env")
	})
	if !strings.Contains(selectedLine(f), "?") {
		t.Errorf("in pr7 nothing is registered: models show as missing:\n%s", f)
	}
	r.command("env prod")
	r.waitFor(t, "back in prod", func(f string, _ viewKind) bool {
		header, _, _ := strings.Cut(f, "\n")
		return strings.Contains(header, " prod ") && strings.Contains(f, "✓ 22")
	})
}

// TestSharedFeed: two UIs on one Feed both follow a change, and a UI that
// ends leaves the feed.
func TestSharedFeed(t *testing.T) {
	w := newWorld(t)
	feed, err := NewFeed(t.Context(), w.e, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	r1 := startUI(t, w.e, 80, 24, Options{Feed: feed})
	ctx2, end2 := context.WithCancel(t.Context())
	defer end2()
	app2, err := newApp(ctx2, w.e, withDefaults(Options{Theme: "none", Feed: feed, View: "pipelines"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	app2.frames = &frameRecorder{}
	r2 := &uiRun{tm: nil, app: app2, frames: app2.frames}
	tm2 := startProgram(t, app2, 80, 24)
	r2.tm = tm2
	r1.waitSettled(t, viewPipelines)
	r2.waitSettled(t, viewPipelines)
	feed.mu.Lock()
	n := len(feed.subs)
	feed.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d subscribers, want 2", n)
	}
	if _, err := w.e.Mark(context.Background(), "raw.orders", hours(5, 6), state.Applied); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*uiRun{r1, r2} {
		r.waitFor(t, "23 applied", func(f string, _ viewKind) bool { return strings.Contains(selectedLine(f), "✓ 23") })
	}
	end2()
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed: -race on a busy machine is slow
	for {
		feed.mu.Lock()
		n = len(feed.subs)
		feed.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ended UI did not leave the feed: %d subscribers", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAuditView: 4 and the palette's "audit" open the audit log, newest
// first, with the viewer's refusal marked; it follows what is done
// meanwhile without a key press, a refusal included (which moves no unit).
func TestAuditView(t *testing.T) {
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, Options{})
	r.waitSettled(t, viewPipelines)
	r.keys("4")
	f := r.waitSettled(t, viewAudit)
	if !strings.Contains(f, "Pipelines › Audit") || !strings.Contains(selectedLine(f), "⊘") ||
		!strings.Contains(selectedLine(f), "alice (nThb…)") || !strings.Contains(selectedLine(f), "refused: read-only") {
		t.Fatalf("the audit view with the newest entry, the refusal, selected:\n%s", f)
	}
	// The whole of the selected entry shows under the list, its actor as
	// the record has it.
	if !strings.Contains(f, "2026-01-03 00:00:00Z · mark · alice (nThb…)") || !strings.Contains(f, "by "+viewerActor) {
		t.Errorf("the detail of the selected entry:\n%s", f)
	}

	// Back to the pipelines, and the palette's audit.
	r.keys("1")
	r.waitSettled(t, viewPipelines)
	r.command("audit")
	r.waitSettled(t, viewAudit)

	// Another session's refusal: no unit moves, so no change, but the view
	// shows it on its timer.
	viewer := w.e.As("ssh:bob", true)
	if _, err := viewer.Mark(context.Background(), "mart.daily", state.Window{Since: t0, Until: t0.Add(24 * time.Hour)}, state.Pending); err == nil {
		t.Fatal("a read-only mark was not refused")
	}
	// 7 entries before it: the registration of the first run (later runs
	// changed no registration, so theirs add none), the 3 runs, the 3 marks.
	f = r.waitText(t, "ssh:bob", "8 entries")
	if !strings.Contains(selectedLine(f), "alice (nThb…)") {
		t.Errorf("the cursor stays on the entry it was on:\n%s", f)
	}
	r.keys("up")
	r.waitFor(t, "the cursor on bob's refusal", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "ssh:bob") && strings.Contains(selectedLine(f), "⊘")
	})
	// A mark that moves units comes through the change feed.
	if _, err := w.e.Mark(context.Background(), "raw.orders", hours(5, 6), state.Applied); err != nil {
		t.Fatal(err)
	}
	r.waitText(t, "ok: 1 units")
}

// TestUpstreamFromTheModelView: u on a blocked window of mart.hourly opens
// raw.orders on the window the contract needs, not on its first unit that
// is not applied; on a window nothing holds back it says so.
func TestUpstreamFromTheModelView(t *testing.T) {
	r, _ := startSettled(t, Options{View: "model", Model: "mart.hourly"}, viewModel)
	// The cursor starts on 05:00, blocked; 06:00 is applied, 07:00 blocked.
	r.waitFor(t, "the cursor on 05:00", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "2026-01-01 05:00–06:00")
	})
	r.keys("down")
	r.waitFor(t, "the cursor on 06:00", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "2026-01-01 06:00–07:00")
	})
	pressUntil(t, r, "u", "nothing upstream holds this window back")
	r.keys("down")
	r.waitFor(t, "the cursor on 07:00", func(f string, _ viewKind) bool {
		return strings.Contains(selectedLine(f), "2026-01-01 07:00–08:00")
	})
	pressUntil(t, r, "u", "Pipelines › mart.hourly › raw.orders")
	f := r.waitView(t, viewModel, "raw.orders")
	if !strings.Contains(selectedLine(f), "2026-01-01 07:00–08:00") {
		t.Fatalf("raw.orders with the window mart.hourly 07:00 needs selected (not 05:00):\n%s", f)
	}
	// esc goes back to mart.hourly, where the cursor was.
	r.keys("esc")
	f = r.waitView(t, viewModel, "mart.hourly")
	if !strings.Contains(selectedLine(f), "2026-01-01 07:00–08:00") {
		t.Errorf("back on mart.hourly at 07:00:\n%s", f)
	}
}

// pressUntil presses k until the screen shows want: a key whose answer
// needs data that arrives after the cursor rests (the model view's gate).
func pressUntil(t *testing.T, r *uiRun, k, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang, not a speed: -race on a busy machine is slow
	for {
		if f, _, _ := r.frames.last(); strings.Contains(f, want) {
			return
		}
		if time.Now().After(deadline) {
			f, _, _ := r.frames.last()
			t.Fatalf("pressing %s did not show %q:\n%s", k, want, f)
		}
		r.keys(k)
		time.Sleep(300 * time.Millisecond)
	}
}
