package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// TestLiveShowsTheLastChangeSeen: "● live" alone says the feed is
// connected; once a change arrives it carries the change's time (the
// world's clock, 2026-01-03 00:00Z, at which the mark below is made), in
// the zone the time toggle shows.
func TestLiveShowsTheLastChangeSeen(t *testing.T) {
	w := newWorld(t)
	r := startUI(t, w.e, 80, 24, Options{Location: time.FixedZone("CET", 3600)})
	f := r.waitSettled(t, viewPipelines)
	if strings.Contains(f, "● live 0") {
		t.Fatalf("a change time before any change arrived:\n%s", f)
	}
	if _, err := w.e.Mark(context.Background(), "raw.orders", hours(5, 6), state.Applied); err != nil {
		t.Fatal(err)
	}
	r.waitText(t, "● live 00:00:00Z")
	r.keys("T")
	r.waitText(t, "● live 01:00:00 CET", "ago·CET")
}
