package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

func TestFitNeverWraps(t *testing.T) {
	cases := []struct {
		in   string
		w    int
		want string
	}{
		{"abc", 5, "abc  "},
		{"abcdef", 4, "abc…"},
		{"✓ applied", 3, "✓ …"},
		{"", 2, "  "},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		if got := fit(c.in, c.w); got != c.want {
			t.Errorf("fit(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
	if got := clipLeft("Pipelines › mart.daily › why", 10); got != "…› why" && width(got) != 10 {
		t.Errorf("clipLeft keeps the end: %q", got)
	}
	th := themes.Dark()
	styled := th.Status(themes.Failed).Render("failed units everywhere")
	if w := width(fit(styled, 10)); w != 10 {
		t.Errorf("fit of a styled string is %d cells, want 10", w)
	}
}

func TestRowAlignsColumns(t *testing.T) {
	cols := []column{{w: 3}, {w: 4, right: true}, {w: 0}}
	if got := row(12, cols, "ab", "7", "tail that is long"); got != "ab     7 ta…" {
		t.Errorf("row = %q", got)
	}
}

func TestWindowText(t *testing.T) {
	d := func(day, h int) time.Time { return time.Date(2026, 1, day, h, 0, 0, 0, time.UTC) }
	cases := []struct {
		w    state.Window
		want string
	}{
		{state.Window{Since: d(1, 5), Until: d(1, 6)}, "2026-01-01 05:00–06:00"},
		{state.Window{Since: d(1, 0), Until: d(2, 0)}, "2026-01-01"},
		{state.Window{Since: d(1, 0), Until: d(3, 0)}, "2026-01-01 – 2026-01-03"},
		{state.Window{Since: d(1, 18), Until: d(2, 0)}, "2026-01-01 18:00–24:00"},
		{state.Window{Since: d(1, 18), Until: d(2, 6)}, "2026-01-01 18:00 – 2026-01-02 06:00"},
		{state.Window{}, "(existence row)"},
	}
	for _, c := range cases {
		if got := windowText(c.w); got != c.want {
			t.Errorf("windowText(%s) = %q, want %q", c.w, got, c.want)
		}
	}
	ws := []state.Window{{Since: d(1, 5), Until: d(1, 6)}, {Since: d(1, 7), Until: d(1, 8)}, {Since: d(2, 1), Until: d(2, 2)}}
	if got := windowsText(ws); got != "2026-01-01 05:00–06:00, 07:00–08:00, 2026-01-02 01:00–02:00" {
		t.Errorf("windowsText = %q", got)
	}
}

func TestShortDuration(t *testing.T) {
	cases := map[time.Duration]string{
		0:                              "0s",
		12 * time.Second:               "12s",
		3*time.Minute + 5*time.Second:  "3m5s",
		5*time.Hour + 12*time.Minute:   "5h12m",
		49 * time.Hour:                 "2d1h",
		24 * time.Hour:                 "1d",
		time.Hour + 30*time.Second:     "1h",
		-2 * time.Hour:                 "in 2h",
		26*time.Hour + 59*time.Minute:  "1d2h",
		100*24*time.Hour + time.Minute: "100d",
	}
	for d, want := range cases {
		got := state.RoughDuration(d)
		if d < 0 {
			got = durationText(d)
		}
		if got != want {
			t.Errorf("state.RoughDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestCursorScrollsOnlyWhatIsVisible(t *testing.T) {
	c := cursor{}
	c.setLen(1000)
	c.setHeight(10)
	if f, to := c.visible(); f != 0 || to != 10 {
		t.Fatalf("visible %d..%d", f, to)
	}
	c.move(15)
	if f, to := c.visible(); c.pos != 15 || f != 6 || to != 16 {
		t.Fatalf("after move: pos %d, visible %d..%d", c.pos, f, to)
	}
	c.moveTo(999)
	if f, _ := c.visible(); f != 990 {
		t.Fatalf("at the end: offset %d", f)
	}
	c.scroll(-100)
	if f, _ := c.visible(); f != 890 || c.pos != 899 {
		t.Fatalf("the wheel drags the cursor: offset %d pos %d", f, c.pos)
	}
	c.jumpTo(500)
	c.setHeight(10)
	if f, _ := c.visible(); f != 495 {
		t.Fatalf("a jump lands mid-page: offset %d", f)
	}
	c.setLen(3)
	if c.pos != 2 {
		t.Fatalf("shrinking keeps the cursor in range: %d", c.pos)
	}
	if c.scrollHint() != "" {
		t.Errorf("a list that fits has no scroll hint")
	}
}

func TestLineInput(t *testing.T) {
	in := lineInput{prompt: "> "}
	for _, r := range "mart.hourly" {
		in.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	in.update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	in.update(tea.KeyPressMsg{Code: tea.KeyLeft})
	in.update(tea.KeyPressMsg{Code: 'X', Text: "X"})
	if in.Value() != "mart.hourXl" {
		t.Fatalf("value %q", in.Value())
	}
	in.update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	if in.Value() != "l" {
		t.Fatalf("ctrl+u: %q", in.Value())
	}
	in.update(tea.KeyPressMsg{Code: 'a', Mod: tea.ModCtrl, Text: ""})
	in.update(tea.PasteMsg{Content: "raw.\norders "})
	if in.Value() != "raw.orders l" {
		t.Fatalf("paste drops control characters: %q", in.Value())
	}
	in.update(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	if in.Value() != "l" {
		t.Fatalf("ctrl+w deletes the word before the cursor: %q", in.Value())
	}
	if got := width(in.view(themes.None(), 8)); got > 8 {
		t.Errorf("the field is %d cells, want at most 8", got)
	}
}

// BenchmarkPipelines1000 is the pipelines view of 1,000 models (a million
// units between them): the first frame after the data arrives, and a frame
// after a keystroke. Only the visible rows are drawn.
func BenchmarkPipelines1000(b *testing.B) {
	a := benchApp(b)
	v := a.top().(*pipelinesView)
	var models []engine.ModelStatus
	for i := range 1000 {
		counts := map[state.UnitStatus]int{state.Applied: 990, state.Pending: 5, state.Blocked: 3, state.Failed: 2, state.Running: 0}
		models = append(models, engine.ModelStatus{Name: fmt.Sprintf("schema_%02d.model_%04d", i%40, i), Pipeline: fmt.Sprintf("pipeline_%02d", i%40),
			Temporality: "temporal", Flexibility: "fix", Interval: "1h", Registered: true, Counts: counts})
	}
	sortModels(models)
	b.Run("first-frame", func(b *testing.B) {
		for b.Loop() {
			v.loaded = false
			v.apply(pipelinesData{models: models})
			v.loaded = true
			_ = a.render()
		}
	})
	b.Run("keystroke", func(b *testing.B) {
		v.apply(pipelinesData{models: models})
		v.loaded = true
		down := tea.KeyPressMsg{Code: tea.KeyDown}
		for b.Loop() {
			a.Update(down)
			_ = a.render()
		}
	})
}

// BenchmarkPipelinesGraph1000 is the pipelines view's graph form over 1,000
// models in 10 pipelines of 100, each model gated on one or two of the
// eight before it and each pipeline's first on the pipeline before: the
// first frame after the data arrives (which lays out the pipeline shown)
// and a frame after an arrow key.
func BenchmarkPipelinesGraph1000(b *testing.B) {
	a := benchApp(b)
	var sp strings.Builder
	sp.WriteString("models:\n")
	name := func(p, i int) string { return fmt.Sprintf("p%02d.model_%03d", p, i) }
	var models []engine.ModelStatus
	for p := range 10 {
		for i := range 100 {
			fmt.Fprintf(&sp, "  - name: %s\n    pipeline: pipeline_%02d\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n", name(p, i), p)
			var ups []string
			switch {
			case i > 0:
				ups = append(ups, name(p, i-1-(i*7)%min(i, 8)))
				if i > 1 && i%3 == 0 {
					ups = append(ups, name(p, i-1-(i*5+1)%min(i, 8)))
				}
			case p > 0:
				ups = append(ups, name(p-1, 99))
			}
			if len(ups) > 0 {
				sp.WriteString("    upstream:\n")
				for _, u := range ups {
					fmt.Fprintf(&sp, "      - {name: %s, contract: encapsulate}\n", u)
				}
			}
			counts := map[state.UnitStatus]int{state.Applied: 990, state.Pending: 5, state.Blocked: 3 * (i % 2), state.Failed: i % 5 / 4}
			models = append(models, engine.ModelStatus{Name: name(p, i), Pipeline: fmt.Sprintf("pipeline_%02d", p),
				Temporality: "temporal", Flexibility: "fix", Interval: "1h", Registered: true, Counts: counts})
		}
	}
	parsed, err := spec.Parse("bollhav.yaml", []byte(sp.String()))
	if err != nil {
		b.Fatal(err)
	}
	graphs, err := engine.PipelineGraphs(parsed, engine.AssignTaskIDs(parsed, nil))
	if err != nil {
		b.Fatal(err)
	}
	a.eng = engine.New(benchStore{}, parsed, engine.Options{Now: a.eng.Clock})
	sortModels(models)
	v := a.top().(*pipelinesView)
	v.graphForm, v.graphOf = true, graphs[0].Name
	b.Run("first-frame", func(b *testing.B) {
		for b.Loop() {
			v.loaded = false
			v.apply(pipelinesData{models: models, graphs: graphs})
			v.loaded = true
			_ = a.render()
		}
	})
	b.Run("keystroke", func(b *testing.B) {
		benchKeys(b, a, tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyRight}, tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyLeft})
	})
}

// benchKeys times a frame after each key, the keys in turn.
func benchKeys(b *testing.B, a *App, keys ...tea.KeyPressMsg) {
	i := 0
	for b.Loop() {
		a.Update(keys[i%len(keys)])
		i++
		_ = a.render()
	}
}

// BenchmarkModelUnits is the model view with 1,000,000 loaded units, and its
// timeline over them with an upstream as large (each a span of about a
// thousand applied islands and a thousand failed units, as the load reads
// it).
func BenchmarkModelUnits(b *testing.B) {
	a := benchApp(b)
	mv := newModel(a.common, "raw.orders")
	a.stack = append(a.stack, mv)
	units := make([]state.Unit, 1_000_000)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range units {
		st := state.Applied
		if i%97 == 0 {
			st = state.Failed
		}
		units[i] = state.Unit{Model: "raw.orders", Window: state.Window{Since: t0.Add(time.Duration(i) * time.Hour), Until: t0.Add(time.Duration(i+1) * time.Hour)}, Status: st}
	}
	// The timeline: the model's hourly grid, its span as the load reads
	// it (applied islands and the failed units between them), and one
	// gated upstream as large, with the gate's verdict for the cursor.
	def := &spec.Model{Name: "raw.orders", Pipeline: "ingest", Temporality: spec.Temporal,
		Chunking: &spec.Chunking{Interval: state.MustInterval("1h"), Start: t0, Location: time.UTC}}
	span := func(units []state.Unit) timelineSpan {
		sp := timelineSpan{Loaded: state.Window{Since: t0, Until: units[len(units)-1].Window.Until}}
		for _, u := range units {
			if u.Status != state.Applied {
				sp.Other = append(sp.Other, u)
				continue
			}
			if k := len(sp.Applied) - 1; k >= 0 && sp.Applied[k].Until.Equal(u.Window.Since) {
				sp.Applied[k].Until = u.Window.Until
			} else {
				sp.Applied = append(sp.Applied, u.Window)
			}
		}
		return sp
	}
	upDef := &spec.Model{Name: "src.feed", Pipeline: "ingest", Temporality: spec.Temporal, Chunking: def.Chunking}
	upStatus := engine.ModelStatus{Name: "src.feed", Temporality: "temporal", Flexibility: "fix", Interval: "1h", Registered: true,
		Counts: map[state.UnitStatus]int{state.Applied: 989690, state.Failed: 10310}}
	src := spec.Source{Name: "src.feed", Kind: spec.KindModel, Contract: spec.Encapsulate}
	def.Upstream = []spec.Source{src}
	gate := &gate.UnitGate{Verdicts: []gate.Verdict{{Upstream: "src.feed", Level: spec.Encapsulate}}}
	data := modelData{status: engine.ModelStatus{Name: "raw.orders", Pipeline: "ingest", Temporality: "temporal", Flexibility: "fix", Interval: "1h",
		Registered: true, Counts: map[state.UnitStatus]int{state.Applied: 989690, state.Failed: 10310}}, units: units, more: true,
		def: def, span: span(units), want: state.Window{Since: t0, Until: units[len(units)-1].Window.Until},
		upstreams: []upstreamInfo{{src: src, status: &upStatus, def: upDef, span: span(units)}}, gate: gate, gateFor: units[0].Window}
	b.Run("first-frame", func(b *testing.B) {
		for b.Loop() {
			mv.placed = false
			mv.apply(data)
			mv.loaded = true
			_ = a.render()
		}
	})
	b.Run("keystroke", func(b *testing.B) {
		down := tea.KeyPressMsg{Code: tea.KeyDown}
		for b.Loop() {
			a.Update(down)
			_ = a.render()
		}
	})
}

func benchApp(b testing.TB) *App {
	b.Helper()
	e := engine.New(benchStore{}, nil, engine.Options{Now: func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }})
	a, err := newApp(b.Context(), e, withDefaults(Options{Theme: "dark", View: "pipelines"}), standardRenderers())
	if err != nil {
		b.Fatal(err)
	}
	a.width, a.height = 160, 48
	return a
}

// benchStore is a store the benchmarks never reach: rendering does no I/O.
type benchStore struct{ state.Store }

func (benchStore) Backend() string { return "bench" }

func sortModels(ms []engine.ModelStatus) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && (ms[j].Pipeline < ms[j-1].Pipeline || ms[j].Pipeline == ms[j-1].Pipeline && ms[j].Name < ms[j-1].Name); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}
