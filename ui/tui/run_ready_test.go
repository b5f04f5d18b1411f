package tui

import (
	"fmt"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

func requestStrings(reqs []engine.RunRequest) []string {
	var out []string
	for _, r := range reqs {
		w := "no window"
		if r.Window != nil {
			w = r.Window.String()
		}
		out = append(out, fmt.Sprintf("%v %s %s", r.Models, r.Mode, w))
	}
	return out
}

// TestReadyRequestsRunExactlyTheReadyWindows: ready units become one
// discover run per stretch of adjacent ready windows of a model — hours 1–3
// are one run, hour 5 another (hour 4 is not ready and must not run) — a
// model at a time in the order they were listed, and a timeless model's
// existence row a run without a window.
func TestReadyRequestsRunExactlyTheReadyWindows(t *testing.T) {
	got := requestStrings(readyRequests([]unitRef{
		{"mart.hourly", hours(2, 3)},
		{"report.snapshot", state.Window{}},
		{"mart.hourly", hours(5, 6)},
		{"mart.hourly", hours(1, 2)},
		{"mart.daily", hours(0, 24)},
		{"mart.hourly", hours(3, 4)},
	}))
	want := []string{
		"[mart.hourly] discover " + hours(1, 4).String(),
		"[mart.hourly] discover " + hours(5, 6).String(),
		"[report.snapshot] discover no window",
		"[mart.daily] discover " + hours(0, 24).String(),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("readyRequests:\n got  %q\n want %q", got, want)
	}
	if got := readyRequests(nil); len(got) != 0 {
		t.Errorf("nothing ready asks for %d runs", len(got))
	}
}
