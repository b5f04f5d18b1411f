package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/charmbracelet/x/ansi"
)

// Layout helpers: every line the UI draws goes through fit, so nothing ever
// wraps — a line too long for the terminal ends in "…" instead.

// ansiStrip removes styles: a selected row is drawn in one style.
func ansiStrip(s string) string { return ansi.Strip(s) }

// ansiCut drops the first n cells of s, keeping its styles.
func ansiCut(s string, n int) string { return ansi.Cut(s, n, width(s)) }

// ansiTrimLast drops the last cell of s, keeping its styles.
func ansiTrimLast(s string) string { return ansi.Cut(s, 0, max(0, width(s)-1)) }

// width is a string's width in cells, styles ignored. Plain ASCII, the
// common case of padding and blank lines, is counted without segmenting
// graphemes.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c == 0x1b || c < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// fit truncates s to w cells (ending in "…" when cut) and pads it with
// spaces to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n == w {
		return s
	}
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = width(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// clip truncates s to w cells without padding.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// clipLeft keeps the last w cells of s, starting with "…" when cut: a
// breadcrumb keeps its deepest part.
func clipLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if n := width(s); n > w {
		return ansi.TruncateLeft(s, n-w+1, "…")
	}
	return s
}

// listLine draws a list row in w cells: one cell for the cursor mark ("›"
// on the selected row, which is also drawn in the theme's Selected style,
// so the cursor shows without colour too), then the row in w-1 cells.
func listLine(t themes.Theme, selected bool, line string, w int) string {
	if selected {
		return t.Selected.Render(fit("›"+ansiStrip(line), w))
	}
	return fit(" "+line, w)
}

// padLeft right-aligns s in w cells.
func padLeft(s string, w int) string {
	if n := w - width(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return clip(s, w)
}

// spread puts left and right on one line of w cells, right-aligned right;
// left is cut first when both do not fit.
func spread(left, right string, w int) string {
	rw := width(right)
	if rw >= w {
		return fit(right, w)
	}
	return fit(left, w-rw) + right
}

// emptyList is what a filterable list shows in place of its rows: empty
// when it has none, or, when a filter query hides them all, that no noun
// matches it and how to clear it, worded alike in every list.
func emptyList(empty, noun, query string) string {
	if query == "" {
		return empty
	}
	return fmt.Sprintf("no %s matches %q (esc clears the filter)", noun, query)
}

// column is one column of a table: its width and whether it aligns right.
type column struct {
	w     int
	right bool
}

// row joins cells into columns one space apart; the last column takes what
// is left of w.
func row(w int, cols []column, cells ...string) string {
	var b strings.Builder
	used := 0
	for i, c := range cols {
		if i >= len(cells) {
			break
		}
		if i > 0 {
			b.WriteByte(' ')
			used++
		}
		cw := c.w
		if i == len(cols)-1 || cw <= 0 {
			cw = max(0, w-used)
		}
		if c.right {
			b.WriteString(padLeft(cells[i], cw))
		} else {
			b.WriteString(fit(cells[i], cw))
		}
		used += cw
	}
	return fit(b.String(), w)
}

// windowText prints a unit window compactly: "2026-01-01 05:00–06:00" when
// both ends share a day, dates alone for whole days, and "(existence row)"
// for a timeless model's zero window. Times are UTC, like the CLI's; a
// view that knows the model says it with common.window, which follows the
// time toggle.
func windowText(w state.Window) string { return windowTextIn(w, time.UTC) }

// windowTextIn is windowText in loc: a day of a model in Europe/Stockholm
// reads as its date there, not as 23:00–23:00 UTC.
func windowTextIn(w state.Window, loc *time.Location) string {
	if w.IsZero() {
		return "(existence row)"
	}
	s, u := w.Since.In(loc), w.Until.In(loc)
	midnight := func(t time.Time) bool {
		return t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
	}
	switch {
	case midnight(s) && midnight(u):
		if u.Sub(s) == 24*time.Hour {
			return s.Format("2006-01-02")
		}
		return s.Format("2006-01-02") + " – " + u.Format("2006-01-02")
	case s.Format("2006-01-02") == u.Format("2006-01-02"):
		return s.Format("2006-01-02 15:04") + "–" + u.Format("15:04")
	case u.Sub(s) <= 24*time.Hour && midnight(u) && u.Sub(s) > 0:
		return s.Format("2006-01-02 15:04") + "–24:00"
	}
	return s.Format("2006-01-02 15:04") + " – " + u.Format("2006-01-02 15:04")
}

// windowsText prints several windows compactly: windows within one day
// share it ("2026-01-01 05:00–06:00, 07:00–08:00").
func windowsText(ws []state.Window) string { return windowsTextIn(ws, time.UTC) }

// windowsTextIn is windowsText in loc.
func windowsTextIn(ws []state.Window, loc *time.Location) string {
	var b strings.Builder
	day := ""
	for i, w := range ws {
		if i > 0 {
			b.WriteString(", ")
		}
		t := windowTextIn(w, loc)
		if d, rest, ok := strings.Cut(t, " "); ok && d == day && !strings.Contains(rest, " ") {
			t = rest
		} else if ok && !strings.Contains(rest, " ") {
			day = d
		} else {
			day = ""
		}
		b.WriteString(t)
	}
	return b.String()
}

// ageText prints how long ago t was at now: "3h ago", "-" when nil.
func ageText(now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return durationText(now.Sub(*t))
}

// durationText prints d as "3h12m ago" or "in 5m".
func durationText(d time.Duration) string {
	if d < 0 {
		return "in " + state.RoughDuration(-d)
	}
	return state.RoughDuration(d) + " ago"
}

// elapsedText prints how long something took, to the precision a short
// run needs: "40ms", "3.5s", "42s", then state.RoughDuration's "5m12s" —
// a run of a second is not "0s".
func elapsedText(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return state.RoughDuration(d)
}

// count prints n with thousands separators: 1,000,000.
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plural is "1 unit" or "3 units".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return count(n) + " " + many
}
