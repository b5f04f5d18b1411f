package graphview

// Size is the whole picture's width and height in cells.
func (l *Layout) Size() (width, height int) { return l.width, l.height }

// Len is the number of nodes laid out.
func (l *Layout) Len() int { return len(l.nodes) }

// First is the id of the top-left node, a starting selection; ok is false
// for an empty graph.
func (l *Layout) First() (id int, ok bool) {
	for _, ly := range l.layers {
		for _, it := range ly {
			if n := l.items[it].node; n >= 0 {
				return l.nodes[n].ID, true
			}
		}
	}
	return 0, false
}

// Bounds is the box of node id in picture coordinates (its cross stub, when
// it has one, runs on to the right of it); ok is false for an unknown id.
func (l *Layout) Bounds(id int) (x, y, w, h int, ok bool) {
	ni, ok := l.byID[id]
	if !ok {
		return 0, 0, 0, 0, false
	}
	x, y, w, h = l.boxRect(&l.items[ni])
	return x, y, w, h, true
}

// NodeAt is the id of the node whose box or stub covers the picture cell
// (x, y), for a mouse click; ok is false when none does.
func (l *Layout) NodeAt(x, y int) (id int, ok bool) {
	for _, ly := range l.layers {
		for _, it := range ly {
			m := &l.items[it]
			if m.node < 0 {
				continue
			}
			bx, by, bw, bh := l.boxRect(m)
			if !l.lr {
				bw = m.w // with its cross stub
			}
			if x >= bx && x < bx+bw && y >= by && y < by+bh {
				return l.nodes[m.node].ID, true
			}
		}
	}
	return 0, false
}

// Neighbour is the node an arrow key moves the selection to: Left and Right
// the previous and next node of the same layer, Up and Down the node of the
// layer above or below whose box centre is nearest (the leftmost on a
// tie). It returns selected itself when there is nowhere to go, and the
// top-left node when selected is not in the graph.
func (l *Layout) Neighbour(selected int, dir Direction) int {
	ni, ok := l.byID[selected]
	if !ok {
		if id, ok := l.First(); ok {
			return id
		}
		return selected
	}
	if l.lr { // ↑/↓ along a column, ←/→ across the layers
		dir = [...]Direction{Up: Left, Down: Right, Left: Up, Right: Down}[dir]
	}
	m := &l.items[ni]
	ly := l.layers[m.layer]
	switch dir {
	case Left, Right:
		p := 0
		for p < len(ly) && ly[p] != ni {
			p++
		}
		step := 1
		if dir == Left {
			step = -1
		}
		for q := p + step; q >= 0 && q < len(ly); q += step {
			if n := l.items[ly[q]].node; n >= 0 {
				return l.nodes[n].ID
			}
		}
	case Up, Down:
		step := 1
		if dir == Up {
			step = -1
		}
		centre := 2*m.x + m.size // doubled, to stay in integers
		for li := m.layer + step; li >= 0 && li < len(l.layers); li += step {
			best, bestD := -1, 0
			for _, it := range l.layers[li] {
				o := &l.items[it]
				if o.node < 0 {
					continue
				}
				d := 2*o.x + o.size - centre
				if d < 0 {
					d = -d
				}
				if best < 0 || d < bestD {
					best, bestD = o.node, d
				}
			}
			if best >= 0 {
				return l.nodes[best].ID
			}
		}
	}
	return selected
}

// ScrollTo returns the scroll that keeps node selected in a width×height
// window, moving (scrollX, scrollY) as little as it can: the box with a row
// of context above and below when it fits, and its cross stub when that
// fits too. The result stays within the picture (never negative, never past
// its far edge where the picture is larger than the window).
func (l *Layout) ScrollTo(selected, width, height, scrollX, scrollY int) (int, int) {
	if ni, ok := l.byID[selected]; ok {
		m := &l.items[ni]
		x, y, w, h := l.boxRect(m)
		if !l.lr && m.w <= width {
			w = m.w // with its cross stub
		}
		if h+2 <= height {
			y, h = y-1, h+2
		}
		scrollX = keepIn(scrollX, x, w, width)
		scrollY = keepIn(scrollY, y, h, height)
	}
	return clampScroll(scrollX, l.width, width), clampScroll(scrollY, l.height, height)
}

// keepIn moves a window start s of size n the least so [at, at+size) is in
// view, its start first when it cannot all be.
func keepIn(s, at, size, n int) int {
	if at+size > s+n {
		s = at + size - n
	}
	if at < s {
		s = at
	}
	return s
}

func clampScroll(s, total, n int) int {
	return max(0, min(s, total-n))
}

// Width is the whole picture's width in cells.
func (l *Layout) Width() int { return l.width }
