package engine

import (
	"time"

	"github.com/bollhav/bollhav/state"
)

// t0 is the first instant of the windows the engine's tests build.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hours is the window [t0+a h, t0+b h).
func hours(a, b int) state.Window {
	return state.MustWindow(t0.Add(time.Duration(a)*time.Hour), t0.Add(time.Duration(b)*time.Hour))
}

// days is the window [t0+a d, t0+b d).
func days(a, b int) state.Window { return hours(24*a, 24*b) }
