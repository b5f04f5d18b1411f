package timeline

import (
	"strconv"

	"github.com/bollhav/bollhav/state"
)

// Lane is one gated upstream drawn under the model's strip.
type Lane struct {
	// Name is the upstream's model name, shown on the lane's title line.
	Name string
	// Track holds the upstream's units; its Extent should be the
	// upstream's range, which THROUGH and WHOLE measure against.
	Track Track
	// Contract is the upstream's contract for the cursor's window; a zero
	// Contract.Window means View.Cursor.
	Contract Contract
}

// View is the model view's timeline as data: the axis (which holds the
// zoom and the scroll position, kept by the caller), the model's units, the
// cursor and the gated upstreams.
type View struct {
	Axis  Axis
	Model Track
	// Cursor is the window of the unit under the cursor; zero for none.
	Cursor state.Window
	// CursorLabel is written beside the cursor's pointer, e.g. the unit's
	// window and status.
	CursorLabel string
	Lanes       []Lane
	Styles      Styles
}

// Render draws the view in at most height lines, each exactly
// v.Axis.Width() cells: the ruler, the model's strip, the cursor line, then
// for each lane its title, its strip and its contract marks. Lanes that do
// not fit are counted on a last line ("… 2 more upstreams"); with fewer than
// three lines the model's strip comes first, then the ruler.
func Render(v View, height int) []string {
	a, st := v.Axis, v.Styles
	w := a.Width()
	if w == 0 || height <= 0 {
		return nil
	}
	strip := Strip(a, v.Model, v.Cursor, st)
	switch height {
	case 1:
		return []string{strip}
	case 2:
		return []string{Ruler(a, st), strip}
	}
	out := []string{Ruler(a, st), strip, CursorLine(a, v.Cursor, v.CursorLabel, st)}
	title := palette(st.Ruler)
	n, show := len(v.Lanes), len(v.Lanes)
	if room := height - len(out); 3*n > room {
		show = max(0, (room-1)/3) // keep a line to say how many are left out
	}
	for _, ln := range v.Lanes[:show] {
		c := ln.Contract
		if c.Window.Empty() {
			c.Window = v.Cursor
		}
		l := newLine(w, ' ')
		l.text(0, w, fit(ln.Name+" ("+c.Level.String()+")", w), 0)
		out = append(out, l.render(title), Strip(a, ln.Track, v.Cursor, st), Marks(a, ln.Track, c, st))
	}
	if show < n && len(out) < height {
		l := newLine(w, ' ')
		l.text(0, w, fit("… "+strconv.Itoa(n-show)+" more upstream"+plural(n-show), w), 0)
		out = append(out, l.render(title))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
