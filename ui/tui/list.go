package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// cursor is a scrolling selection over n rows of which height are visible.
// Views keep their rows; the cursor only says which are on screen, so a
// view renders offset..offset+height and nothing else, however many rows
// there are.
type cursor struct {
	n, pos, offset, height int
	// recentre puts the cursor mid-page at the next
	// setHeight: a jump lands with context above it.
	recentre bool
}

// setLen sets the row count, keeping the cursor in range.
func (c *cursor) setLen(n int) {
	c.n = n
	c.clamp()
}

// setHeight sets how many rows are visible.
func (c *cursor) setHeight(h int) {
	c.height = max(1, h)
	if c.recentre {
		c.recentre = false
		c.offset = c.pos - c.height/2
	}
	c.clamp()
}

func (c *cursor) clamp() {
	c.pos = min(max(c.pos, 0), max(c.n-1, 0))
	if c.height <= 0 {
		c.height = 1
	}
	if c.pos < c.offset {
		c.offset = c.pos
	}
	if c.pos >= c.offset+c.height {
		c.offset = c.pos - c.height + 1
	}
	c.offset = min(max(c.offset, 0), max(c.n-c.height, 0))
}

// move moves the cursor by d rows.
func (c *cursor) move(d int) {
	c.pos += d
	c.clamp()
}

// moveTo puts the cursor on row i.
func (c *cursor) moveTo(i int) {
	c.pos = i
	c.clamp()
}

// moveToFirst puts the cursor on the first of rows 0 to n-1 that match
// takes, and reports whether there was one; with none it stays.
func (c *cursor) moveToFirst(n int, match func(i int) bool) bool {
	for i := range n {
		if match(i) {
			c.moveTo(i)
			return true
		}
	}
	return false
}

// jumpTo puts the cursor on row i, with rows above it in view.
func (c *cursor) jumpTo(i int) {
	c.moveTo(i)
	c.recentre = true
}

// scroll moves the visible page by d rows, dragging the cursor along when
// it would leave the page: the mouse wheel.
func (c *cursor) scroll(d int) {
	c.offset = min(max(c.offset+d, 0), max(c.n-c.height, 0))
	if c.pos < c.offset {
		c.pos = c.offset
	}
	if c.pos >= c.offset+c.height {
		c.pos = c.offset + c.height - 1
	}
	c.clamp()
}

// visible is the half-open range of rows on screen.
func (c *cursor) visible() (from, to int) {
	return c.offset, min(c.offset+c.height, c.n)
}

// handleKey moves the cursor for the navigation keys and reports whether
// msg was one.
func (c *cursor) handleKey(k keyMap, msg tea.KeyPressMsg) bool {
	switch {
	case key.Matches(msg, k.Up):
		c.move(-1)
	case key.Matches(msg, k.Down):
		c.move(1)
	case key.Matches(msg, k.PageUp):
		c.move(-c.height)
	case key.Matches(msg, k.PageDown):
		c.move(c.height)
	case key.Matches(msg, k.Top):
		c.moveTo(0)
	case key.Matches(msg, k.Bottom):
		c.moveTo(c.n - 1)
	default:
		return false
	}
	return true
}

// handleWheel scrolls for a mouse wheel message and reports whether it was
// one.
func (c *cursor) handleWheel(msg tea.MouseWheelMsg) bool {
	switch msg.Button {
	case tea.MouseWheelUp:
		c.scroll(-3)
	case tea.MouseWheelDown:
		c.scroll(3)
	default:
		return false
	}
	return true
}

// listQuery is the text a list view filters its rows by (what / typed),
// kept across reloads; the view filters again when it is set.
type listQuery struct{ query string }

func (q *listQuery) filter() string { return q.query }

// matching fills idx (its storage reused) with the indexes below n whose
// rows match the query, lower-cased for match; an empty query keeps all.
func matching(idx []int, n int, query string, match func(i int, q string) bool) []int {
	q := strings.ToLower(query)
	idx = idx[:0]
	for i := range n {
		if q == "" || match(i, q) {
			idx = append(idx, i)
		}
	}
	return idx
}

// wheelOffset is a text view's top line after a mouse wheel message: three
// lines up, not above the first, or three down, not past last; any other
// message leaves it.
func wheelOffset(msg tea.MouseWheelMsg, offset, last int) int {
	switch msg.Button {
	case tea.MouseWheelUp:
		return max(0, offset-3)
	case tea.MouseWheelDown:
		return min(last, offset+3)
	}
	return offset
}

// scrollHint is "12–30 of 1,000" for a list longer than its page, else "".
func (c *cursor) scrollHint() string {
	if c.n <= c.height {
		return ""
	}
	from, to := c.visible()
	return count(from+1) + "–" + count(to) + " of " + count(c.n)
}
