package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/ui/tui"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestDemoUIOpensOnTheOutage drives the real UI model (teatest, 80×24) on
// the demo's store: with no key pressed the screen shows the incidents,
// raw.payments' failed hour first with the provider's error; enter shows
// the root-cause chain of the day it blocks, down to that hour.
func TestDemoUIOpensOnTheOutage(t *testing.T) {
	dir, _ := demoCopy(t)
	loaded, s := enginetest.OpenProject(t, dir)
	e := engine.New(s, loaded, engine.Options{SpecDir: dir, Actor: "test"})
	m, err := tui.NewModel(t.Context(), e, tui.Options{Theme: "none"})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	var seen bytes.Buffer
	waitOut := func(what string, want ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			seen.Write(b)
			for _, w := range want {
				if !strings.Contains(seen.String(), w) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	waitOut("the incidents", "Incidents", "raw.payments", "failed", "503 Service Unavailable", "holds 4 units of core.daily_revenue")
	if i, j := strings.Index(seen.String(), "raw.payments"), strings.Index(seen.String(), "raw.clickstream"); i < 0 || j >= 0 && j < i {
		t.Errorf("raw.payments is not the first card:\n%s", seen.String())
	}
	seen.Reset()
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitOut("the root-cause chain", "why core.daily_revenue", "Root cause", "→ raw.payments")
}
