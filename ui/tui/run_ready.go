package tui

import (
	"slices"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// readyRequests are the runs of "run every ready unit": for each model with
// ready units, one discover run per stretch of adjacent ready windows, so
// each run's window holds ready units and nothing else (a discover over a
// wider hull would also re-run the failed and blocked units between them).
// The engine's run window is one for every model of a run, and a model's
// day does not fit another's hour: hence a run per model. A timeless
// model's existence row is a run without a window. Models come in the order
// of ready (the queue's: what holds the most first).
func readyRequests(ready []unitRef) []engine.RunRequest {
	var order []string
	byModel := map[string][]state.Window{}
	for _, u := range ready {
		if _, ok := byModel[u.model]; !ok {
			order = append(order, u.model)
		}
		byModel[u.model] = append(byModel[u.model], u.window)
	}
	var out []engine.RunRequest
	for _, m := range order {
		ws := byModel[m]
		slices.SortFunc(ws, func(a, b state.Window) int { return a.Since.Compare(b.Since) })
		var cur *state.Window
		flush := func() {
			if cur != nil {
				w := *cur
				out = append(out, engine.RunRequest{Models: []string{m}, Mode: spec.Discover, Window: &w})
				cur = nil
			}
		}
		for _, w := range ws {
			switch {
			case w.IsZero():
				flush()
				out = append(out, engine.RunRequest{Models: []string{m}, Mode: spec.Discover})
			case cur != nil && cur.Until.Equal(w.Since):
				cur.Until = w.Until
			default:
				flush()
				c := w
				cur = &c
			}
		}
		flush()
	}
	return out
}

// unitRef names a unit: its model and window (zero: a timeless model's
// existence row).
type unitRef struct {
	model  string
	window state.Window
}

// unitKey is a unit as a map key: comparable without formatting its
// window, which cost the Blocked view 0.45 s a load at a million units.
type unitKey struct {
	model        string
	since, until int64 // UnixMicro (the store's precision); 0 and 0 for an existence row
}

// key is the unit's map key.
func (u unitRef) key() unitKey {
	if u.window.IsZero() {
		return unitKey{model: u.model}
	}
	return unitKey{u.model, u.window.Since.UnixMicro(), u.window.Until.UnixMicro()}
}
