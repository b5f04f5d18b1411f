package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// isQuit reports whether cmd quits the program. Commands that wait (ticks)
// are not quits.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-got:
	case <-time.After(100 * time.Millisecond):
		return false
	}
	switch msg := msg.(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if isQuit(c) {
				return true
			}
		}
	}
	return false
}

// TestQuitAsksWhileARunIsGoingOn: q quits at once, unless a run started
// here is still going on: then a second q does.
func TestQuitAsksWhileARunIsGoingOn(t *testing.T) {
	a := benchApp(t)
	q := tea.KeyPressMsg{Code: 'q', Text: "q"}
	if _, cmd := a.Update(q); !isQuit(cmd) {
		t.Fatal("q without a run quits")
	}
	a.runs = []*liveRun{{id: 1, action: action{model: "raw.orders", mode: spec.Bulldozer}}}
	if _, cmd := a.Update(q); isQuit(cmd) {
		t.Fatal("q with a run going on quit at once")
	}
	if !strings.Contains(a.flash, "press q again") {
		t.Errorf("flash %q", a.flash)
	}
	// Another key disarms; q then asks again.
	a.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if _, cmd := a.Update(q); isQuit(cmd) {
		t.Fatal("the confirmation survived another key")
	}
	if _, cmd := a.Update(q); !isQuit(cmd) {
		t.Fatal("a second q quits")
	}
}

// TestMouseWheelScrollsTheList: the wheel moves the page (and the cursor
// with it) without a key.
func TestMouseWheelScrollsTheList(t *testing.T) {
	a := benchApp(t)
	a.width, a.height = 80, 24
	v := a.top().(*pipelinesView)
	var models []engine.ModelStatus
	for i := range 200 {
		models = append(models, engine.ModelStatus{Name: fmt.Sprintf("m.model_%03d", i), Pipeline: "p", Temporality: "temporal",
			Flexibility: "fix", Interval: "1h", Registered: true, Counts: map[state.UnitStatus]int{state.Applied: 1}})
	}
	v.apply(pipelinesData{models: models})
	v.loaded = true
	_ = a.render()
	for range 5 {
		a.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	frame := a.render()
	if strings.Contains(frame, "m.model_000") || !strings.Contains(frame, "m.model_015") {
		t.Errorf("five wheel steps scroll 15 rows:\n%s", frame)
	}
	if v.cur.pos < v.cur.offset {
		t.Errorf("the cursor left the page: pos %d offset %d", v.cur.pos, v.cur.offset)
	}
}
