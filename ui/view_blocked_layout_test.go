package ui

import (
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The Blocked queue is laid out in its load, off the UI's goroutine, and
// that layout is the one the view would work out itself; a load asked for
// before the user typed a filter answers with a layout the view does not
// take: the queue stays filtered.
func TestBlockedQueueLaidOutInTheLoad(t *testing.T) {
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadBlocked(a.common, "")(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.layout.lines) == 0 || d.layout.failed == 0 || d.layout.blocked == 0 {
		t.Fatalf("the load laid out no queue: %+v", d.layout)
	}
	own := newBlocked(a.common)
	own.units, own.ready = d.units, d.ready
	own.refilter(nil)
	if !reflect.DeepEqual(own.queueLayout, d.layout) {
		t.Fatalf("the load's layout differs from the view's own:\n%+v\n%+v", d.layout, own.queueLayout)
	}

	v := newBlocked(a.common)
	v.loaded = true
	v.apply(d)
	all := len(v.lines)
	d2, err := loadBlocked(a.common, v.query)(t.Context()) // asked for before the filter
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
