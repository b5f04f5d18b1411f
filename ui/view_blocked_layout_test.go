package ui

import (
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The Blocked queue is laid out in its load, off the UI's goroutine, and
// that layout is the one the view would work out itself; a queue the user
// has filtered stays filtered when a new load answers with its unfiltered
// layout.
func TestBlockedQueueLaidOutInTheLoad(t *testing.T) {
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadBlocked(a.common)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.unfiltered.lines) == 0 || d.unfiltered.failed == 0 || d.unfiltered.blocked == 0 {
		t.Fatalf("the load laid out no queue: %+v", d.unfiltered)
	}
	own := newBlocked(a.common)
	own.units, own.ready = d.units, d.ready
	own.refilter(nil)
	if !reflect.DeepEqual(own.queueLayout, d.unfiltered) {
		t.Fatalf("the load's layout differs from the view's own:\n%+v\n%+v", d.unfiltered, own.queueLayout)
	}

	v := newBlocked(a.common)
	v.loaded = true
	v.apply(d)
	all := len(v.lines)
	v.setFilter("mart.hourly")
	d2, err := loadBlocked(a.common)(t.Context())
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
