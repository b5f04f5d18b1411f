package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

func hourGrid(t *testing.T) *state.Grid {
	t.Helper()
	g, err := state.NewGrid(p0, state.Interval{N: 1, Unit: state.Hour}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return &g
}

// TestWindowsJoinsConsecutiveGridWindows: grid windows added one by one and
// the same range added at once are one run and the same value (ApplyPlan
// compares plans with reflect.DeepEqual), listing the same windows.
func TestWindowsJoinsConsecutiveGridWindows(t *testing.T) {
	g := hourGrid(t)
	var one Windows
	for _, w := range wins("0:00-1:00", "1:00-2:00", "2:00-3:00") {
		one.Add(g, w)
	}
	var all Windows
	all.AddGrid(g, win("0:00-3:00"))
	if one.Len() != 3 || one.Runs() != 1 {
		t.Fatalf("three consecutive hours: %d windows in %d runs, want 3 in 1", one.Len(), one.Runs())
	}
	if !reflect.DeepEqual(one, all) {
		t.Errorf("added one by one %+v, as a range %+v", one, all)
	}
	expectWindows(t, "List", one.List(), "0:00-1:00", "1:00-2:00", "2:00-3:00")
	if b := one.Bounds(); !b.Equal(win("0:00-3:00")) {
		t.Errorf("Bounds %s", b)
	}
}

// TestWindowsKeepsOtherWindowsAlone: a window that is not one of the grid's
// (a flexible unit's part of an hour) is its own run, and a gap starts a new
// run; the spans merge what touches and leave out a timeless zero window.
func TestWindowsKeepsOtherWindowsAlone(t *testing.T) {
	g := hourGrid(t)
	var ws Windows
	ws.Add(g, win("0:00-1:00"))
	ws.Add(g, win("1:00-1:30"))
	ws.Add(g, win("2:00-3:00"))
	ws.Add(g, win("3:00-4:00"))
	ws.AddGrid(g, win("5:00-7:00"))
	if ws.Len() != 6 || ws.Runs() != 4 {
		t.Fatalf("%d windows in %d runs, want 6 in 4: %s", ws.Len(), ws.Runs(), fmtWindows(ws.List()))
	}
	expectWindows(t, "List", ws.List(), "0:00-1:00", "1:00-1:30", "2:00-3:00", "3:00-4:00", "5:00-6:00", "6:00-7:00")
	if got, want := ws.Spans(), wins("0:00-1:30", "2:00-4:00", "5:00-7:00"); !windowsEqual(got, want) {
		t.Errorf("Spans %s, want %s", fmtWindows(got), fmtWindows(want))
	}
	zero := WindowsOf(state.Window{})
	if zero.Len() != 1 || len(zero.Spans()) != 0 || !zero.Bounds().IsZero() {
		t.Errorf("a timeless row: Len %d, Spans %v, Bounds %v; want 1, none, zero", zero.Len(), zero.Spans(), zero.Bounds())
	}
}

// TestWindowsCoveredBatchesMerge: the parts of a plan's windows a run
// window covers, the batches a prefill inserts and the UI's merge of two
// plans all give the windows the lists gave.
func TestWindowsCoveredBatchesMerge(t *testing.T) {
	g := hourGrid(t)
	var ws Windows
	ws.AddGrid(g, win("0:00-5:00"))
	ws.Add(g, win("5:00-5:30"))
	expectWindows(t, "Covered", ws.Covered(win("1:00-3:00")).List(), "1:00-2:00", "2:00-3:00")
	expectWindows(t, "Covered past the end", ws.Covered(win("4:00-6:00")).List(), "4:00-5:00", "5:00-5:30")

	var batches [][]state.Window
	for b := range ws.Batches(2) {
		batches = append(batches, slices.Clone(b))
	}
	if len(batches) != 3 || len(batches[2]) != 2 || !windowsEqual(slices.Concat(batches...), ws.List()) {
		t.Errorf("batches of 2 of %s: %v", fmtWindows(ws.List()), batches)
	}

	var a, b Windows
	a.AddGrid(g, win("3:00-5:00"))
	b.AddGrid(g, win("0:00-3:00"))
	m := MergeWindows(a, b)
	expectWindows(t, "MergeWindows", m.List(), "0:00-1:00", "1:00-2:00", "2:00-3:00", "3:00-4:00", "4:00-5:00")
	if m.Runs() != 1 {
		t.Errorf("merging two touching ranges: %d runs, want 1", m.Runs())
	}
	if a.Len() != 2 || b.Len() != 3 {
		t.Errorf("merging changed its inputs: %d and %d windows", a.Len(), b.Len())
	}
}

// TestWindowsCountsASkippedCalendarDay: Samoa skipped 30 December 2011, so
// a daily grid there has an empty window, which is no unit: a range over it
// counts the days that exist, as Grid.Windows lists them.
func TestWindowsCountsASkippedCalendarDay(t *testing.T) {
	apia, err := time.LoadLocation("Pacific/Apia")
	if err != nil {
		t.Fatalf("time zone data: %v", err)
	}
	g, err := state.NewGrid(time.Date(2011, 12, 25, 0, 0, 0, 0, apia), state.Interval{N: 1, Unit: state.Day}, apia)
	if err != nil {
		t.Fatal(err)
	}
	r := state.Window{Since: g.Start, Until: time.Date(2012, 1, 5, 0, 0, 0, 0, apia)}
	if from, to := g.Span(r); to-from != len(g.Windows(r))+1 {
		t.Fatalf("the range holds %d grid positions and %d windows: no skipped day to count", to-from, len(g.Windows(r)))
	}
	var ws Windows
	ws.AddGrid(&g, r)
	if want := g.Windows(r); ws.Len() != len(want) || !windowsEqual(ws.List(), want) {
		t.Errorf("AddGrid over the skipped day: %d windows %s, want %d %s", ws.Len(), fmtWindows(ws.List()), len(want), fmtWindows(want))
	}
}

// TestReleasesOfAPlan: the blocked units a plan's run supplies, counted by
// the gate (gate's TestReleasesCountsWhatARunSupplies) over the windows the
// plan runs: in the lineage, a run of raw.orders 05 releases mart.hourly 05
// and mart.flex 05.
func TestReleasesOfAPlan(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		w := enginetest.Lineage.Seed(t, s)
		e := New(s, w.Spec, Options{Actor: "test", Now: w.Clock()})
		ctx := t.Context()
		h := hours(5, 6)
		p, err := e.Plan(ctx, RunRequest{Models: []string{"raw.orders"}, Window: &h})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := e.Releases(ctx, p); err != nil || n != 2 {
			t.Errorf("the plan of a run of raw.orders 05 releases %d (%v), want 2", n, err)
		}
	})
}
