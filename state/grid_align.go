package state

import (
	"fmt"
	"strings"
)

// AlignmentError says why a run window does not fit a fixed model's grid and
// where the nearest grid bounds are, so the user can retype the window
// instead of guessing. Inspect it with errors.As.
type AlignmentError struct {
	Window Window
	Grid   Grid
	// SinceBetween is the grid window holding Window.Since when Since is not
	// a grid boundary (its bounds are the nearest aligned sinces); zero when
	// Since is aligned or lies before Grid.Start.
	SinceBetween Window
	// UntilBetween is the grid window holding Window.Until when Until is not
	// a grid boundary; zero when Until is aligned.
	UntilBetween Window
	// BeforeStart is set when Window.Since lies before Grid.Start, where a
	// fixed model has no rows.
	BeforeStart bool
}

// Error reads "window [s, u) is not aligned to the 1d grid from … (zone): …"
// with one clause per offending bound, each naming the grid bounds around it.
func (e *AlignmentError) Error() string {
	var why []string
	switch {
	case e.BeforeStart:
		why = append(why, "since is before the grid's start "+FormatTime(e.Grid.Start))
	case !e.SinceBetween.Empty():
		why = append(why, "since lies between "+FormatTime(e.SinceBetween.Since)+" and "+FormatTime(e.SinceBetween.Until))
	}
	if !e.UntilBetween.Empty() {
		why = append(why, "until lies between "+FormatTime(e.UntilBetween.Since)+" and "+FormatTime(e.UntilBetween.Until))
	}
	return fmt.Sprintf("window %s is not aligned to the %s: %s", e.Window, e.Grid, strings.Join(why, "; "))
}

// Align checks that w is a run window of the grid: both bounds on grid
// boundaries and since not before Start, so that it is exactly a run of
// whole grid windows. A misfit is an *AlignmentError; an empty window is a
// plain error, since no grid can hold it.
func (g Grid) Align(w Window) error {
	if w.Empty() {
		return fmt.Errorf("window %s is empty: until must be after since", w)
	}
	e := &AlignmentError{Window: w, Grid: g}
	if w.Since.Before(g.Start) {
		e.BeforeStart = true
	} else if c := g.WindowContaining(w.Since); !c.Since.Equal(w.Since) {
		e.SinceBetween = c
	}
	if c := g.WindowContaining(w.Until); !c.Since.Equal(w.Until) {
		e.UntilBetween = c
	}
	if !e.BeforeStart && e.SinceBetween.Empty() && e.UntilBetween.Empty() {
		return nil
	}
	return e
}

// Aligned reports whether Align accepts w.
func (g Grid) Aligned(w Window) bool { return g.Align(w) == nil }
