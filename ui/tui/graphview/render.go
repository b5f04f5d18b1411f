package graphview

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/graph"
)

// Line directions a cell's routes take: a vertical run has N and S, a
// horizontal one E and W.
const (
	dirN uint8 = 1 << iota
	dirS
	dirE
	dirW
)

// boxChars draw a node's box.
type boxChars struct{ tl, tr, bl, br, h, v, stem, stemR string }

// chars are the characters of one drawing mode.
type chars struct {
	v, h, vCond, hCond string     // straight runs of SUCCESS and of conditional edges
	junction           [16]string // corners and junctions, by direction mask
	box, selBox        boxChars
	arrow              string // an in-port on a box's top border
	arrowR             string // an in-port on a box's left border (left to right)
	marker             string // before the selected node's glyph
	stubArrow          string // a cross-pipeline stub's head
}

var unicodeChars = chars{
	v: "│", h: "─", vCond: "╎", hCond: "╌",
	junction: [16]string{
		" ", "│", "│", "│",
		"─", "└", "┌", "├",
		"─", "┘", "┐", "┤",
		"─", "┴", "┬", "┼",
	},
	box:    boxChars{"┌", "┐", "└", "┘", "─", "│", "┬", "├"},
	selBox: boxChars{"┏", "┓", "┗", "┛", "━", "┃", "┯", "┠"},
	arrow:  "▼", arrowR: "▶", marker: "▸", stubArrow: "◄",
}

var asciiChars = chars{
	v: "|", h: "-", vCond: ":", hCond: ".",
	junction: [16]string{
		" ", "|", "|", "|",
		"-", "+", "+", "+",
		"-", "+", "+", "+",
		"-", "+", "+", "+",
	},
	box:    boxChars{"+", "+", "+", "+", "-", "|", "+", "+"},
	selBox: boxChars{"*", "*", "*", "*", "=", "|", "+", "+"},
	arrow:  "v", arrowR: ">", marker: ">", stubArrow: "<",
}

func charsFor(ascii bool) *chars {
	if ascii {
		return &asciiChars
	}
	return &unicodeChars
}

// Style slots of a render.
const (
	stPlain uint8 = iota
	stSelBox
	stLabel
	stSelLabel
	stDetail
	stSelDetail
	stSelFill
	stEdge
	stCond
	stCross
	stHealth                                // + Health
	stClass   = stHealth + uint8(numHealth) // + Edge.Class - 1
	numStyles = stClass + maxClasses
)

// slot is a style reduced to the escape sequences around a run of text.
type slot struct {
	prefix, suffix string
	plain, ready   bool
}

// clean keeps only s's colours and text attributes, so no style can change
// a cell's width, and turns what is left into the sequences lipgloss writes
// around a run ("x" stands in for the run: SGR sequences hold no letters
// but m).
func clean(s lipgloss.Style) slot {
	n := lipgloss.NewStyle()
	plain := true
	isColor := func(c color.Color) bool {
		if c == nil {
			return false
		}
		_, none := c.(lipgloss.NoColor)
		return !none
	}
	if c := s.GetForeground(); isColor(c) {
		n, plain = n.Foreground(c), false
	}
	if c := s.GetBackground(); isColor(c) {
		n, plain = n.Background(c), false
	}
	if s.GetUnderline() {
		n, plain = n.UnderlineStyle(s.GetUnderlineStyle()), false
		if c := s.GetUnderlineColor(); isColor(c) {
			n = n.UnderlineColor(c)
		}
	}
	if s.GetBold() {
		n, plain = n.Bold(true), false
	}
	if s.GetItalic() {
		n, plain = n.Italic(true), false
	}
	if s.GetStrikethrough() {
		n, plain = n.Strikethrough(true), false
	}
	if s.GetReverse() {
		n, plain = n.Reverse(true), false
	}
	if s.GetBlink() {
		n, plain = n.Blink(true), false
	}
	if s.GetFaint() {
		n, plain = n.Faint(true), false
	}
	if plain {
		return slot{plain: true, ready: true}
	}
	r := n.Render("x")
	i := strings.IndexByte(r, 'x')
	if i < 0 {
		return slot{plain: true, ready: true}
	}
	return slot{prefix: r[:i], suffix: r[i+1:], ready: true}
}

// slot returns style slot i of st, once the selected node's health is
// known.
func (st *Styles) slot(i uint8, selHealth Health) slot {
	switch i {
	case stPlain:
		return slot{plain: true, ready: true}
	case stSelBox:
		return clean(st.Selected.Inherit(st.Health(selHealth)))
	case stLabel:
		return clean(st.Label)
	case stSelLabel:
		return clean(st.Selected.Inherit(st.Label))
	case stDetail:
		return clean(st.Detail)
	case stSelDetail:
		return clean(st.Selected.Inherit(st.Detail))
	case stSelFill:
		return clean(st.Selected)
	case stEdge:
		return clean(st.Edge)
	case stCond:
		return clean(st.CondEdge)
	case stCross:
		return clean(st.Cross)
	}
	if i >= stClass {
		if c := int(i - stClass); c < len(st.Classes) {
			return clean(st.Classes[c])
		}
		return clean(st.Edge)
	}
	return clean(st.Health(Health(i - stHealth)))
}

// cell is one cell of the visible window: text (s, or the right half of a
// wide cluster when cont) or, failing that, the routes through it.
type cell struct {
	ho, vo int32  // owners of the horizontal and the vertical routes
	s      uint32 // text, as an index in the layout's strings; 0 for none
	st     uint8
	hm, vm uint8
	ht, vt uint8 // route kinds, ekind.cellByte: dashed or not, and the class
	cont   bool
}

// grid is the visible window being drawn, in picture coordinates offset by
// (sx, sy).
type grid struct {
	w, h, sx, sy int
	cells        []cell
}

func (g *grid) seg(s seg) {
	if s.x0 == s.x1 {
		gx := s.x0 - g.sx
		if gx < 0 || gx >= g.w {
			return
		}
		for y := max(s.y0, g.sy); y <= min(s.y1, g.sy+g.h-1); y++ {
			if m := along(y, s.y0, s.y1, dirN, dirS); m != 0 {
				c := &g.cells[(y-g.sy)*g.w+gx]
				route(&c.vm, &c.vt, &c.vo, m, s)
			}
		}
		return
	}
	gy := s.y0 - g.sy
	if gy < 0 || gy >= g.h {
		return
	}
	for x := max(s.x0, g.sx); x <= min(s.x1, g.sx+g.w-1); x++ {
		if m := along(x, s.x0, s.x1, dirW, dirE); m != 0 {
			c := &g.cells[gy*g.w+x-g.sx]
			route(&c.hm, &c.ht, &c.ho, m, s)
		}
	}
}

// along is what a segment from a to b draws at p on it: toward a (back)
// unless p is a, toward b (ahead) unless p is b.
func along(p, a, b int, back, ahead uint8) uint8 {
	var m uint8
	if p > a {
		m |= back
	}
	if p < b {
		m |= ahead
	}
	return m
}

// route adds the directions m of s to one of a cell's two routes (its
// directions, type and owner): the type of the first segment through it,
// or of a success one, which wins over a conditional one.
func route(dirs, typ *uint8, owner *int32, m uint8, s seg) {
	if *dirs == 0 || !s.typ.cond() {
		*typ = s.typ.cellByte()
	}
	*dirs |= m
	*owner = int32(s.owner)
}

// unwide turns a wide cluster that cell gx is part of into spaces, before gx
// is overwritten.
func unwide(row []cell, gx int) {
	if row[gx].cont {
		row[gx].cont = false
		if gx > 0 {
			row[gx-1].s = space
		}
	}
	if gx+1 < len(row) && row[gx+1].cont {
		row[gx+1].cont = false
		row[gx+1].s = space
	}
}

// put writes a cluster w cells wide at (x, y); a wide one cut by the
// window's edge leaves spaces.
func (g *grid) put(x, y int, s uint32, w int, st uint8) {
	gy := y - g.sy
	if gy < 0 || gy >= g.h {
		return
	}
	gx := x - g.sx
	row := g.cells[gy*g.w : (gy+1)*g.w]
	if w == 2 && gx >= 0 && gx+1 < g.w {
		unwide(row, gx)
		unwide(row, gx+1)
		row[gx].s, row[gx].st = s, st
		row[gx+1].s, row[gx+1].st, row[gx+1].cont = 0, st, true
		return
	}
	if w == 2 {
		s = space
		g.put(x+1, y, s, 1, st)
	}
	if gx >= 0 && gx < g.w {
		unwide(row, gx)
		row[gx].s, row[gx].st = s, st
	}
}

func (g *grid) text(x, y int, t text, st uint8) int {
	for _, c := range t.cl {
		g.put(x, y, c.s, c.w, st)
		x += c.w
	}
	return x
}

// lineChar is what a cell without text shows: its routes' corner or
// junction, or, where routes of two sources cross, the vertical one
// unbroken, so a crossing never reads as a branch.
func (c *cell) lineChar(ch *chars) (string, uint8) {
	switch {
	case c.hm == 0 && c.vm == 0:
		return " ", stPlain
	case c.hm == 0 || (c.vm != 0 && c.ho != c.vo):
		if c.vt&1 == 0 {
			return ch.v, byteSlot(c.vt)
		}
		return ch.vCond, byteSlot(c.vt)
	case c.vm == 0:
		if c.ht&1 == 0 {
			return ch.h, byteSlot(c.ht)
		}
		return ch.hCond, byteSlot(c.ht)
	}
	// A junction of one source: solid when either run is.
	if c.vt&1 == 0 {
		return ch.junction[c.hm|c.vm], byteSlot(c.vt)
	}
	return ch.junction[c.hm|c.vm], byteSlot(c.ht)
}

// Render draws the window of the picture whose top-left corner is
// (scrollX, scrollY): exactly height lines of exactly width cells. The node
// with id selected is highlighted (a heavy box and a "▸" before its glyph,
// plus st.Selected); an id not in the graph, such as -1, selects nothing.
// Only what falls in the window is drawn, so its cost follows the window's
// size, not the graph's. A negative scroll leaves blank space above or to
// the left, which centres a small graph.
func (l *Layout) Render(width, height, selected, scrollX, scrollY int, st Styles) []string {
	if height <= 0 {
		return nil
	}
	out := make([]string, height)
	if width <= 0 {
		return out
	}
	g := &grid{w: width, h: height, sx: scrollX, sy: scrollY, cells: make([]cell, width*height)}
	ch := charsFor(st.ASCII)
	sel, selHealth := -1, Unknown
	if ni, ok := l.byID[selected]; ok {
		sel, selHealth = ni, l.nodes[ni].Health
	}
	// Bands run across layers: rows top to bottom, columns left to right.
	across, span, along, alongSpan := scrollY, height, scrollX, width
	if l.lr {
		across, span, along, alongSpan = scrollX, width, scrollY, height
	}
	visible := func(b *band) bool { return b.y1 > across && b.y0 < across+span }
	for bi := range l.bands {
		if b := &l.bands[bi]; visible(b) {
			for _, s := range b.segs {
				g.seg(l.real(s))
			}
		}
	}
	for bi := range l.bands {
		b := &l.bands[bi]
		if !visible(b) {
			continue
		}
		for _, mk := range b.marks {
			for i, c := range l.markText(mk.typ).cl {
				x, y := l.realXY(mk.x, mk.y+i)
				g.put(x, y, c.s, c.w, markSlot(mk.typ))
			}
		}
		if b.layer < 0 {
			continue
		}
		for _, it := range l.layers[b.layer] {
			m := &l.items[it]
			if m.node >= 0 && m.x < along+alongSpan && m.x+m.w > along {
				l.drawBox(g, m, m.node == sel, ch)
			}
		}
	}
	var slots [numStyles]slot
	var line strings.Builder
	for y := range height {
		line.Reset()
		line.Grow(width * 3)
		cur := stPlain
		open := false
		row := g.cells[y*width : (y+1)*width]
		for x := range row {
			c := &row[x]
			if c.cont {
				continue
			}
			var s string
			sl := c.st
			if c.s != 0 {
				s = l.str(c.s)
			} else {
				s, sl = c.lineChar(ch)
			}
			if sl != cur {
				if open {
					line.WriteString(slots[cur].suffix)
				}
				if !slots[sl].ready {
					slots[sl] = st.slot(sl, selHealth)
				}
				line.WriteString(slots[sl].prefix)
				open, cur = !slots[sl].plain, sl
			}
			line.WriteString(s)
		}
		if open {
			line.WriteString(slots[cur].suffix)
		}
		out[y] = line.String()
	}
	return out
}

// space is the index of " ".
var space = sid(" ")

// real is a segment worked out along and across layers, in the picture's
// rows and columns.
func (l *Layout) real(s seg) seg {
	if l.lr {
		s.x0, s.y0, s.x1, s.y1 = s.y0, s.x0, s.y1, s.x1
	}
	return s
}

// realXY is a cell along and across layers in the picture's columns and
// rows.
func (l *Layout) realXY(x, y int) (int, int) {
	if l.lr {
		return y, x
	}
	return x, y
}

// boxRect is m's box in the picture: left, top, width, height.
func (l *Layout) boxRect(m *item) (x, y, w, h int) {
	if l.lr {
		return l.layerY[m.layer], m.x, m.boxW, m.size
	}
	return m.x, l.layerY[m.layer], m.boxW, l.boxRows
}

// drawBox draws a node's box at its place, and its cross stub (top to
// bottom only). Top to bottom the stem leaves the bottom border and the
// in-ports are on the top one; left to right, the right border and the
// left one.
func (l *Layout) drawBox(g *grid, m *item, selected bool, ch *chars) {
	n := &l.nodes[m.node]
	x, y, w, h := l.boxRect(m)
	right, bottom := x+w-1, y+h-1
	hl := n.Health
	if hl < 0 || hl >= numHealth {
		hl = Unknown
	}
	bc, box, glyph := ch.box, stHealth+uint8(hl), stHealth+uint8(hl)
	lab, det, fill, marker := stLabel, stDetail, stPlain, space
	if selected {
		bc, box, glyph = ch.selBox, stSelBox, stSelBox
		lab, det, fill, marker = stSelLabel, stSelDetail, stSelFill, sid(ch.marker)
	}
	hz, vt := sid(bc.h), sid(bc.v)
	for cx := x + 1; cx < right; cx++ {
		g.put(cx, y, hz, 1, box)
		g.put(cx, bottom, hz, 1, box)
	}
	for cy := y + 1; cy < bottom; cy++ {
		g.put(x, cy, vt, 1, box)
		g.put(right, cy, vt, 1, box)
		for cx := x + 1; cx < right; cx++ {
			g.put(cx, cy, space, 1, fill)
		}
	}
	g.put(x, y, sid(bc.tl), 1, box)
	g.put(right, y, sid(bc.tr), 1, box)
	g.put(x, bottom, sid(bc.bl), 1, box)
	g.put(right, bottom, sid(bc.br), 1, box)
	switch {
	case len(m.down) > 0 && l.lr:
		g.put(right, y+m.port, sid(bc.stemR), 1, box)
	case len(m.down) > 0:
		g.put(x+m.port, bottom, sid(bc.stem), 1, box)
	}
	for _, a := range m.arrows {
		if l.lr {
			g.put(x, a.x, sid(ch.arrowR), 1, edgeSlot(a.typ))
		} else {
			g.put(a.x, y, sid(ch.arrow), 1, edgeSlot(a.typ))
		}
	}
	mid := y + 1
	g.put(x+1, mid, marker, 1, box)
	g.put(x+2, mid, sid(hl.Glyph(ch == &asciiChars)), 1, glyph)
	cx := g.text(x+4, mid, n.label, lab)
	if n.detail.w > 0 {
		g.text(cx+1, mid, n.detail, det)
	}
	if l.boxRows > boxH {
		g.text(x+4, y+2, n.sub, det)
	}
	if len(n.Cross) == 0 || l.lr {
		return
	}
	sx := right + 1
	g.put(sx, mid, sid(ch.stubArrow), 1, stCross)
	line := ch.h
	if n.stubType != graph.Success {
		line = ch.hCond
	}
	g.put(sx+1, mid, sid(line), 1, stCross)
	sx += 2
	if lt := edgeLetter(n.stubType); lt != "" {
		g.put(sx, mid, sid(lt), 1, stCross)
		sx++
	}
	g.put(sx, mid, space, 1, stPlain)
	sx = g.text(sx+1, mid, n.stub, stCross)
	g.text(sx, mid, n.stubMore, stCross)
}
