package tui

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/charmbracelet/x/ansi"
)

// The Blocked queue is laid out in its load, off the UI's goroutine, and
// that layout is the one the view would work out itself; a load asked for
// before the user typed a filter answers with a layout the view does not
// take: the queue stays filtered.
func TestBlockedQueueLaidOutInTheLoad(t *testing.T) {
	a, d := blockedQueue(t)
	if len(d.layout.lines) == 0 || d.layout.failed == 0 || d.layout.blocked == 0 {
		t.Fatalf("the load laid out no queue: %+v", d.layout)
	}
	own := newBlocked(a.common)
	own.units, own.ready, own.roots = d.units, d.ready, d.roots
	own.refilter(nil)
	if !reflect.DeepEqual(own.queueLayout, d.layout) {
		t.Fatalf("the load's layout differs from the view's own:\n%+v\n%+v", d.layout, own.queueLayout)
	}

	v := newBlocked(a.common)
	v.loaded = true
	v.apply(d)
	all := len(v.lines)
	d2, err := loadBlocked(a.common, v.query, blockedPage)(t.Context()) // asked for before the filter
	v.setFilter("mart.hourly")
	if err != nil {
		t.Fatal(err)
	}
	v.apply(d2)
	if len(v.lines) == 0 || len(v.lines) >= all {
		t.Fatalf("after a reload the filtered queue has %d lines of %d", len(v.lines), all)
	}
	for _, l := range v.lines {
		if l.unit >= 0 && v.units[l.unit].Model != "mart.hourly" {
			t.Fatalf("a reload brought back %s under the filter mart.hourly", v.units[l.unit].Model)
		}
	}
	if frame := ansi.Strip(strings.Join(v.render(100, 24), "\n")); !strings.Contains(frame, "mart.hourly") {
		t.Fatalf("the filtered queue does not show mart.hourly:\n%s", frame)
	}
}

// A large queue's filter is laid out off the event loop: typing returns at
// once with the list as it was and a footer that says it is filtering; one
// layout runs at a time and, when the user typed on meanwhile, its answer
// starts the newest filter's; a layout of a queue a reload replaced is
// dropped. What ends on screen is what filtering in Update shows.
func TestBlockedFilterLaidOutOffTheLoop(t *testing.T) {
	a, d := blockedQueue(t)
	v := newBlocked(a.common)
	v.loaded = true
	v.relayout.syncMax = 1 // every queue here counts as large
	if cmd := v.apply(d); cmd != nil {
		t.Fatal("a load laid out for the view's filter started another layout")
	}
	all := len(v.lines)
	frame := func() string { return ansi.Strip(strings.Join(v.render(120, 30), "\n")) }

	first := v.setFilter("mart")
	if first == nil {
		t.Fatal("filtering a large queue started no layout off the loop")
	}
	if len(v.lines) != all || !strings.Contains(frame(), `filtering`) {
		t.Fatalf("while the layout runs the list should stay as it was (%d lines, has %d) and say it is filtering:\n%s", all, len(v.lines), frame())
	}
	if v.setFilter("mart.hourly") != nil {
		t.Fatal("a second layout started while one was out")
	}
	second := v.update(first().(laidOut))
	if second == nil {
		t.Fatal("the answer for an older filter did not start the newest one's layout")
	}
	if v.queueLayout.query != "mart" {
		t.Fatalf("the first answer was not shown meanwhile: the list is laid out for %q", v.queueLayout.query)
	}
	if v.update(second().(laidOut)) != nil {
		t.Fatal("a layout for the current filter started another")
	}
	want := newBlocked(a.common)
	want.units, want.ready, want.roots, want.query = d.units, d.ready, d.roots, "mart.hourly"
	want.refilter(nil)
	if !reflect.DeepEqual(v.queueLayout, want.queueLayout) {
		t.Fatalf("the layout off the loop differs from the one in Update:\n%+v\n%+v", v.queueLayout, want.queueLayout)
	}
	if f := frame(); strings.Contains(f, "filtering") || !strings.Contains(f, `match "mart.hourly"`) {
		t.Fatalf("the filtered queue's frame:\n%s", f)
	}

	// A reload while a layout is out: the reload's queue stays, laid out
	// for the filter it was asked with, the new queue is laid out for the
	// current filter, and the old queue's layout is dropped when it
	// arrives.
	stale := v.setFilter("")
	d2, err := loadBlocked(a.common, "mart.hourly", blockedPage)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again := v.apply(d2)
	if again == nil {
		t.Fatal("a reload laid out for an older filter started no layout for the current one")
	}
	if v.queueLayout.query != "mart.hourly" {
		t.Fatalf("the reload's own layout was not taken: laid out for %q", v.queueLayout.query)
	}
	v.update(stale().(laidOut))
	if v.queueLayout.query != "mart.hourly" {
		t.Fatalf("the old queue's layout was taken (laid out for %q)", v.queueLayout.query)
	}
	v.update(again().(laidOut))
	if v.queueLayout.query != "" || len(v.lines) != all {
		t.Fatalf("after the reload and the cleared filter the list has %d lines for %q, want %d for everything", len(v.lines), v.queueLayout.query, all)
	}
	for _, l := range v.lines {
		if l.unit >= len(v.units) {
			t.Fatal("a line points past the reloaded queue")
		}
	}
}

// blockedQueue is an app over the test world and its Blocked queue as a
// load reads it, unfiltered.
func blockedQueue(t *testing.T) (*App, blockedData) {
	t.Helper()
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadBlocked(a.common, "", blockedPage)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return a, d
}

// A layout whose answer never reached the view (it came while the view
// was off the stack, and the app dropped it) does not leave the filter
// stuck: the next queue the view takes lays the current filter out.
func TestBlockedFilterNotStuckByALostLayout(t *testing.T) {
	a, d := blockedQueue(t)
	v := newBlocked(a.common)
	v.loaded = true
	v.relayout.syncMax = 1
	v.apply(d)
	if v.setFilter("mart") == nil { // its answer is lost
		t.Fatal("filtering a large queue started no layout off the loop")
	}
	d2, err := loadBlocked(a.common, "", blockedPage)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cmd := v.apply(d2) // the reload on coming back
	if cmd == nil {
		t.Fatal("after a lost layout the reloaded queue is not laid out for the filter: it stays unfiltered")
	}
	v.update(cmd().(laidOut))
	if v.queueLayout.query != "mart" || strings.Contains(strings.Join(v.render(120, 30), "\n"), "filtering") {
		t.Fatalf("the queue is laid out for %q, want \"mart\"", v.queueLayout.query)
	}
}

// The queue is read a page at a time (issue 33): with a page of 3 the
// first load holds the queue's first 3 units in Triage's order, the foot
// counts the whole queue and says more are to be read, and the cursor on
// the last line asks for the next page; page by page the view ends with
// every unit, in the order one whole read gives, and stops asking.
func TestBlockedQueueReadAPageAtATime(t *testing.T) {
	a, whole := blockedQueue(t)
	if len(whole.units) < 7 {
		t.Fatalf("a queue of %d units: too few to page", len(whole.units))
	}
	defer func(n int) { blockedPage = n }(blockedPage)
	blockedPage = 3
	v := newBlocked(a.common)
	v.loaded = true
	counts := fmt.Sprintf(" %d failed · %d blocked", whole.layout.failed, whole.layout.blocked)
	for pages := 1; ; pages++ {
		d, err := loadBlocked(a.common, "", v.limit)(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		v.apply(d)
		want := whole.units[:min(len(whole.units), 3*pages)]
		if got := unitNames(v.units); !slices.Equal(got, unitNames(want)) {
			t.Fatalf("page %d: the queue holds %v, want the first %d of the whole read: %v", pages, got, len(want), unitNames(want))
		}
		foot := v.foot()
		if !strings.HasPrefix(foot, counts) {
			t.Errorf("page %d: the foot %q does not count the whole queue (%q)", pages, foot, counts)
		}
		sent := len(a.common.outbox)
		v.cur.moveTo(len(v.lines) - 1)
		v.readMore()
		if len(want) == len(whole.units) {
			if strings.Contains(foot, "read (the end reads more)") || len(a.common.outbox) != sent {
				t.Errorf("every unit is read, but the foot says %q and the end asked for more", foot)
			}
			return
		}
		if want := fmt.Sprintf("first %d read (the end reads more)", len(v.units)); !strings.Contains(foot, want) {
			t.Errorf("page %d: the foot %q does not say %q", pages, foot, want)
		}
		if len(a.common.outbox) != sent+1 || v.limit != len(v.units)+3 {
			t.Fatalf("page %d: the cursor at the end did not ask for the next page (limit %d)", pages, v.limit)
		}
		if _, ok := a.common.outbox[sent].(reloadMsg); !ok {
			t.Fatalf("page %d: the end sent %T, not a reload", pages, a.common.outbox[sent])
		}
	}
}

// A platform too large for the live gate index has the units the queue
// shows judged on each load (Engine.Judge) instead: the ready marks and
// the verdicts are the index's.
func TestBlockedQueueJudgedWithoutTheLiveIndex(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e, _, err := gen.Populate(t.Context(), s, engine.Options{Actor: "test"}, gen.Config{Models: 30, Units: 1500, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		a, err := newApp(t.Context(), e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
		if err != nil {
			t.Fatal(err)
		}
		whole, err := loadBlocked(a.common, "", blockedPage)(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.ready) == 0 || len(whole.ready) == len(whole.units) {
			t.Fatalf("%d of %d units ready: the two ways are compared on too little", len(whole.ready), len(whole.units))
		}
		a.common.gate = newLiveGate(a.common.eng)
		a.common.gate.fits = func(context.Context) (bool, error) { return false, nil }
		d, err := loadBlocked(a.common, "", blockedPage)(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if a.common.gate.built() != nil {
			t.Error("the live index was built for a platform it does not fit")
		}
		if !maps.Equal(d.ready, whole.ready) {
			t.Errorf("ready judged per load %v, by the live index %v", d.ready, whole.ready)
		}
		for i, u := range d.units {
			if w := whole.units[i]; u.Readiness != w.Readiness {
				t.Errorf("%s %s: %s judged per load, %s by the live index", u.Model, u.Window, u.Readiness, w.Readiness)
			}
		}
	})
}

// unitNames are units as "model window", in order.
func unitNames(units []gate.BlockedUnit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = u.Model + " " + u.Window.String()
	}
	return out
}
