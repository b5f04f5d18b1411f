package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// liveSamples is how many changes each live-latency benchmark makes at
// least, whatever b.N is (scripts/bench runs -benchtime=1x): one change
// says little about a delay that depends on where a poll timer stands.
const liveSamples = 9

// liveModels and liveUnits size the generated project the live latency is
// measured on. The delay does not grow with the units: a change reloads
// one model (the pipelines view) or one model's first page (the model
// view), whatever the store holds; the models count, since the pipelines
// view lists them all.
const (
	liveModels = 1000
	liveUnits  = 10_000
)

// BenchmarkLiveLatency is the time from the moment another process starts
// committing a change to the state store until the UI's model reflects it.
// The store holds a generated project (engine/enginetest/gen, liveModels
// models, liveUnits units). A second store handle (its own SQLite
// connections, or its own PostgreSQL pool: exactly what another bollhav
// process holds) moves one applied unit to pending (and, once it has
// moved every applied unit of the model view's first page, them back, one
// at a time), and the clock stops when the real UI program (tea.NewProgram
// over the App, following the store's change feed with the product's
// default poll) has taken, in Update, the reload that shows it: on the
// pipelines view the model's new applied count, on the model view the
// unit's row in its new status. The model is the one with the most
// applied units among those with a gated upstream, so the model view's
// reload reads upstreams, their coverage and the engine's gate as it does
// in production. The clock starts before the commit, so the commit's own
// time is included. Frames are drawn by the program's renderer as usual,
// but their time is not counted.
//
// Each run makes one change it does not count (see benchLive), then at
// least liveSamples changes, spaced by a varying pause so they fall at
// different points of the SQLite watcher's poll, and reports ns/op (the
// mean), p50-ns and max-ns. Goals (issue 8): 250 ms on PostgreSQL, 1 s on
// SQLite.
func BenchmarkLiveLatency(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run("store="+backend, func(b *testing.B) {
			w := newLiveWorld(b, backend)
			for _, view := range []string{"pipelines", "model"} {
				b.Run("view="+view, func(b *testing.B) {
					benchLive(b, w, view)
				})
			}
		})
	}
}

// liveWorld is the generated store opened twice, the UI's handle and
// another process's, with the model whose units change and the windows of
// its applied units on the model view's first page.
type liveWorld struct {
	ui, other state.Store
	spec      *spec.Spec
	model     string
	applied   []state.Window
	changes   int // the changes made so far
}

// newLiveWorld generates the project in a fresh store of backend (through a
// third handle, closed before the two the benchmark uses are opened).
func newLiveWorld(b *testing.B, backend string) *liveWorld {
	b.Helper()
	ctx := b.Context()
	var open func() (state.Store, error)
	switch backend {
	case "sqlite":
		path := filepath.Join(b.TempDir(), "state.db")
		open = func() (state.Store, error) { return sqlite.Open(ctx, path) }
	case "postgres":
		dsn := pgtest.DSN(b)
		schema := pgtest.Schema(b, dsn)
		open = func() (state.Store, error) { return postgres.Open(ctx, dsn, postgres.Options{Schema: schema}) }
	}
	s, err := open()
	if err != nil {
		b.Fatal(err)
	}
	e, sum, err := gen.Populate(ctx, s, engine.Options{Actor: "bench"}, gen.Config{Models: liveModels, Units: liveUnits, Seed: scaleSeed})
	s.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d models, %d units in %s", sum.Models, sum.Units, sum.Elapsed.Round(time.Millisecond))
	w := &liveWorld{spec: e.Spec()}
	for _, st := range []*state.Store{&w.ui, &w.other} {
		s, err := open()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		*st = s
	}
	// The model: the most applied units among those with a gated upstream.
	most := -1
	for _, m := range w.spec.Models {
		if !slices.ContainsFunc(m.Upstream, spec.Source.Gated) || m.Temporality != spec.Temporal {
			continue
		}
		st, err := w.ui.Stats(ctx, "", m.Name)
		if err != nil {
			b.Fatal(err)
		}
		if n := st.Counts[state.Applied]; n > most {
			w.model, most = m.Name, n
		}
	}
	n := 0
	err = w.ui.ScanUnits(ctx, state.UnitQuery{Model: w.model}, func(u state.Unit) error {
		if n++; n > unitsPage {
			return errStopScan
		}
		if u.Status == state.Applied {
			w.applied = append(w.applied, u.Window)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		b.Fatal(err)
	}
	if len(w.applied) == 0 {
		b.Fatalf("%s has no applied unit on its first page", w.model)
	}
	b.Logf("changing %s: %d applied units, %d on its first page", w.model, most, len(w.applied))
	return w
}

// liveProbe is the App as the program runs it, with a condition checked
// after every Update: the moment the model first satisfies it is sent on
// seen.
type liveProbe struct {
	*App
	mu    sync.Mutex
	check func(a *App) bool
	seen  chan time.Time
}

func (p *liveProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.App.Update(msg)
	p.mu.Lock()
	if p.check != nil && p.check(p.App) {
		p.check = nil
		p.seen <- time.Now()
	}
	p.mu.Unlock()
	return p, cmd
}

// await sets the condition and returns the channel its moment comes on.
func (p *liveProbe) await(check func(a *App) bool) <-chan time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.check = check
	return p.seen
}

func benchLive(b *testing.B, w *liveWorld, view string) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	model := w.model
	opts := Options{Theme: "none", View: "pipelines"}
	if view == "model" {
		opts.View, opts.Model = "model", model
	}
	e := engine.New(w.ui, w.spec, engine.Options{Actor: "bench", Now: func() time.Time { return gen.AsOf }})
	app, err := newApp(ctx, e, withDefaults(opts), standardRenderers())
	if err != nil {
		b.Fatal(err)
	}
	probe := &liveProbe{App: app, seen: make(chan time.Time, 1)}
	// The first screen loaded and the feed live, before any change.
	ready := probe.await(func(a *App) bool {
		base := a.top().base()
		return a.live && base.loaded && !base.loading
	})
	p := tea.NewProgram(probe, tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(io.Discard),
		tea.WithWindowSize(120, 40), tea.WithoutSignals())
	done := make(chan struct{})
	var runErr error
	go func() {
		_, runErr = p.Run()
		close(done)
	}()
	defer func() {
		p.Quit()
		<-done
	}()
	wait := func(ch <-chan time.Time, what string) time.Time {
		select {
		case t := <-ch:
			return t
		case <-time.After(30 * time.Second):
			b.Fatalf("the UI did not show %s within 30 s", what)
		case <-done:
			b.Fatalf("the program ended: %v", runErr)
		}
		return time.Time{}
	}
	wait(ready, "its first screen")

	st, err := w.ui.Stats(ctx, "", model)
	if err != nil {
		b.Fatal(err)
	}
	applied := st.Counts[state.Applied]
	// change makes the other process's next change and returns how long
	// the UI took to show it.
	change := func() time.Duration {
		c := w.nextChange()
		if c.To == state.Applied {
			applied++
		} else {
			applied--
		}
		want := applied
		seen := probe.await(func(a *App) bool { return reflects(a, model, c.Window, c.To, want) })
		start := time.Now()
		c.Now, c.AppliedAt = start.UTC(), start.UTC()
		moved, err := w.other.SetStatus(ctx, c)
		if err != nil || moved != 1 {
			b.Fatalf("the other process's change: %d units, %v", moved, err)
		}
		return wait(seen, fmt.Sprintf("%s %s %s", model, c.Window, c.To)).Sub(start)
	}
	// One change first, not counted: "live" shows once the UI has
	// subscribed to the feed, which may still be setting up its wake-up
	// (PostgreSQL's LISTEN connection) — a UI that has been open a while
	// is past that.
	change()
	n := max(b.N, liveSamples)
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for k := range n {
		// A pause that varies from 0 to 190 ms, so the changes fall at
		// different points of a poll period.
		time.Sleep(time.Duration(k*70%200) * time.Millisecond)
		lat = append(lat, change())
	}
	b.StopTimer()
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns/op")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds()), "max-ns")
}

// nextChange is the next change the other process makes: the next of the
// model's applied units on the first page to pending, or, once they have
// all been moved, back to applied, and so on.
func (w *liveWorld) nextChange() state.StatusChange {
	i := w.changes % len(w.applied)
	c := state.StatusChange{Model: w.model, Window: w.applied[i], From: []state.UnitStatus{state.Applied}, To: state.Pending}
	if w.changes/len(w.applied)%2 == 1 {
		c.From, c.To = []state.UnitStatus{state.Pending}, state.Applied
	}
	w.changes++
	return c
}

// reflects reports whether the view on top shows the change: the
// pipelines view model's applied count at want, or the model view's row
// of w in status to.
func reflects(a *App, model string, w state.Window, to state.UnitStatus, want int) bool {
	switch v := a.top().(type) {
	case *pipelinesView:
		for _, m := range v.models {
			if m.Name == model {
				return m.Counts[state.Applied] == want
			}
		}
	case *modelView:
		for _, u := range v.data.units {
			if u.Window.Equal(w) {
				return u.Status == to
			}
		}
	}
	return false
}
