package timeline

import (
	"slices"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"

	"github.com/bollhav/bollhav/state"
)

// line is one row of terminal cells being drawn: a rune and a style index
// per cell. A wide rune takes two cells, the second holding cont.
type line struct {
	r []rune
	k []uint8
}

const cont = -1

func newLine(w int, fill rune) line {
	l := line{r: make([]rune, w), k: make([]uint8, w)}
	for i := range l.r {
		l.r[i] = fill
	}
	return l
}

// set writes a one-cell glyph at col, if col is on the line.
func (l line) set(col int, r rune, key uint8) {
	if col >= 0 && col < len(l.r) {
		l.r[col], l.k[col] = r, key
	}
}

// text writes s from col, cell by cell, stopping before the line's end or
// limit, whichever comes first; it returns the column after the last cell
// written. Zero-width runes are dropped and a wide rune that does not fit
// is left out, so the line never grows.
func (l line) text(col, limit int, s string, key uint8) int {
	limit = min(limit, len(l.r))
	for _, r := range s {
		w := 1
		if r >= utf8.RuneSelf {
			w = lipgloss.Width(string(r))
		}
		if w == 0 {
			continue
		}
		if col < 0 || col+w > limit {
			break
		}
		l.r[col], l.k[col] = r, key
		if w == 2 {
			l.r[col+1], l.k[col+1] = cont, key
		}
		col += w
	}
	return col
}

// render draws the line, painting each run of cells that share a style
// key with style(key); a key's style is looked up and prepared once.
func (l line) render(style func(key uint8) lipgloss.Style) string {
	var b strings.Builder
	b.Grow(len(l.r)*4 + 64)
	var paints [256]*paint
	for i := 0; i < len(l.r); {
		j := i + 1
		for j < len(l.r) && l.k[j] == l.k[i] {
			j++
		}
		p := paints[l.k[i]]
		if p == nil {
			p = newPaint(style(l.k[i]))
			paints[l.k[i]] = p
		}
		p.write(&b, l.r[i:j])
		i = j
	}
	return b.String()
}

func writeRunes(b *strings.Builder, rs []rune) {
	for _, r := range rs {
		if r != cont {
			b.WriteRune(r)
		}
	}
}

// palette returns a style lookup over a fixed list; keys past its end draw
// plain.
func palette(styles ...lipgloss.Style) func(uint8) lipgloss.Style {
	return func(k uint8) lipgloss.Style {
		if int(k) < len(styles) {
			return styles[k]
		}
		return lipgloss.Style{}
	}
}

// paint applies one style to runs of text. lipgloss's Render costs about
// a microsecond even for an empty style, and a strip has up to one run per
// column, so a style that turns out to wrap any text in the same two
// escape sequences is rendered once, on a probe, and the sequences are
// reused; any other style is rendered run by run.
type paint struct {
	style      lipgloss.Style
	pre, post  string
	plain, fix bool
}

// probe is private-use runes around a space, so that a style that treats
// spaces apart (underlines that skip them) is caught.
const probe = "\ue000 \ue000"

func newPaint(s lipgloss.Style) *paint {
	p := &paint{style: clean(s)}
	out := p.style.Render(probe)
	if out == probe {
		p.plain = true
		return p
	}
	if i := strings.Index(out, probe); i >= 0 {
		pre, post := out[:i], out[i+len(probe):]
		if p.style.Render("\ue000") == pre+"\ue000"+post {
			p.pre, p.post, p.fix = pre, post, true
		}
	}
	return p
}

func (p *paint) write(b *strings.Builder, rs []rune) {
	switch {
	case p.plain:
		writeRunes(b, rs)
	case p.fix:
		b.WriteString(p.pre)
		writeRunes(b, rs)
		b.WriteString(p.post)
	default:
		var run strings.Builder
		writeRunes(&run, rs)
		b.WriteString(p.style.Render(run.String()))
	}
}

// fit truncates s to width cells with an ellipsis.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= width {
		return s
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := lipgloss.Width(string(r))
		if w+rw > width-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return b.String() + "…"
}

// Strip draws a model's coverage on the axis: one glyph per column, the
// glyph and colour of the worst status inside the column's part of its
// bucket (Axis.Part; see Order), the
// cursor's columns in the Cursor style. cursor is the window under the
// cursor — the downstream unit, or the same instant on an upstream's strip;
// a zero window draws no cursor. The line is exactly a.Width() cells; a
// frame costs O(width · log units) however many units the track holds and
// however coarse the zoom.
func Strip(a Axis, t Track, cursor state.Window, st Styles) string {
	w := a.Width()
	if w == 0 {
		return ""
	}
	g := st.glyphs()
	l := newLine(w, ' ')
	a.ranks(t, func(c int, r rank) { l.set(c, g.Of(rankStatus[r]), uint8(r)) })
	if c0, c1, ok := a.columns(cursor); ok {
		for c := max(c0, 0); c <= min(c1, w-1); c++ {
			l.k[c] += uint8(nRanks)
		}
	}
	return l.render(func(k uint8) lipgloss.Style {
		s := st.Status[rankStatus[k%uint8(nRanks)]]
		if k >= uint8(nRanks) {
			s = clean(st.Cursor).Inherit(clean(s))
		}
		return s
	})
}

// Ruler draws time labels for the axis, exactly a.Width() cells: each label
// starts at the column that holds its instant, in the axis's time zone.
// The spacing adapts to the zoom — hours ("06:00", with the date "Mar 10"
// at midnight), days or weeks ("Mar 10"), quarters or months ("2026-04"),
// years ("2027") — so labels never touch; one that would not fit whole at
// the right edge is left out.
func Ruler(a Axis, st Styles) string {
	w := a.Width()
	if w == 0 {
		return ""
	}
	l := newLine(w, ' ')
	next := 0
	for _, tk := range ticks(a) {
		col := a.Column(tk.at)
		if col < next || col+len(tk.label) > w {
			continue
		}
		next = l.text(col, w, tk.label, 1) + 1
	}
	return l.render(palette(lipgloss.Style{}, st.Ruler))
}

// CursorLine draws the line under a strip that points at the cursor: the
// Cursor glyph under each of its columns and label beside them (right when
// it fits, else left, else cut short). A cursor off-screen is shown by the
// Before or After glyph at that edge.
func CursorLine(a Axis, cursor state.Window, label string, st Styles) string {
	w := a.Width()
	if w == 0 {
		return ""
	}
	g := st.glyphs()
	l := newLine(w, ' ')
	c0, c1, ok := a.columns(cursor)
	if !ok {
		l.text(0, w, fit(label, w), 1)
		return l.render(palette(lipgloss.Style{}, st.Ruler))
	}
	switch {
	case c1 < 0:
		l.set(0, g.Before, 0)
		c0, c1 = 0, 0
	case c0 >= w:
		l.set(w-1, g.After, 0)
		c0, c1 = w-1, w-1
	default:
		c0, c1 = max(c0, 0), min(c1, w-1)
		for c := c0; c <= c1; c++ {
			l.set(c, g.Cursor, 0)
		}
	}
	place(l, c0, c1, []string{label}, 1)
	return l.render(palette(st.Cursor, st.Ruler))
}

// place writes the first of the labels that fits whole beside the marked
// columns [c0, c1] — right of them, else left — or else the first label cut
// short into the wider side; with no room on either side, the last label
// overwrites the right end of the line.
func place(l line, c0, c1 int, labels []string, key uint8) {
	w := len(l.r)
	right := w - (c1 + 2) // cells from c1+2 to the end
	left := c0 - 1        // cells from 0 to c0-2
	for _, s := range labels {
		n := lipgloss.Width(s)
		switch {
		case n == 0:
			return
		case n <= right:
			l.text(c1+2, w, s, key)
			return
		case n <= left:
			l.text(c0-1-n, c0-1, s, key)
			return
		}
	}
	if len(labels) == 0 {
		return
	}
	if room := max(left, right); room >= 8 {
		s := fit(labels[0], room)
		if right >= left {
			l.text(c1+2, w, s, key)
		} else {
			l.text(0, c0-1, s, key)
		}
		return
	}
	s := fit(labels[len(labels)-1], w-1)
	n := lipgloss.Width(s)
	if n == 0 {
		return
	}
	l.set(w-n-1, ' ', key)
	l.text(w-n, w, s, key)
}

// LegendFor is Legend that, when not every entry fits, keeps the entries
// of the statuses shown (Present), the worst first (Order), and the others
// only when every shown one fits: a narrow terminal still explains the
// stale or failed cells on screen, and never a glyph that is not there in
// place of one that is. Entries stay in Statuses order.
func LegendFor(st Styles, width int, shown []Status) string {
	if width <= 0 {
		return ""
	}
	g := st.glyphs()
	entry := func(s Status) string { return string(g.Of(s)) + " " + string(s) }
	keep := map[Status]bool{}
	used := -2 // no gap before the first entry
	take := func(s Status) bool {
		n := lipgloss.Width(entry(s)) + 2
		if used+n > width {
			return false
		}
		keep[s], used = true, used+n
		return true
	}
	all := true
	for _, s := range Order {
		if slices.Contains(shown, s) {
			all = take(s) && all
		}
	}
	if all {
		for _, s := range Statuses {
			if !slices.Contains(shown, s) && !take(s) {
				break
			}
		}
	}
	l := newLine(width, ' ')
	col := 0
	for _, s := range Statuses {
		if keep[s] {
			col = l.text(col, width, entry(s), uint8(rankOf(s))) + 2
		}
	}
	return l.render(func(k uint8) lipgloss.Style { return st.Status[rankStatus[k]] })
}

// Present lists the statuses the tracks' strips draw on the axis, in
// Statuses order (outside is not one): what a legend must explain first.
// It costs O(width · log units) per track, as a strip does.
func Present(a Axis, tracks ...Track) []Status {
	var seen [nRanks]bool
	for _, t := range tracks {
		a.ranks(t, func(_ int, r rank) { seen[r] = true })
	}
	var out []Status
	for _, s := range Statuses {
		if seen[rankOf(s)] {
			out = append(out, s)
		}
	}
	return out
}
