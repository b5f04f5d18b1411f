package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state/sqlite"
)

// The scale of BenchmarkUIScale, from the environment as scripts/bench
// sets it: BOLLHAV_BENCH_MODELS models (default 1,000) and units at 10k,
// 100k and 1M up to BOLLHAV_BENCH_UNITS (default 100,000, so a plain
// `go test -bench .` stays quick; scripts/bench asks for 1,000,000).
const (
	scaleSeed         = 1
	scaleDefaultUnits = 100_000
	scaleWidth        = 160
	scaleHeight       = 48
)

// scaleSizes are the unit counts to run, smallest first: those of 10k,
// 100k and 1M up to the maximum asked for, and the maximum itself when it
// is none of them.
func scaleSizes(b *testing.B) (models int, units []int) {
	models = envInt(b, "BOLLHAV_BENCH_MODELS", 1000)
	most := envInt(b, "BOLLHAV_BENCH_UNITS", scaleDefaultUnits)
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		if n <= most {
			units = append(units, n)
		}
	}
	if len(units) == 0 || units[len(units)-1] != most {
		units = append(units, most)
	}
	return models, units
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// unitsLabel names a size as the sub-benchmark does: 10k, 100k, 1M.
func unitsLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// BenchmarkUIScale is the UI over a generated SQLite store
// (engine/enginetest/gen: BOLLHAV_BENCH_MODELS models, units at each size
// of scaleSizes), on a 160×48 terminal, on two screens: the pipelines view
// and the model view of the model with the most units. The store of a size
// is generated once per process (per -count), when its units=… benchmark
// starts — a benchmark with sub-benchmarks runs its body once — and
// removed when that ends. Per screen:
//
//   - load: the screen's load as the program runs it (the tea.Cmd that
//     reads the store, off the event loop) until its loaded answer exists. No
//     goal of its own; it is what the user waits for before the first
//     frame, reported so the two can be added up.
//   - first-frame: from the first loaded answer arriving at Update, on a
//     fresh UI that has asked for that load and drawn nothing yet, to the
//     first View() string that shows the data (Update and View; the
//     terminal's own drawing is not counted). Goal 100 ms.
//   - cursor-move: one key press (down twenty rows, then up twenty, and
//     again, turning early at either end so every press moves the cursor)
//     through Update, then View(). Goal 16 ms, one frame at 60 Hz.
//
// and peak-rss: the process's peak resident set (VmHWM) while the size's
// screens were loaded and drawn, reported as peak-MB (goal 300 MB). They
// load under MemoryLimit, the soft memory limit the UI process runs
// under (unless GOMEMLIMIT sets another, for both): without it the heap
// grows to twice what is live while the Blocked view's load churns
// (324–340 MB at 10M), which no UI process does. The high-water mark is
// reset (/proc/self/clear_refs) after the store is generated, so the
// generator's own memory, which no UI process has, is not counted;
// gen-peak-MB is the peak before that reset, generator included. The Go
// runtime's memory is returned to the system at the reset, so what
// remains is what a UI process holds: the binary, the SQLite connections
// and what the screens loaded.
func BenchmarkUIScale(b *testing.B) {
	models, sizes := scaleSizes(b)
	for _, units := range sizes {
		b.Run("units="+unitsLabel(units), func(b *testing.B) {
			dir := b.TempDir()
			e, biggest, genPeak := scaleEngine(b, dir, models, units)
			resetPeakRSS(b)
			underUIMemoryLimit(b) // the generator ran without it
			b.Run("launch-to-first-frame", func(b *testing.B) {
				benchLaunch(b, dir, models, "")
			})
			for _, view := range []string{"pipelines", "model", "blocked"} {
				b.Run("view="+view, func(b *testing.B) {
					benchScaleView(b, e, view, biggest)
				})
			}
			b.Run("peak-rss", func(b *testing.B) {
				peak := peakRSSMB(b)
				for b.Loop() {
				}
				b.ReportMetric(peak, "peak-MB")
				if genPeak > 0 {
					b.ReportMetric(genPeak, "gen-peak-MB")
				}
			})
		})
	}
}

// underUIMemoryLimit loads b's screens under the UI process's soft memory
// limit, as the UI that shows them does (unless GOMEMLIMIT sets one, as it
// would the UI's), and gives the process its limit back when b ends.
func underUIMemoryLimit(b *testing.B) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	was := debug.SetMemoryLimit(MemoryLimit)
	b.Cleanup(func() { debug.SetMemoryLimit(was) })
}

// scaleEngine generates a store of models and units in dir (state.db)
// and returns the engine over it (the generated spec, its clock at
// gen.AsOf), the model with the most units, and the process's peak RSS in
// MB after generating (0 when unknown).
func scaleEngine(b *testing.B, dir string, models, units int) (*engine.Engine, string, float64) {
	b.Helper()
	ctx := b.Context()
	path := filepath.Join(dir, "state.db")
	cfg := gen.Config{Models: models, Units: units, Seed: scaleSeed}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	_, sum, err := gen.Populate(ctx, s, engine.Options{Actor: "bench"}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d models, %d units in %s", sum.Models, sum.Units, sum.Elapsed.Round(1e6))
	// Closed and opened again, as a UI process finds a store at rest: the
	// close checkpoints the write-ahead log, which the population left at
	// gigabytes of frames every read would look through (at 10M units the
	// Blocked view's load took 2.2 s over it, 1.5 s over the store at
	// rest), as the PostgreSQL fixture is vacuumed.
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = sqlite.Open(ctx, path); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	e, _, err := gen.Attach(s, engine.Options{Actor: "bench"}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	st, err := e.Status(ctx)
	if err != nil {
		b.Fatal(err)
	}
	biggest, most := "", -1
	for _, m := range st {
		if n := m.Units(); n > most {
			biggest, most = m.Name, n
		}
	}
	b.Logf("the biggest model: %s, %d units", biggest, most)
	return e, biggest, peakRSSMBOrZero()
}

// scaleApp is a fresh UI on e showing view, sized, that has asked for its
// first load and drawn nothing yet; cmd is that load.
func scaleApp(b *testing.B, e *engine.Engine, view, model string) (a *App, cmd tea.Cmd) {
	opts := Options{Theme: "dark", View: view}
	if view == "model" {
		opts.Model = model
	}
	a, err := newApp(b.Context(), e, withDefaults(opts), standardRenderers())
	if err != nil {
		b.Fatal(err)
	}
	a.width, a.height = scaleWidth, scaleHeight
	cmd = a.startLoad(a.top())
	if cmd == nil {
		b.Fatal("no first load")
	}
	return a, cmd
}

func benchScaleView(b *testing.B, e *engine.Engine, view, model string) {
	// The first load's message, read once: every first frame takes it.
	_, cmd := scaleApp(b, e, view, model)
	msg, ok := cmd().(loadResult)
	if !ok {
		b.Fatalf("the first load of the %s view: not a load's answer", view)
	}
	if _, err := msg.answer(); err != nil {
		b.Fatalf("the first load of the %s view: %v", view, err)
	}
	b.Run("load", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			_, cmd := scaleApp(b, e, view, model)
			b.StartTimer()
			if _, err := cmd().(loadResult).answer(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("first-frame", func(b *testing.B) {
		var frame string
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			a, _ := scaleApp(b, e, view, model)
			b.StartTimer()
			a.Update(msg)
			frame = a.View().Content
		}
		b.StopTimer()
		checkScaleFrame(b, frame, view, model)
	})
	b.Run("cursor-move", func(b *testing.B) {
		a, _ := scaleApp(b, e, view, model)
		a.Update(msg)
		first := a.View().Content
		checkScaleFrame(b, first, view, model)
		c := scaleCursor(a)
		down, up := tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyUp}
		k, run := down, 0
		moved := false
		for b.Loop() {
			// Twenty rows one way, then back, turning early at either end,
			// so every press moves the cursor.
			if run == 20 || k == down && c.pos >= c.n-1 || k == up && c.pos == 0 {
				run = 0
				if k == down {
					k = up
				} else {
					k = down
				}
			}
			a.Update(k)
			run++
			moved = a.View().Content != first || moved
		}
		if !moved {
			b.Fatal("no cursor move changed the frame")
		}
	})
}

// scaleCursor is the cursor of the view on top.
func scaleCursor(a *App) *cursor {
	switch v := a.top().(type) {
	case *pipelinesView:
		return &v.cur
	case *modelView:
		return &v.cur
	case *blockedView:
		return &v.cur
	}
	panic("no cursor on this view")
}

// checkScaleFrame fails b unless frame shows the view's data: the model
// view names its model and lists units, the pipelines view counts models.
func checkScaleFrame(b *testing.B, frame, view, model string) {
	b.Helper()
	want := []string{"MODEL", "pipelines"}
	switch view {
	case "model":
		want = []string{model, "WINDOW"}
	case "blocked":
		want = []string{"HOLDS", "WINDOW"}
	}
	for _, w := range want {
		if !strings.Contains(frame, w) {
			b.Fatalf("the %s view's frame lacks %q:\n%s", view, w, frame)
		}
	}
}

// resetPeakRSS returns the Go heap's free memory to the system and resets
// the process's peak RSS to what it holds now; it skips b where /proc does
// not allow it.
func resetPeakRSS(b *testing.B) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak RSS not reset (%v): peak-MB includes generating the store", err)
	}
}

// peakRSSMB is the process's peak resident set (VmHWM) in MB.
func peakRSSMB(b *testing.B) float64 {
	mb, err := readPeakRSS()
	if err != nil {
		b.Skipf("no peak RSS: %v", err)
	}
	return mb
}

func peakRSSMBOrZero() float64 {
	mb, _ := readPeakRSS()
	return mb
}

func readPeakRSS() (float64, error) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return vmHWM(raw)
}

// vmHWM reads the peak resident set (VmHWM) in MB from a /proc status file.
func vmHWM(raw []byte) (float64, error) {
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return float64(kb) / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in the process's status")
}
