package tui

import (
	"strings"
	"unicode/utf8"
)

// safeFrame keeps what a frame may legitimately hold — printable text,
// newlines and SGR styling (ESC [ … m), which is all lipgloss writes — and
// drops every other escape sequence, control byte and invalid UTF-8. The
// frame carries strings from the store (a command's stderr kept as a unit's
// error, a blocked reason, an audit actor or argument) that a hostile or
// careless writer can fill with cursor movement, screen clears, OSC titles
// or clipboard writes; drawn raw, they would repaint or take over the
// viewer's terminal, locally and over SSH. A malformed sequence never eats
// a newline or the text after it: the frame's layout survives.
func safeFrame(s string) string {
	if frameIsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = escape(&b, s, i)
		case c == '\t':
			b.WriteByte(' ')
			i++
		case c == '\n':
			b.WriteByte(c)
			i++
		case c < 0x20 || c == 0x7f:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r < 0xa0) {
				i += size // invalid UTF-8, or a C1 control
				continue
			}
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// frameIsClean reports whether s needs no cleaning: valid UTF-8 with no
// control characters but newline and no C1 controls. (SGR needs ESC, so a
// styled frame is always cleaned; the check keeps plain ones cheap.)
func frameIsClean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0
	})
}

// escape handles the escape sequence at s[i] (an ESC), writing it to b
// when it is SGR, and returns the index after what it consumed.
func escape(b *strings.Builder, s string, i int) int {
	if i+1 >= len(s) {
		return i + 1
	}
	switch s[i+1] {
	case '[': // CSI: parameters and intermediates, then a final byte
		j := i + 2
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			if s[j] == 'm' && sgrParams(s[i+2:j]) {
				b.WriteString(s[i : j+1])
			}
			return j + 1
		}
		return j // malformed: drop the introducer and what it scanned, keep the rest
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: up to BEL or ST
		j := i + 2
		for j < len(s) {
			switch {
			case s[j] == 0x07:
				return j + 1
			case s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\':
				return j + 2
			case s[j] == 0x1b, s[j] == '\n':
				return j // unterminated: stop before the next sequence or line
			}
			j++
		}
		return j
	}
	if c := s[i+1]; c >= 0x20 && c <= 0x7e {
		return i + 2 // a two-byte escape
	}
	return i + 1 // a lone ESC
}

// sgrParams reports whether p is an SGR parameter list: digits, ; and :.
func sgrParams(p string) bool {
	for i := 0; i < len(p); i++ {
		if (p[i] < '0' || p[i] > '9') && p[i] != ';' && p[i] != ':' {
			return false
		}
	}
	return true
}
